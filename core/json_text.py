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
import sys
from types import ModuleType

# At import, orjson looks up one member of each of these modules, to recognise their objects
# by type later: ``uuid.UUID`` for UUIDs, ``dataclasses._FIELD`` for a dataclass's fields.
_LOOKED_UP_AT_IMPORT = (("uuid", "UUID"), ("dataclasses", "_FIELD"))


def _stand_in_for_orjson() -> list[str]:
    """Stand-ins for the modules of ``_LOOKED_UP_AT_IMPORT`` not loaded yet, while orjson is
    imported; the names of those put in ``sys.modules``, to take out once it is.

    Those two modules bring ``inspect``, ``ast``, ``dis``, ``tokenize`` and ``platform`` with
    them: 31 M of the 1.67 G instructions of a whole ``hami-summary summarize --format json``
    on 1,000 nodes, for types no document here holds. A stand-in is a module whose member is a
    class of its own, which no object is an instance of; once it is out of ``sys.modules``, a
    later ``import uuid`` loads the real module. orjson then reads no dataclass field (it is
    given none: ``_STRICT`` passes dataclasses through to the standard library, which refuses
    them) and writes no UUID: one goes to the standard library and is refused too, where an
    orjson that saw the real module writes its string. Documents here hold neither. No
    stand-in is used while another thread runs (it could import the module meanwhile). This
    module is the only one that writes JSON with orjson; ``tests/core/test_json_text.py``
    checks all of this in fresh interpreters.
    """
    threading = sys.modules.get("threading")
    if "orjson" in sys.modules or (threading is not None and threading.active_count() > 1):
        return []  # another thread could import uuid meanwhile, and be given the stand-in
    stood_in = []
    for module_name, member in _LOOKED_UP_AT_IMPORT:
        if module_name not in sys.modules:
            stand_in = ModuleType(module_name, "Stands in while orjson is imported.")
            setattr(stand_in, member, type(f"NotA{member.strip('_').title()}", (), {}))
            sys.modules[module_name] = stand_in
            stood_in.append(module_name)
    return stood_in


_stood_in = _stand_in_for_orjson()
try:
    import orjson
finally:
    for _name in _stood_in:
        del sys.modules[_name]

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
