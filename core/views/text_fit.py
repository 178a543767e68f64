"""Fitting text into a width without breaking a word or hiding the end of a name.

Node and pod names differ mostly at their end (``gpu-node-0283``, ``train-7f9c-x2k4l``), so a
name too long for its column keeps its end and loses letters from the middle:
``gpu-…-0283``. Running text wraps between words, never inside one (and never at the hyphens
inside ``gpu-node-01``); a single word wider than the line is shortened the same way.
"""

from __future__ import annotations

import textwrap

ELLIPSIS = "…"


def _number_tail(text: str) -> int:
    """How many characters the trailing number takes, with the separator before it."""
    start = len(text)
    while start > 0 and text[start - 1].isdigit():
        start -= 1
    digits = len(text) - start
    if digits and start > 0 and not text[start - 1].isalnum():
        digits += 1
    return digits


def shorten_middle(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, cut in the middle with an ellipsis.

    The trailing number (``-0283`` of ``gpu-node-0283``) is always kept whole when it fits;
    otherwise the end of the text is kept.
    """
    if len(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:width]
    tail = min(max(_number_tail(text), (width - 1) // 2), width - 1)
    head = width - 1 - tail
    return text[:head] + ELLIPSIS + text[len(text) - tail :]


def wrap_words(
    text: str, width: int, *, indent: str = "", subsequent: str | None = None
) -> list[str]:
    """``text`` wrapped at ``width`` between words; a word wider than a line is shortened in
    the middle (``shorten_middle``) so no line is ever wider than ``width``."""
    follow = " " * len(indent) if subsequent is None else subsequent
    lines = textwrap.wrap(
        text,
        width=width,
        initial_indent=indent,
        subsequent_indent=follow,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [indent.rstrip()]
    fitted = []
    for line in lines:
        if len(line) > width:
            lead = len(line) - len(line.lstrip())
            line = line[:lead] + shorten_middle(line[lead:], width - lead)
        fitted.append(line)
    return fitted
