"""Cluster collections in the shared store: one scrape per cluster, context and variant serves
every request on every replica for the entry's cache TTL.

The store's single-flight cache (``bot.store.single_flight``) keeps JSON documents and knows no
cluster types; this module is what adapts ``CollectedMetrics`` to it: how a collection is
written and read back (``CollectedMetrics.to_json`` / ``from_json``; a document of another
release is a miss), which failures are shared with the requests waiting on the same scrape (a
``ClusterError`` explained for the user, such as "no HAMi scheduler found"), and what a waiter
gets when the scrape it waited on failed (``ScrapeFailedError``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from bot.clusters.collect import CollectedMetrics
from bot.clusters.errors import ClusterError, CollectionError
from bot.store.kv import KeyValueStore
from bot.store.single_flight import (
    DEFAULT_MAX_HOLD_SECONDS,
    DEFAULT_MEMO_ENTRIES,
    SharedFailure,
    SingleFlightCache,
)

NAMESPACE = "scrape"


class ScrapeFailedError(CollectionError):
    """Another request's collection for this cluster failed; ``message`` is its explanation.

    A ``CollectionError``, so handlers answer it exactly like a failure of their own scrape.
    """


def shared_message(error: Exception) -> str | None:
    """The message waiters get when ``error`` ended the scrape they waited on; None when it is
    not theirs to hear (a bug, or a refusal meant for one requester, such as a rate limit)."""
    if isinstance(error, ClusterError) and error.message:
        return error.message
    return None


class ScrapeCache:
    """Collected metrics per (cluster, context, variant), shared through ``kv``."""

    def __init__(
        self,
        kv: KeyValueStore,
        *,
        lock_ttl_seconds: float = 60.0,
        max_hold_seconds: float = DEFAULT_MAX_HOLD_SECONDS,
        wait_seconds: float = 30.0,
        failure_ttl_seconds: float = 10.0,
        clock: Callable[[], float] = time.time,
        decode: Callable[[Mapping[str, Any]], CollectedMetrics] = CollectedMetrics.from_json,
        memo_entries: int = DEFAULT_MEMO_ENTRIES,
    ) -> None:
        self._cache: SingleFlightCache[CollectedMetrics] = SingleFlightCache(
            kv,
            NAMESPACE,
            encode=CollectedMetrics.to_json,
            decode=decode,
            shared_message=shared_message,
            lock_ttl_seconds=lock_ttl_seconds,
            max_hold_seconds=max_hold_seconds,
            wait_seconds=wait_seconds,
            failure_ttl_seconds=failure_ttl_seconds,
            clock=clock,
            memo_entries=memo_entries,
        )
        self.entry_key = self._cache.entry_key
        self.meta_key = self._cache.meta_key
        self.failure_key = self._cache.failure_key
        self.lock_key = self._cache.lock_key

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
        """``(metrics, age in seconds)`` from the cache, a concurrent scrape, or ``collect``.

        ``fresh`` skips what is cached but still joins a scrape that finishes after this call
        began, so a burst of Refresh clicks causes one scrape. ``variant`` separates
        collections of one cluster that differ in content (e.g. ``"runtime"`` when the vGPU
        monitors are scraped too), so a request never gets less than it asked for. Raises
        ``ScrapeFailedError`` when the scrape this request waited on failed.
        """
        try:
            return self._cache.get_or_collect(
                cluster, context, collect, ttl_seconds, fresh, variant=variant
            )
        except SharedFailure as failure:
            raise ScrapeFailedError(failure.message) from None
