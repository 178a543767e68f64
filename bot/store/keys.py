"""Pieces of store keys made from names the bot is given (cluster, context, group names)."""

from __future__ import annotations

import hashlib


def key_part(value: str | None) -> str:
    """``value`` as one ``:``-free piece of a key; ``~`` for None.

    Readable for ordinary names (operators look at keys with redis-cli); anything unusual (":"
    would make keys ambiguous) is hashed, so keys stay bounded and unambiguous.
    """
    if value is None:
        return "~"
    if 0 < len(value) <= 80 and all(ch.isalnum() or ch in "._-@/" for ch in value):
        return value
    return "h" + hashlib.sha256(value.encode("utf-8")).hexdigest()[:32]
