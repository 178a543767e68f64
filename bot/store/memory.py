"""In-process ``KeyValueStore`` for local use and single-replica installs."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class MemoryStore:
    """A dict with expiry, safe for the bot's worker threads. Bounded by ``max_keys``."""

    def __init__(
        self, max_keys: int = 100_000, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._data: dict[str, tuple[bytes, float]] = {}
        self._lock = threading.Lock()
        self._max_keys = max_keys
        self._clock = clock

    def _live(self, key: str, now: float) -> bytes | None:
        entry = self._data.get(key)
        if entry is None:
            return None
        if entry[1] <= now:
            del self._data[key]
            return None
        return entry[0]

    def _evict_if_full(self, now: float) -> None:
        if len(self._data) < self._max_keys:
            return
        for key in [k for k, (_, exp) in self._data.items() if exp <= now]:
            del self._data[key]
        while len(self._data) >= self._max_keys:
            # Oldest-inserted first: dicts keep insertion order.
            del self._data[next(iter(self._data))]

    def get(self, key: str) -> bytes | None:
        with self._lock:
            return self._live(key, self._clock())

    def put(self, key: str, value: bytes, ttl_seconds: float) -> None:
        with self._lock:
            now = self._clock()
            self._evict_if_full(now)
            self._data.pop(key, None)
            self._data[key] = (value, now + ttl_seconds)

    def put_durably(self, key: str, value: bytes, ttl_seconds: float) -> bool:
        self.put(key, value, ttl_seconds)
        return True  # one process, no failover: the write stays as long as the process

    def put_if_absent(self, key: str, value: bytes, ttl_seconds: float) -> bool:
        with self._lock:
            now = self._clock()
            if self._live(key, now) is not None:
                return False
            self._evict_if_full(now)
            self._data[key] = (value, now + ttl_seconds)
            return True

    def delete(self, key: str) -> None:
        with self._lock:
            self._data.pop(key, None)

    def delete_if_equals(self, key: str, value: bytes) -> bool:
        with self._lock:
            if self._live(key, self._clock()) == value:
                del self._data[key]
                return True
            return False

    def incr(self, key: str, ttl_seconds: float) -> int:
        with self._lock:
            now = self._clock()
            current = self._live(key, now)
            if current is None:
                self._evict_if_full(now)
                self._data[key] = (b"1", now + ttl_seconds)
                return 1
            count = int(current) + 1
            self._data[key] = (str(count).encode(), self._data[key][1])
            return count

    def ping(self) -> bool:
        return True

    def extend_if_equals(self, key: str, value: bytes, ttl_seconds: float) -> bool:
        with self._lock:
            now = self._clock()
            if self._live(key, now) != value:
                return False
            self._data[key] = (value, now + ttl_seconds)
            return True
