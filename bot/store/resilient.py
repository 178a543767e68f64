"""A ``KeyValueStore`` that prefers Redis and falls back to process memory while Redis is away.

The bot must keep answering when Redis is down (at start or later): it then works like a single
replica (no shared cache, single-flight only within the process, retries de-duplicated only
within the process) and says so on ``/readyz``.

Health comes from writes, not from PING: a Redis that answers PING but refuses writes (a
read-only replica, MISCONF after a failed save, OOM at maxmemory, too few replicas) cannot keep
the bot's state. Any failed call, or a failed write probe (SET of a health key with a TTL,
bounded by the socket timeout), makes the store degraded; only a successful write probe makes
it healthy again, so a Redis that reads but refuses writes does not flap between the two.
State changes are logged once each, with the reason. A degraded store probes again at most every
``retry_interval_seconds`` (one thread probes, the others keep using memory); a healthy one is
probed by ``check_health`` (the readiness probe) at most every ``health_interval_seconds``, so
``/readyz`` notices an outage even when no request comes in.

Values put and keys deleted while degraded are journalled (``bot.store.outage_journal``) and
copied to Redis, with their remaining TTLs, before the store goes back to it (a
compare-and-delete or compare-and-set as one, so it changes the key only while it holds the
value named): a thread started during the outage is still known afterwards, on every replica.
Locks, de-duplication marks and counters (``put_if_absent``, ``incr``) are not copied: they
live seconds to minutes, and a lock copied after its holder released it would block the other
replicas until it expired.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, TypeVar

from bot.ops.metrics import METRICS
from bot.store.kv import DurableWrite
from bot.store.memory import MemoryStore
from bot.store.outage_journal import OutageJournal
from bot.store.redis_store import RedisStore, StoreUnavailableError

RedisState = Literal["ok", "degraded", "disabled"]

T = TypeVar("T")

log = logging.getLogger("hami_summary.store")

DEFAULT_RETRY_INTERVAL_SECONDS = 5.0
DEFAULT_HEALTH_INTERVAL_SECONDS = 1.0


@dataclass(frozen=True, slots=True)
class RedisHealth:
    """The store's Redis state and, when not ok, why (for ``/readyz``)."""

    state: RedisState
    reason: str = ""


def _count_redis_error(operation: str) -> None:
    METRICS.redis_errors.labels(operation=operation).inc()


