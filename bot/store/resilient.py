"""A ``KeyValueStore`` that prefers Redis and falls back to process memory while Redis is away.

The bot must keep answering when Redis is down (at start or later): it then works like a single
replica (no shared cache, single-flight only within the process, retries de-duplicated only
within the process) and says so on ``/readyz``. The state changes are logged once each, not per
call, and Redis is probed again at most every ``retry_interval_seconds`` by a single thread, so
a dead Redis costs one request one timeout per interval instead of costing every request.

Keys written to memory while degraded are not copied to Redis on recovery: they are short-lived
(locks, dedupe marks, cache entries) and the worst outcome is one extra scrape.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Literal, TypeVar

from bot.store.memory import MemoryStore
from bot.store.redis_store import RedisStore, StoreUnavailableError

RedisState = Literal["ok", "degraded", "disabled"]

T = TypeVar("T")

log = logging.getLogger("hami_summary.store")

DEFAULT_RETRY_INTERVAL_SECONDS = 5.0


def _count_redis_error(operation: str) -> None:
    # Imported lazily: metrics are optional for users of the store outside the bot.
    from bot.ops.metrics import METRICS

    METRICS.redis_errors.labels(operation=operation).inc()


class ResilientStore:
    """Redis while it answers, ``MemoryStore`` while it does not; recovers by itself."""

    def __init__(
        self,
        redis_store: RedisStore,
        fallback: MemoryStore | None = None,
        *,
        retry_interval_seconds: float = DEFAULT_RETRY_INTERVAL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        on_error: Callable[[str], None] = _count_redis_error,
    ) -> None:
        self._redis = redis_store
        self._memory = fallback if fallback is not None else MemoryStore()
        self._retry_interval_seconds = retry_interval_seconds
        self._clock = clock
        self._on_error = on_error
        self._state_lock = threading.Lock()
        self._probe_lock = threading.Lock()
        self._healthy = True
        self._last_failure = 0.0
        if not self._redis.ping():
            self._mark_degraded("PING", "no answer at start")

    # -- state -----------------------------------------------------------------------------

    def redis_state(self) -> RedisState:
        return "ok" if self._healthy else "degraded"

    def _mark_degraded(self, operation: str, reason: str) -> None:
        with self._state_lock:
            self._last_failure = self._clock()
            if not self._healthy:
                return
            self._healthy = False
        log.warning(
            "Redis unavailable (%s: %s); answering from process memory (no shared cache, "
            "single-flight and retry de-duplication within this replica only) until it is back; "
            "next check in %.0f s",
            operation,
            reason,
            self._retry_interval_seconds,
        )

    def _mark_recovered(self) -> None:
        with self._state_lock:
            if self._healthy:
                return
            self._healthy = True
        log.warning("Redis is back; shared cache, locks and de-duplication use it again")

    def _redis_usable(self) -> bool:
        """True when calls should go to Redis: healthy, or due for a recovery probe."""
        if self._healthy:
            return True
        if self._clock() - self._last_failure < self._retry_interval_seconds:
            return False
        # One thread probes; the others keep using memory instead of queueing on a dead socket.
        if not self._probe_lock.acquire(blocking=False):
            return False
        try:
            if self._healthy:
                return True
            if self._redis.ping():
                self._mark_recovered()
                return True
            with self._state_lock:
                self._last_failure = self._clock()
            self._on_error("PING")
            return False
        finally:
            self._probe_lock.release()

    def _run(
        self,
        operation: str,
        on_redis: Callable[[RedisStore], T],
        on_memory: Callable[[MemoryStore], T],
    ) -> T:
        if self._redis_usable():
            try:
                return on_redis(self._redis)
            except StoreUnavailableError as error:
                self._on_error(operation)
                self._mark_degraded(operation, str(error.__cause__ or error))
        return on_memory(self._memory)

    # -- KeyValueStore ---------------------------------------------------------------------

    def get(self, key: str) -> bytes | None:
        return self._run("GET", lambda s: s.get(key), lambda m: m.get(key))

    def put(self, key: str, value: bytes, ttl_seconds: float) -> None:
        self._run(
            "SET",
            lambda s: s.put(key, value, ttl_seconds),
            lambda m: m.put(key, value, ttl_seconds),
        )

    def put_if_absent(self, key: str, value: bytes, ttl_seconds: float) -> bool:
        return self._run(
            "SET NX",
            lambda s: s.put_if_absent(key, value, ttl_seconds),
            lambda m: m.put_if_absent(key, value, ttl_seconds),
        )

    def delete(self, key: str) -> None:
        # Also clear memory: a lock or mark taken while degraded must not linger after recovery.
        self._memory.delete(key)
        self._run("DEL", lambda s: s.delete(key), lambda m: None)

    def delete_if_equals(self, key: str, value: bytes) -> bool:
        deleted_in_memory = self._memory.delete_if_equals(key, value)
        deleted_in_redis = self._run(
            "compare-and-delete", lambda s: s.delete_if_equals(key, value), lambda m: False
        )
        return deleted_in_redis or deleted_in_memory

    def incr(self, key: str, ttl_seconds: float) -> int:
        return self._run(
            "INCR", lambda s: s.incr(key, ttl_seconds), lambda m: m.incr(key, ttl_seconds)
        )

    def ping(self) -> bool:
        """Always True: this store answers with or without Redis (see ``redis_state``).

        Also gives a degraded store its chance to probe Redis (still at most once an interval),
        so a readiness check notices recovery even when no request arrives.
        """
        self._redis_usable()
        return True

    def close(self) -> None:
        self._redis.close()

    def extend_if_equals(self, key: str, value: bytes, ttl_seconds: float) -> bool:
        # A lock taken while degraded lives in memory; one taken in Redis lives there.
        extended_in_memory = self._memory.extend_if_equals(key, value, ttl_seconds)
        extended_in_redis = self._run(
            "compare-and-extend",
            lambda s: s.extend_if_equals(key, value, ttl_seconds),
            lambda m: False,
        )
        return extended_in_redis or extended_in_memory
