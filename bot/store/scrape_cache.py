"""The shared scrape cache with single-flight collection (issue 5, "Redis store").

Per (cluster, context) the last collected metrics are kept, zlib-compressed and versioned
(``bot.store.codec``, plus ``CollectedMetrics``' own JSON version: an entry from another release
is a miss, never misread), with the time they were collected so replies can say "scraped 42 s
ago".

Single-flight: many requests for one cluster, on any replica, cause one collection. The first
takes a lock (``put_if_absent`` with a random token and a TTL) and collects; the others poll for
its result and use it. The wait is bounded: past ``wait_seconds`` a waiter collects by itself
rather than leave a Slack user without an answer. A holder that dies (OOM-killed pod, kill -9)
never releases its lock, so the lock's TTL frees it; a holder releases only its own lock
(``delete_if_equals`` with its token), never one a later holder took after its own expired.

A collection that fails with a message for the user (a ``ClusterError`` such as "no HAMi
scheduler found") is shared the same way for ``failure_ttl_seconds``, so fifty people asking
about an unreachable cluster cause one failed attempt, not fifty in a row.
"""

from __future__ import annotations

import hashlib
import logging
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bot.clusters.errors import ClusterError, CollectionError
from bot.store import codec
from bot.store.kv import KeyValueStore

if TYPE_CHECKING:
    from bot.clusters.collect import CollectedMetrics

log = logging.getLogger("hami_summary.scrape_cache")

ENTRY_KIND = "scrape"


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


def _decode_collected(data: Mapping[str, Any]) -> CollectedMetrics:
    # Imported here: bot.clusters.collect pulls in the Kubernetes client, which the store
    # itself does not need.
    from bot.clusters.collect import CollectedMetrics

    return CollectedMetrics.from_json(data)


def _record_scrape(cluster: str, result: str, duration_seconds: float) -> None:
    from bot.ops.metrics import METRICS

    METRICS.scrapes.labels(cluster=cluster, result=result).inc()
    METRICS.scrape_duration_seconds.labels(cluster=cluster).observe(duration_seconds)


def _record_cache(result: str) -> None:
    from bot.ops.metrics import METRICS

    METRICS.cache_requests.labels(result=result).inc()


