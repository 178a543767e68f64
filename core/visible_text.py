"""Text from the input made safe to show on one line of a table or report.

Label values may hold any character once unescaped: a ``\\n`` in a pod label becomes a real
newline, which would end a Markdown table row or a text-table line in the middle of a cell, and
an ESC character would start a terminal escape sequence. Every character that is not printable
is shown as its Python escape instead (``\\n``, ``\\t``, ``\\x1b``, ``\\u2028``), so the row stays
one line and the reader can still see what the value holds.
"""

from __future__ import annotations

_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _shown(char: str) -> str:
    if char.isprintable():
        return char
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def visible(text: str) -> str:
    """``text`` with every non-printable character written as its escape; usually ``text``."""
    if text.isprintable():
        return text
    return "".join(map(_shown, text))


def visible_lines(text: str) -> str:
    """``text`` with each of its lines made ``visible``, its own line breaks kept."""
    if text.isprintable():
        return text
    return "\n".join(map(visible, text.split("\n")))


# What turns text into Markdown markup other than emphasis: raw HTML and entities (<, >, &),
# links and images ([, ]), the end of a table cell (|), and a backslash, which would escape
# the character after it. CommonMark lets any ASCII punctuation be escaped with a backslash.
_MARKDOWN_MARKUP = str.maketrans({char: "\\" + char for char in "\\<>&[]|"})


def markdown_text(text: str) -> str:
    """``text`` made ``visible`` and shown as written in Markdown: a pod named
    ``<img src=x onerror=...>`` or ``[login](http://...)`` stays text, never HTML or a link."""
    return visible(text).translate(_MARKDOWN_MARKUP)
