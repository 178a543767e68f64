"""The shared scrape cache with single-flight collection (issue 5, "Redis store").

Per (cluster, context) the last collected metrics are kept, zlib-compressed and versioned
(``bot.store.codec``: an entry from another release is a miss, never misread), with the time
they were collected so replies can say "scraped 42 s ago".

Single-flight: many requests for one cluster, on any replica, cause one collection. The first
takes a lock (``put_if_absent`` with a random token and a TTL) and collects; the others poll for
its result and use it. The wait is bounded: past ``wait_seconds`` a waiter collects by itself
rather than leave a Slack user without an answer. A holder that dies (OOM-killed pod, kill -9)
never releases its lock, so the lock's TTL frees it; a holder releases only its own lock
(``delete_if_equals`` with its token), never one a later holder took after its own expired.

A collection that fails with a message for the user (a ``ClusterError`` such as "no HAMi
scheduler found") is shared the same way for ``failure_ttl_seconds``, so fifty people
asking about an unreachable cluster cause one failed attempt, not fifty in a row.
"""

from __future__ import annotations

import hashlib
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from bot.clusters.errors import ClusterError, CollectionError
from bot.store import codec
from bot.store.kv import KeyValueStore

log = logging.getLogger("hami_summary.scrape_cache")

ENTRY_KIND = "scrape"


class JsonRoundTrip(Protocol):
    def to_json(self) -> dict[str, Any]: ...


M = TypeVar("M", bound=JsonRoundTrip)


class ScrapeFailedError(CollectionError):
    """Another request's collection for this cluster failed; ``message`` is its explanation.

    A ``CollectionError``, so handlers answer it exactly like a failure of their own scrape.
    """


@dataclass(frozen=True, slots=True)
class _Entry:
    stored_at: float  # Unix time the collection finished
    metrics: dict[str, Any] | None
    error: str | None


def _key_part(value: str | None) -> str:
    # Readable keys for ordinary names (operators look at them with redis-cli); anything
    # unusual (":" would make keys ambiguous) is hashed so keys stay bounded and unambiguous.
    if value is None:
        return "~"
    if 0 < len(value) <= 80 and all(ch.isalnum() or ch in "._-@/" for ch in value):
        return value
    return "h" + hashlib.sha256(value.encode("utf-8")).hexdigest()[:32]


def _record_scrape(cluster: str, result: str, duration_seconds: float) -> None:
    from bot.ops.metrics import METRICS

    METRICS.scrapes.labels(cluster=cluster, result=result).inc()
    METRICS.scrape_duration_seconds.labels(cluster=cluster).observe(duration_seconds)


def _record_cache(result: str) -> None:
    from bot.ops.metrics import METRICS

    METRICS.cache_requests.labels(result=result).inc()