class ScrapeCache:
    """Collected metrics per (cluster, context), shared through ``kv`` by every replica."""

    def __init__(
        self,
        kv: KeyValueStore,
        prefix: str = "hami-summary",
        *,
        lock_ttl_seconds: float = 60.0,
        wait_seconds: float = 30.0,
        failure_ttl_seconds: float = 10.0,
        clock: Callable[[], float] = time.time,
        decode: Callable[[Mapping[str, Any]], CollectedMetrics] = _decode_collected,
    ) -> None:
        self._kv = kv
        self._prefix = prefix.rstrip(":")
        self.lock_ttl_seconds = lock_ttl_seconds
        self.wait_seconds = wait_seconds
        self.failure_ttl_seconds = failure_ttl_seconds
        self._clock = clock
        self._decode = decode

    # -- keys and entries ------------------------------------------------------------------

    def _suffix(self, cluster: str, context: str | None, variant: str) -> str:
        parts = f"{_key_part(cluster)}:{_key_part(context)}"
        return f"{parts}:{_key_part(variant)}" if variant else parts

    def entry_key(self, cluster: str, context: str | None, variant: str = "") -> str:
        return f"{self._prefix}:scrape:{self._suffix(cluster, context, variant)}"

    def failure_key(self, cluster: str, context: str | None, variant: str = "") -> str:
        # Failures sit beside, not over, the last good entry: a failed Refresh must not hide
        # data that is still within its TTL from the next ordinary request.
        return f"{self._prefix}:scrape-failed:{self._suffix(cluster, context, variant)}"

    def lock_key(self, cluster: str, context: str | None, variant: str = "") -> str:
        return f"{self._prefix}:scrape-lock:{self._suffix(cluster, context, variant)}"

    def _read(self, key: str) -> _Entry | None:
        payload = codec.decode(ENTRY_KIND, self._kv.get(key))
        if payload is None:
            return None
        stored_at = payload.get("stored_at")
        metrics = payload.get("metrics")
        error = payload.get("error")
        if not isinstance(stored_at, int | float) or isinstance(stored_at, bool):
            return None
        if metrics is not None and not isinstance(metrics, dict):
            return None
        if error is not None and not isinstance(error, str):
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
        self, keys: tuple[str, str], ttl_seconds: float, not_before: float
    ) -> tuple[CollectedMetrics, float] | None:
        """A stored result this request may use: data within its TTL, else a recent failure.

        ``not_before`` (a Unix time) rejects anything stored earlier; fresh requests pass the
        time they were asked so that they only take part in a collection that ends later.
        Raises ``ScrapeFailedError`` for a shared failure.
        """
        entry_key, failure_key = keys
        now = self._clock()
        entry = self._read(entry_key)
        if (
            entry is not None
            and entry.metrics is not None
            and entry.stored_at >= not_before
            and now - entry.stored_at <= ttl_seconds
        ):
            try:
                return self._decode(entry.metrics), max(0.0, now - entry.stored_at)
            except (KeyError, TypeError, ValueError) as error:
                # Written by a release with another CollectedMetrics shape: a miss.
                log.info("ignoring a cached scrape this release cannot read: %s", error)
        failure = self._read(failure_key)
        if (
            failure is not None
            and failure.error is not None
            and failure.stored_at >= not_before
            and now - failure.stored_at <= self.failure_ttl_seconds
        ):
            raise ScrapeFailedError(failure.error)
        return None

    # -- the one public operation ----------------------------------------------------------

    def get_or_collect(
        self,
        cluster: str,
        context: str | None,
        collect: Callable[[], CollectedMetrics],
        ttl_seconds: float,
        fresh: bool = False,
        *,
        variant: str = "",
    ) -> tuple[CollectedMetrics, float]:
        """``(metrics, age in seconds)`` from the cache, a concurrent collection, or ``collect``.

        ``fresh`` skips what is cached but still joins a collection that finishes after this
        call began, so a burst of Refresh clicks causes one scrape. ``variant`` separates
        collections of one cluster that differ in content (e.g. ``"runtime"`` when the vGPU
        monitors are scraped too), so a request never gets less than it asked for.
        """
        keys = (
            self.entry_key(cluster, context, variant),
            self.failure_key(cluster, context, variant),
        )
        # A fresh request accepts only results stored after it was asked for.
        not_before = self._clock() if fresh else float("-inf")
        if not fresh:
            found = self._ready(keys, ttl_seconds, not_before)
            if found is not None:
                _record_cache("hit")
                return found
        _record_cache("miss")

        lock_key = self.lock_key(cluster, context, variant)
        token = uuid.uuid4().hex.encode("ascii")
        deadline = time.monotonic() + self.wait_seconds
        pause_seconds = 0.02
        while True:
            if self._kv.put_if_absent(lock_key, token, self.lock_ttl_seconds):
                try:
                    # The previous holder may have stored a result between our read and our
                    # lock: use it instead of collecting again.
                    found = self._ready(keys, ttl_seconds, not_before)
                    if found is not None:
                        _record_cache("shared")
                        return found
                    return self._collect_and_store(cluster, keys, collect, ttl_seconds)
                finally:
                    self._kv.delete_if_equals(lock_key, token)
            if time.monotonic() >= deadline:
                break
            time.sleep(pause_seconds)
            pause_seconds = min(pause_seconds * 1.5, 0.2)
            found = self._ready(keys, ttl_seconds, not_before)
            if found is not None:
                _record_cache("shared")
                return found
        log.warning(
            "waited %.0f s for another collection of cluster %s; collecting without the lock",
            self.wait_seconds,
            cluster,
        )
        return self._collect_and_store(cluster, keys, collect, ttl_seconds)

    def _collect_and_store(
        self,
        cluster: str,
        keys: tuple[str, str],
        collect: Callable[[], CollectedMetrics],
        ttl_seconds: float,
    ) -> tuple[CollectedMetrics, float]:
        entry_key, failure_key = keys
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
                self._write(failure_key, failure, self.failure_ttl_seconds)
            raise
        _record_scrape(cluster, "ok", time.monotonic() - started)
        self._write(entry_key, _Entry(self._clock(), metrics.to_json(), None), ttl_seconds)
        return metrics, 0.0
