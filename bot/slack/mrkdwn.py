"""The conversation's ``Text`` written as Slack mrkdwn (escaping happens when a
``SlackMessage`` is built, for every message alike)."""

from __future__ import annotations

from bot.conversation.formatting import code_block
from bot.conversation.rich import Aside, Fixed, Line, Span, Strong, Text, spans


def _span(span: Span) -> str:
    if isinstance(span, Strong):
        return f"*{span.text}*"
    if isinstance(span, Aside):
        return f"_{span.text}_"
    return span


def _line(line: Line) -> str:
    parts = spans(line)
    if isinstance(parts, Fixed):
        return code_block(parts.text)
    return "".join(_span(span) for span in parts)


def mrkdwn(text: Text) -> str:
    """``text`` in mrkdwn: strong words bold, asides in italics, fixed blocks fenced."""
    if isinstance(text, str):
        return text
    return "\n".join(_line(line) for line in text.lines)
