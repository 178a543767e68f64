"""Errors that are values with a message written for the person who will read it."""

from __future__ import annotations


class InputError(Exception):
    """The input cannot be summarised. ``message`` says what, where, and what to do instead."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
