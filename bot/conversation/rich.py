"""Words with emphasis held as data, so each surface writes them its own way.

The conversation never writes a surface's markup: a heading or a name to stand out is
``Strong``, a remark in passing ``Aside``, a name as written in a file ``Code``, a Slack user,
channel or group ``Mention``, the mark of a problem ``Alarm``, a fixed-width block (a table)
``Fixed``. Slack turns them into mrkdwn (``bot.slack.mrkdwn``); ``plain`` gives the words
alone, for a terminal or a file. Command words in backticks (`/hami-summary clusters`) are
plain text on every surface: Slack shows them as code, a terminal as they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True)
class Strong:
    """Words that stand out: a heading, the name a sentence is about."""

    text: str


@dataclass(frozen=True, slots=True)
class Aside:
    """A remark in passing (what a table's numbers mean)."""

    text: str


@dataclass(frozen=True, slots=True)
class Code:
    """A name as written in a file (a context, a path): code on Slack, as is elsewhere."""

    text: str


MentionKind = Literal["user", "channel", "group"]


@dataclass(frozen=True, slots=True)
class Mention:
    """A Slack user, channel or user group by id: a real mention on Slack, the id elsewhere."""

    kind: MentionKind
    id: str


@dataclass(frozen=True, slots=True)
class Alarm:
    """The mark in front of a problem."""


@dataclass(frozen=True, slots=True)
class Fixed:
    """A block laid out in a fixed-width font, on lines of its own (a table)."""

    text: str


Span = str | Strong | Aside | Code | Mention | Alarm
# One line of a text: a span, spans one after the other, or a fixed-width block.
Line = Span | tuple[Span, ...] | Fixed


@dataclass(frozen=True, slots=True)
class Rich:
    """Lines of text, one under the other."""

    lines: tuple[Line, ...]

    @classmethod
    def of(cls, *lines: Line) -> Rich:
        return cls(tuple(lines))

    def __add__(self, other: Rich) -> Rich:
        return Rich(self.lines + other.lines)


# What a reply's words are: plain text, or text with emphasis.
Text = str | Rich


def spans(line: Line) -> tuple[Span, ...] | Fixed:
    """A line as its spans (or its fixed-width block)."""
    if isinstance(line, (tuple, Fixed)):
        return line
    return (line,)


def _plain_span(span: Span) -> str:
    if isinstance(span, str):
        return span
    if isinstance(span, Mention):
        return span.id
    if isinstance(span, Alarm):
        return "PROBLEM:"
    return span.text


def _plain_line(line: Line) -> str:
    parts = spans(line)
    if isinstance(parts, Fixed):
        return parts.text
    return "".join(_plain_span(span) for span in parts)


def plain(text: Text) -> str:
    """``text`` as plain lines: the words without emphasis, fixed blocks as laid out."""
    if isinstance(text, str):
        return text
    return "\n".join(_plain_line(line) for line in text.lines)
