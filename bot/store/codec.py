"""Versioned encoding of the values the bot keeps in a ``KeyValueStore``.

A value is ``b"hs" + version byte + kind length + kind + body`` where the body is JSON,
zlib-compressed when asked. An entry written by another version or for another kind decodes
to ``None`` (treated as absent) instead of being misread: replicas of two releases can share one
Redis during a rolling upgrade.
"""

from __future__ import annotations

import json
import zlib
from typing import Any

VERSION = 1
_MAGIC = b"hs"
_PLAIN = b"j"
_COMPRESSED = b"z"


def encode(kind: str, payload: dict[str, Any], *, compress: bool = False) -> bytes:
    """Encode ``payload`` (JSON-compatible) as a value of ``kind``."""
    kind_bytes = kind.encode("ascii")
    if len(kind_bytes) > 255:
        raise ValueError("kind name too long")
    body = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    flag = _PLAIN
    if compress:
        body = zlib.compress(body, 6)
        flag = _COMPRESSED
    return _MAGIC + bytes([VERSION, len(kind_bytes)]) + kind_bytes + flag + body


def decode(kind: str, data: bytes | None) -> dict[str, Any] | None:
    """The payload stored by ``encode(kind, ...)``, or None when absent, foreign or corrupt."""
    if data is None or len(data) < 5 or not data.startswith(_MAGIC) or data[2] != VERSION:
        return None
    kind_length = data[3]
    stored_kind = data[4 : 4 + kind_length]
    if stored_kind != kind.encode("ascii"):
        return None
    flag = data[4 + kind_length : 5 + kind_length]
    body = data[5 + kind_length :]
    try:
        if flag == _COMPRESSED:
            body = zlib.decompress(body)
        elif flag != _PLAIN:
            return None
        payload = json.loads(body.decode("utf-8"))
    except (zlib.error, UnicodeDecodeError, ValueError):
        return None
    return payload if isinstance(payload, dict) else None