class ResilientStore:
    """Redis while it takes writes, ``MemoryStore`` while it does not; recovers by itself."""

    def __init__(
        self,
        redis_store: RedisStore,
        fallback: MemoryStore | None = None,
        *,
        retry_interval_seconds: float = DEFAULT_RETRY_INTERVAL_SECONDS,
        health_interval_seconds: float = DEFAULT_HEALTH_INTERVAL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        on_error: Callable[[str], None] = _count_redis_error,
        journal: OutageJournal | None = None,
    ) -> None:
        self._redis = redis_store
        self._memory = fallback if fallback is not None else MemoryStore()
        self._retry_interval_seconds = retry_interval_seconds
        self._health_interval_seconds = health_interval_seconds
        self._clock = clock
        self._on_error = on_error
        self._journal = journal if journal is not None else OutageJournal(clock)
        self._state_lock = threading.Lock()
        self._probe_lock = threading.Lock()
        self._healthy = True
        self._reason = ""
        self._last_failure = 0.0
        self._last_probe = clock()
        try:
            self._redis.probe_writes()
        except StoreUnavailableError as error:
            self._mark_degraded(error.reason)

    # -- state -----------------------------------------------------------------------------

    def redis_state(self) -> RedisState:
        return "ok" if self._healthy else "degraded"

    def health(self) -> RedisHealth:
        with self._state_lock:
            return RedisHealth("ok") if self._healthy else RedisHealth("degraded", self._reason)

    def check_health(self) -> RedisHealth:
        """The health after a write probe when one is due (the readiness probe calls this).

        Healthy: a write probe at most every ``health_interval_seconds``. Degraded: the
        recovery probe, at most every ``retry_interval_seconds``. One thread probes at a time;
        the others get the last known state at once.
        """
        if not self._healthy:
            self._redis_usable()
        elif self._clock() - self._last_probe >= self._health_interval_seconds:
            self._probe_while_healthy()
        return self.health()

    def _probe_while_healthy(self) -> None:
        if not self._probe_lock.acquire(blocking=False):
            return
        try:
            self._last_probe = self._clock()
            self._redis.probe_writes()
        except StoreUnavailableError as error:
            self._on_error("write probe")
            self._mark_degraded(error.reason)
        finally:
            self._probe_lock.release()

    def _mark_degraded(self, reason: str) -> None:
        with self._state_lock:
            self._last_failure = self._clock()
            self._reason = reason
            if not self._healthy:
                return
            self._healthy = False
        log.warning(
            "Redis unavailable: %s; answering from process memory (no shared cache, "
            "single-flight and retry de-duplication within this replica only) until it takes "
            "writes again; next check in %g s",
            reason,
            self._retry_interval_seconds,
        )

    def _mark_recovered(self, replayed: int, dropped: int) -> None:
        with self._state_lock:
            if self._healthy:
                return
            self._healthy = True
            self._reason = ""
            self._last_probe = self._clock()
        lost = f"; {dropped} older write(s) did not fit the outage journal" if dropped else ""
        log.warning(
            "Redis is back and takes writes; shared cache, locks and de-duplication use it again "
            "(%d write(s) made during the outage copied to it%s)",
            replayed,
            lost,
        )

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
            self._recover()
            return self._healthy
        finally:
            self._probe_lock.release()

    def _recover(self) -> None:
        """Write probe, then copy the outage's writes to Redis, then go back to it."""
        try:
            self._redis.probe_writes()
            replayed, dropped = self._replay_journal()
        except StoreUnavailableError as error:
            self._on_error("write probe")
            with self._state_lock:
                self._last_failure = self._clock()
                self._reason = error.reason
            return
        self._mark_recovered(replayed, dropped)
        # Writes that reached memory while the state flipped: copy them too (best effort).
        try:
            self._replay_journal()
        except StoreUnavailableError as error:
            self._on_error("replay")
            self._mark_degraded(error.reason)

    def _replay_journal(self) -> tuple[int, int]:
        """Copy journalled writes to Redis with their remaining TTLs; (copied, dropped)."""
        entries, dropped = self._journal.take()
        for index, entry in enumerate(entries):
            try:
                remaining = entry.expires_at - self._clock()
                if entry.value is None and entry.only_if is not None:
                    self._redis.delete_if_equals(entry.key, entry.only_if)
                elif entry.value is None:
                    self._redis.delete(entry.key)
                elif remaining <= 0:
                    continue
                elif entry.only_if is not None:
                    self._redis.replace_if_equals(entry.key, entry.only_if, entry.value, remaining)
                else:
                    self._redis.put(entry.key, entry.value, remaining)
            except StoreUnavailableError:
                self._journal.give_back(entries[index:], dropped)
                raise
        return len(entries), dropped

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
                self._mark_degraded(error.reason)
        return on_memory(self._memory)

    # -- KeyValueStore ---------------------------------------------------------------------

    def get(self, key: str) -> bytes | None:
        return self._run("GET", lambda s: s.get(key), lambda m: m.get(key))

    def put(self, key: str, value: bytes, ttl_seconds: float) -> None:
        def in_memory(memory: MemoryStore) -> None:
            memory.put(key, value, ttl_seconds)
            self._journal.record_put(key, value, ttl_seconds)

        self._run("SET", lambda s: s.put(key, value, ttl_seconds), in_memory)

    def put_durably(self, key: str, value: bytes, ttl_seconds: float) -> bool:
        def in_memory(memory: MemoryStore) -> bool:
            memory.put(key, value, ttl_seconds)
            self._journal.record_put(key, value, ttl_seconds)
            return False  # the other replicas cannot see it

        return self._run(
            "SET and WAIT", lambda s: s.put_durably(key, value, ttl_seconds), in_memory
        )

    def replace_durably(
        self, key: str, expected: bytes | None, value: bytes, ttl_seconds: float
    ) -> DurableWrite:
        # From memory nothing is written: a ``sending`` kept only here, or copied to Redis
        # after the outage, could stand against another replica's.
        return self._run(
            "compare-and-set",
            lambda s: s.replace_durably(key, expected, value, ttl_seconds),
            lambda m: "unreplicated",
        )

    def replace_if_equals(
        self, key: str, expected: bytes, value: bytes, ttl_seconds: float
    ) -> bool:
        def journalled(memory: MemoryStore) -> bool:
            # Copied as a compare-and-set: a ``sending`` record that reached Redis though its
            # answer did not is put back, and nothing another replica wrote is overwritten.
            self._journal.record_put_if_equals(key, expected, value, ttl_seconds)
            return memory.replace_if_equals(key, expected, value, ttl_seconds)

        return self._run(
            "compare-and-set",
            lambda s: s.replace_if_equals(key, expected, value, ttl_seconds),
            journalled,
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
        self._run("DEL", lambda s: s.delete(key), lambda m: self._journal.record_delete(key))

    def delete_if_equals(self, key: str, value: bytes) -> bool:
        def journalled(memory: MemoryStore) -> bool:
            # Copied as a compare-and-delete: a digest's ``sending`` whose write reached Redis
            # though its answer did not is taken back, and nothing another replica wrote is.
            self._journal.record_delete_if_equals(key, value)
            return False

        deleted_in_memory = self._memory.delete_if_equals(key, value)
        deleted_in_redis = self._run(
            "compare-and-delete", lambda s: s.delete_if_equals(key, value), journalled
        )
        return deleted_in_redis or deleted_in_memory

    def incr(self, key: str, ttl_seconds: float) -> int:
        return self._run(
            "INCR", lambda s: s.incr(key, ttl_seconds), lambda m: m.incr(key, ttl_seconds)
        )

    def ping(self) -> bool:
        """Always True: this store answers with or without Redis (see ``check_health``).

        Also runs ``check_health``, so a readiness check notices an outage or a recovery even
        when no request arrives.
        """
        self.check_health()
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
