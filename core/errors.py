"""Errors that are values with a message written for the person who will read it."""

from __future__ import annotations

# Longest line quoted in a message.
SHOWN_LINE_CHARS = 120


def shorten_line(text: str, limit: int = SHOWN_LINE_CHARS) -> str:
    """The line as shown in messages: at most ``limit`` characters, with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


class InputError(Exception):
    """The input cannot be summarised. ``message`` says what, where, and what to do instead."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
