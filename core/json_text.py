"""JSON text of plain documents (dicts, lists, tuples, str, int, float, bool, None), fast.

The standard library's encoder spends about 0.1 s on the 7 MB document of a 1,000-node summary;
orjson writes the same bytes in a tenth of that. "The same" is checked, not assumed: orjson
spells a float from 1e-9 up to 1e-4 differently (``0.00001``, ``1e-6`` where Python writes
``1e-05``, ``1e-06``), and refuses what the standard library accepts (integers past 64 bits,
non-string keys, lone surrogates). Such documents go to the standard library, so the text is
always what ``json.dumps(..., ensure_ascii=False, allow_nan=False)`` writes, with one exception:
orjson writes NaN and infinities as ``null`` where the standard library raises. Summaries never
hold them (the sample screen leaves such values out).
"""

from __future__ import annotations

import json
import re

import orjson

# orjson's spellings of the floats it writes differently: "0.00001" (Python: "1e-05") and a
# one-digit exponent, "1e-6" (Python: "1e-06"), which ends a number, so a delimiter follows (a
# UUID's "7e-6" does not). A string holding one of them only costs the slower encoder.
_FIXED_SMALL_FLOAT = re.compile(rb"0\.0000[1-9]")
_SHORT_NEGATIVE_EXPONENT = re.compile(rb"e-[6-9](?=[,\]}\n]|\Z)")
_SHORT_EXPONENTS = (b"e-6", b"e-7", b"e-8", b"e-9")
# Types orjson would write but the standard library refuses: leave them to raise there.
_STRICT = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME


def dumps(document: object, *, pretty: bool = False) -> str:
    """``document`` as strict JSON: one compact line, or indented by two if ``pretty``."""
    text = dumps_utf8(document, pretty=pretty)
    return text.decode() if isinstance(text, bytes) else text


def dumps_utf8(document: object, *, pretty: bool = False) -> bytes | str:
    """The text of ``dumps``: as orjson's UTF-8 bytes when orjson wrote it (a large document
    is then never decoded only to be encoded again for output), else as the standard library's
    string (which may hold what UTF-8 cannot encode, e.g. a lone surrogate)."""
    option = _STRICT | orjson.OPT_INDENT_2 if pretty else _STRICT
    try:
        data = orjson.dumps(document, option=option)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return _standard_dumps(document, pretty)
    if _spelled_differently(data):
        return _standard_dumps(document, pretty)
    return data


def _spelled_differently(data: bytes) -> bool:
    """Whether orjson's ``data`` may hold a float the standard library spells otherwise.

    Substring searches rule both spellings out first, several times faster than each pattern's
    search over the megabytes of a large document (``rfind`` for ".0000": it tests the first
    byte, and "." is rarer in JSON than the "0" that ``in`` would test).
    """
    if data.rfind(b".0000") != -1 and _FIXED_SMALL_FLOAT.search(data):
        return True
    return any(exponent in data for exponent in _SHORT_EXPONENTS) and bool(
        _SHORT_NEGATIVE_EXPONENT.search(data)
    )


def _standard_dumps(document: object, pretty: bool) -> str:
    if pretty:
        return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False)
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
