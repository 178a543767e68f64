"""Bytes of a metrics file or upload as text: UTF-8, or UTF-16/32 as Windows tools save it.

Prometheus text is UTF-8, but an export saved by PowerShell (``>`` in Windows PowerShell 5 writes
UTF-16 LE with a byte-order mark) or by an editor set to "Unicode" is UTF-16. Read as UTF-8, every
other byte of such a file is NUL and the text looks like binary data, so the encoding is taken
from the byte-order mark, or, without one, from where the NUL bytes fall: ASCII text in UTF-16 LE
has a NUL at every odd offset, in UTF-16 BE at every even one.
"""

from __future__ import annotations

import codecs

# UTF-32 first: its little-endian mark begins with the UTF-16 LE one.
_BYTE_ORDER_MARKS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# How much of the start is looked at to tell UTF-16 from UTF-8 without a mark.
_SNIFF_BYTES = 4096


def _nul_pattern(at_even: int, at_odd: int, pairs: int) -> str | None:
    """Byte order "le" or "be" when NULs sit on one side of most byte pairs, almost never on
    the other."""
    if pairs < 2:
        return None
    if at_odd >= 0.4 * pairs and at_even <= 0.05 * pairs:
        return "le"
    if at_even >= 0.4 * pairs and at_odd <= 0.05 * pairs:
        return "be"
    return None


def utf16_byte_order(data: bytes) -> str | None:
    """Byte order "le" or "be" when ``data`` (no byte-order mark) is UTF-16 text, else None."""
    start = data[:_SNIFF_BYTES]
    return _nul_pattern(start[0::2].count(0), start[1::2].count(0), len(start) // 2)


def looks_like_utf16_read_as_utf8(text: str) -> bool:
    """True when ``text`` holds UTF-16 bytes that were decoded as if they were UTF-8."""
    start = text[:_SNIFF_BYTES]
    if "\x00" not in start:
        return False
    order = _nul_pattern(start[0::2].count("\x00"), start[1::2].count("\x00"), len(start) // 2)
    return order is not None


def decode_metrics_bytes(data: bytes) -> str:
    """``data`` as text; bytes that are not valid in the encoding found become U+FFFD."""
    for mark, encoding in _BYTE_ORDER_MARKS:
        if data.startswith(mark):
            return data[len(mark) :].decode(encoding, errors="replace")
    order = utf16_byte_order(data)
    if order is not None:
        return data.decode(f"utf-16-{order}", errors="replace")
    return data.decode("utf-8", errors="replace")