class ScrapeCache(Generic[M]):
    """Collected metrics per (cluster, context), shared through ``kv`` by every replica."""

    def __init__(
        self,
        kv: KeyValueStore,
        prefix: str = "hami-summary",
        *,
        decode: Callable[[dict[str, Any]], M],
        lock_ttl_seconds: float = 60.0,
        wait_seconds: float = 30.0,
        failure_ttl_seconds: float = 10.0,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._kv = kv
        self._prefix = prefix.rstrip(":")
        self._decode = decode
        self.lock_ttl_seconds = lock_ttl_seconds
        self.wait_seconds = wait_seconds
        self.failure_ttl_seconds = failure_ttl_seconds
        self._clock = clock
        self._sleep = sleep

    # -- keys and entries ------------------------------------------------------------------

    def entry_key(self, cluster: str, context: str | None) -> str:
        return f"{self._prefix}:scrape:{_key_part(cluster)}:{_key_part(context)}"

    def failure_key(self, cluster: str, context: str | None) -> str:
        # Failures sit beside, not over, the last good entry: a failed Refresh must not hide
        # data that is still within its TTL from the next ordinary request.
        return f"{self._prefix}:scrape-failed:{_key_part(cluster)}:{_key_part(context)}"

    def lock_key(self, cluster: str, context: str | None) -> str:
        return f"{self._prefix}:scrape-lock:{_key_part(cluster)}:{_key_part(context)}"

    def _read(self, key: str) -> _Entry | None:
        payload = codec.decode(ENTRY_KIND, self._kv.get(key))
        if payload is None:
            return None
        stored_at = payload.get("stored_at")
        metrics = payload.get("metrics")
        error = payload.get("error")
        if not isinstance(stored_at, int | float):
            return None
        if metrics is not None and not isinstance(metrics, dict):
            return None
        if error is not None and not isinstance(error, str):
            return None
        if metrics is None and error is None:
            return None
        return _Entry(float(stored_at), metrics, error)

    def _write(self, key: str, entry: _Entry, ttl_seconds: float) -> None:
        value = codec.encode(
            ENTRY_KIND,
            {"stored_at": entry.stored_at, "metrics": entry.metrics, "error": entry.error},
            compress=True,
        )
        self._kv.put(key, value, ttl_seconds)

    def _ready(
        self, cluster: str, context: str | None, ttl_seconds: float, not_before: float
    ) -> _Entry | None:
        """A stored result this request may use: data within its TTL, else a recent failure.

        ``not_before`` (a Unix time) rejects anything stored earlier; fresh requests pass the
        time they were asked so that they only take part in a collection that ends later.
        """
        now = self._clock()
        entry = self._read(self.entry_key(cluster, context))
        if (
            entry is not None
            and entry.metrics is not None
            and entry.stored_at >= not_before
            and now - entry.stored_at <= ttl_seconds
        ):
            return entry
        failure = self._read(self.failure_key(cluster, context))
        if (
            failure is not None
            and failure.error is not None
            and failure.stored_at >= not_before
            and now - failure.stored_at <= self.failure_ttl_seconds
        ):
            return failure
        return None

    def _result(self, entry: _Entry) -> tuple[M, float]:
        if entry.error is not None:
            raise ScrapeFailedError(entry.error)
        assert entry.metrics is not None
        return self._decode(entry.metrics), max(0.0, self._clock() - entry.stored_at)

    # -- the one public operation ----------------------------------------------------------

    def get_or_collect(
        self,
        cluster: str,
        context: str | None,
        collect: Callable[[], M],
        ttl_seconds: float,
        fresh: bool = False,
    ) -> tuple[M, float]:
        """``(metrics, age in seconds)`` from the cache, a concurrent collection, or ``collect``.

        ``fresh`` skips what is cached but still joins a collection that finishes after this
        call began, so a burst of Refresh clicks causes one scrape.
        """
        asked_at = self._clock()
        # A fresh request accepts only results stored after it was asked for.
        not_before = asked_at if fresh else float("-inf")
        if not fresh:
            entry = self._ready(cluster, context, ttl_seconds, not_before)
            if entry is not None:
                _record_cache("hit")
                return self._result(entry)
        _record_cache("miss")

        lock_key = self.lock_key(cluster, context)
        token = uuid.uuid4().hex.encode("ascii")
        deadline = time.monotonic() + self.wait_seconds
        pause_seconds = 0.02
        while True:
            if self._kv.put_if_absent(lock_key, token, self.lock_ttl_seconds):
                try:
                    # The previous holder may have stored a result between our read and our
                    # lock: use it instead of collecting again.
                    entry = self._ready(cluster, context, ttl_seconds, not_before)
                    if entry is not None:
                        _record_cache("shared")
                        return self._result(entry)
                    return self._collect_and_store(cluster, context, collect, ttl_seconds)
                finally:
                    self._kv.delete_if_equals(lock_key, token)
            if time.monotonic() >= deadline:
                break
            self._sleep(pause_seconds)
            pause_seconds = min(pause_seconds * 1.5, 0.2)
            entry = self._ready(cluster, context, ttl_seconds, not_before)
            if entry is not None:
                _record_cache("shared")
                return self._result(entry)
        log.warning(
            "waited %.0f s for another collection of cluster %s; collecting without the lock",
            self.wait_seconds,
            cluster,
        )
        return self._collect_and_store(cluster, context, collect, ttl_seconds)

    def _collect_and_store(
        self, cluster: str, context: str | None, collect: Callable[[], M], ttl_seconds: float
    ) -> tuple[M, float]:
        started = time.monotonic()
        try:
            metrics = collect()
        except Exception as error:
            _record_scrape(cluster, "error", time.monotonic() - started)
            if isinstance(error, ClusterError) and error.message:
                # A cluster failure explained for the user is shared with the requests waiting
                # on it. Anything else (a bug, or a refusal meant for this requester alone,
                # such as a rate limit) is not: the next request tries by itself.
                failure = _Entry(self._clock(), None, error.message)
                self._write(self.failure_key(cluster, context), failure, self.failure_ttl_seconds)
            raise
        _record_scrape(cluster, "ok", time.monotonic() - started)
        entry = _Entry(self._clock(), metrics.to_json(), None)
        self._write(self.entry_key(cluster, context), entry, ttl_seconds)
        return metrics, 0.0
