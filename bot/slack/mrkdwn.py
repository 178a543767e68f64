"""The conversation's ``Text`` written as Slack mrkdwn (escaping happens when a
``SlackMessage`` is built, for every message alike)."""

from __future__ import annotations

from bot.conversation.rich import (
    Alarm,
    Aside,
    Code,
    Fixed,
    Line,
    Mention,
    Span,
    Strong,
    Text,
    spans,
)
from bot.slack.markup import mention_channel, mention_group, mention_user

# Inside a code block, Slack (like Markdown) ends the block at the next run of three backticks:
# a name holding them would let the rest of the table out as formatting. Backticks of the data
# are shown as the look-alike MODIFIER LETTER GRAVE ACCENT there.
_BACKTICK = "`"
_BACKTICK_LOOKALIKE = "\u02cb"


def code_block(body: str) -> str:
    """``body`` as a Slack/Markdown code block that only its own fences open and close."""
    return f"```{body.replace(_BACKTICK, _BACKTICK_LOOKALIKE)}```"


def inline_code(text: str) -> str:
    """``text`` as inline code that no backtick of its own can close."""
    return f"`{text.replace(_BACKTICK, _BACKTICK_LOOKALIKE)}`"


MENTIONS = {"user": mention_user, "channel": mention_channel, "group": mention_group}


def _span(span: Span) -> str:
    if isinstance(span, Strong):
        return f"*{span.text}*"
    if isinstance(span, Aside):
        return f"_{span.text}_"
    if isinstance(span, Code):
        return "`" + span.text.replace("`", "'") + "`"
    if isinstance(span, Mention):
        return MENTIONS[span.kind](span.id)
    if isinstance(span, Alarm):
        return ":warning:"
    return span


def mrkdwn_line(line: Line) -> str:
    """One line in mrkdwn."""
    return _line(line)


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
