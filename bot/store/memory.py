"""In-process ``KeyValueStore`` for local use and single-replica installs."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from bot.config import MEMORY_STORE_DEFAULT_BYTES
from bot.store.kv import DurableWrite


class MemoryStore:
    """A dict with expiry, safe for the bot's worker threads.

    Bounded by ``max_keys`` and by ``max_bytes`` (keys and values together): pasted metrics
    kept for thread follow-ups are up to 8 MiB each, so a key count alone bounds nothing. When
    either bound is reached, expired entries go first, then the oldest written. A value larger
    than ``max_bytes`` on its own is not kept (it reads as absent, as if expired).
    """

    def __init__(
        self,
        max_keys: int = 100_000,
        clock: Callable[[], float] = time.monotonic,
        *,
        max_bytes: int = MEMORY_STORE_DEFAULT_BYTES,
    ) -> None:
        self._data: dict[str, tuple[bytes, float]] = {}
        self._lock = threading.Lock()
        self._max_keys = max_keys
        self._max_bytes = max_bytes
        self._bytes = 0
        self._clock = clock

    @property
    def size_bytes(self) -> int:
        """What the kept keys and values weigh now (the ``max_bytes`` count)."""
        return self._bytes

    def _live(self, key: str, now: float) -> bytes | None:
        entry = self._data.get(key)
        if entry is None:
            return None
        if entry[1] <= now:
            self._drop(key)
            return None
        return entry[0]

    def _drop(self, key: str) -> None:
        entry = self._data.pop(key, None)
        if entry is not None:
            self._bytes -= len(key) + len(entry[0])

    def _set(self, key: str, value: bytes, expires_at: float) -> None:
        """Keep ``value`` under ``key``, after making room for it; a value over the whole
        bound is not kept."""
        self._drop(key)
        size = len(key) + len(value)
        if size > self._max_bytes:
            return
        self._make_room(size, self._clock())
        self._data[key] = (value, expires_at)
        self._bytes += size

    def _make_room(self, size: int, now: float) -> None:
        if len(self._data) < self._max_keys and self._bytes + size <= self._max_bytes:
            return
        for key in [k for k, (_, exp) in self._data.items() if exp <= now]:
            self._drop(key)
        while self._data and (
            len(self._data) >= self._max_keys or self._bytes + size > self._max_bytes
        ):
            # Oldest-written first: dicts keep insertion order, and ``_set`` re-inserts.
            self._drop(next(iter(self._data)))

    def get(self, key: str) -> bytes | None:
        with self._lock:
            return self._live(key, self._clock())

    def put(self, key: str, value: bytes, ttl_seconds: float) -> None:
        with self._lock:
            self._set(key, value, self._clock() + ttl_seconds)

    def put_durably(self, key: str, value: bytes, ttl_seconds: float) -> bool:
        self.put(key, value, ttl_seconds)
        return True  # one process, no failover: the write stays as long as the process

    def replace_durably(
        self, key: str, expected: bytes | None, value: bytes, ttl_seconds: float
    ) -> DurableWrite:
        with self._lock:
            now = self._clock()
            if self._live(key, now) != expected:
                return "changed"
            self._set(key, value, now + ttl_seconds)
            return "kept"

    def replace_if_equals(
        self, key: str, expected: bytes, value: bytes, ttl_seconds: float
    ) -> bool:
        return self.replace_durably(key, expected, value, ttl_seconds) == "kept"

    def put_if_absent(self, key: str, value: bytes, ttl_seconds: float) -> bool:
        with self._lock:
            now = self._clock()
            if self._live(key, now) is not None:
                return False
            self._set(key, value, now + ttl_seconds)
            return key in self._data

    def delete(self, key: str) -> None:
        with self._lock:
            self._drop(key)

    def delete_if_equals(self, key: str, value: bytes) -> bool:
        with self._lock:
            if self._live(key, self._clock()) == value:
                self._drop(key)
                return True
            return False

    def incr(self, key: str, ttl_seconds: float) -> int:
        with self._lock:
            now = self._clock()
            current = self._live(key, now)
            if current is None:
                self._set(key, b"1", now + ttl_seconds)
                return 1
            count = int(current) + 1
            self._set(key, str(count).encode(), self._data[key][1])
            return count

    def ping(self) -> bool:
        return True

    def extend_if_equals(self, key: str, value: bytes, ttl_seconds: float) -> bool:
        with self._lock:
            now = self._clock()
            if self._live(key, now) != value:
                return False
            self._data[key] = (value, now + ttl_seconds)  # same size: nothing to make room for
            return True
