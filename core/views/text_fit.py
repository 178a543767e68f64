"""Fitting text into a width without breaking a word or hiding the end of a name.

Node and pod names differ mostly at their end (``gpu-node-0283``, ``train-7f9c-x2k4l``), so a
name too long for its column keeps its end and loses letters from the middle:
``gpu-…-0283``. Running text wraps between words, never inside one (and never at the hyphens
inside ``gpu-node-01``); a single word wider than the line is shortened the same way.
"""

from __future__ import annotations

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


# Where a word wider than a line (a series with its labels) may continue on the next line.
_BREAK_AFTER = ",{;"


def _pieces(word: str, width: int) -> list[str]:
    """``word`` in pieces of at most ``width``, each ending after a label separator; a word
    without one (a name) is shortened in the middle instead."""
    pieces: list[str] = []
    while len(word) > width:
        cut = max(word.rfind(mark, 0, width) for mark in _BREAK_AFTER) + 1
        if cut <= 0:
            return [*pieces, shorten_middle(word, width)]
        pieces.append(word[:cut])
        word = word[cut:]
    return [*pieces, word] if word else pieces


def wrap_words(
    text: str, width: int, *, indent: str = "", subsequent: str | None = None
) -> list[str]:
    """``text`` wrapped at ``width`` between words, never inside one; a word wider than a
    line continues after a label separator (``,``), or is shortened in the middle when it
    has none (``shorten_middle``), so no line is ever wider than ``width``."""
    # Imported here: textwrap compiles its word-splitting expressions when it is imported, and
    # a JSON or CSV summary, which imports this module with the table columns, never wraps.
    import textwrap

    follow = " " * len(indent) if subsequent is None else subsequent
    lines = textwrap.wrap(
        text,
        width=width,
        initial_indent=indent,
        subsequent_indent=follow,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [indent.rstrip()]
    fitted: list[str] = []
    for line in lines:
        if len(line) <= width:
            fitted.append(line)
            continue
        lead = len(line) - len(line.lstrip())
        room = max(width - lead, 1)
        fitted.extend(line[:lead] + piece for piece in _pieces(line[lead:], room))
    return fitted
