"""The conversation's ``Text`` for a terminal: the words without emphasis, fixed-width blocks
as they are laid out."""

from __future__ import annotations

from bot.conversation.rich import Fixed, Line, Span, Text, spans


def _span(span: Span) -> str:
    return span if isinstance(span, str) else span.text


def _line(line: Line) -> str:
    parts = spans(line)
    if isinstance(parts, Fixed):
        return parts.text
    return "".join(_span(span) for span in parts)


def plain(text: Text) -> str:
    """``text`` as plain lines."""
    if isinstance(text, str):
        return text
    return "\n".join(_line(line) for line in text.lines)
