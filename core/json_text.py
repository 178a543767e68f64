"""JSON text of plain documents (dicts, lists, tuples, str, int, float, bool, None), fast.

The standard library's encoder spends about 0.1 s on the 7 MB document of a 1,000-node summary;
orjson writes it in a tenth of that. Its text is what ``json.dumps(..., ensure_ascii=False,
allow_nan=False)`` writes but for two things. A float from 1e-9 up to 1e-4 is spelled as the
shortest number that reads back as it (``0.00001``, ``4.5e-6``), where Python writes ``1e-05``
and ``4.5e-06``: every JSON reader takes both for the same value, and looking for such floats
in the megabytes of text cost more than writing it. NaN and infinities are written as ``null``
where the standard library raises; summaries never hold them (the sample screen leaves such
values out). What orjson refuses and the standard library accepts (integers past 64 bits,
non-string keys, lone surrogates) goes to the standard library.
"""

from __future__ import annotations

import json

import orjson

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
        return orjson.dumps(document, option=option)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return _standard_dumps(document, pretty)


def _standard_dumps(document: object, pretty: bool) -> str:
    if pretty:
        return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False)
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
