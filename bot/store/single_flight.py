"""A shared cache with single-flight collection, for values that are costly to produce.

The store knows nothing of what it keeps: the owner (``bot.clusters.scrape_cache`` for cluster
collections) hands it functions that turn a value into a JSON document and back, says which
failures may be shared, and names the keys' namespace. Per (name, context, variant) the last
value is kept, zlib-compressed and versioned (``bot.store.codec``; a document the owner cannot
read any more is a miss, never misread), with the time it was produced so answers can say how
old it is.

Single-flight: many requests for one name, on any replica, cause one collection. The first
takes a lock (``put_if_absent`` with a random token and a TTL) and collects; the others poll for
its result and use it. The wait is bounded: past ``wait_seconds`` a waiter collects by itself
rather than leave a Slack user without an answer. A holder that dies (OOM-killed pod, kill -9)
never releases its lock, so the lock's TTL frees it; a holder releases only its own lock
(``delete_if_equals`` with its token), never one a later holder took after its own expired.
A collection may outlast the lock's TTL (a slow API server, nvidia-smi in many pods), so while it
runs a renewal thread extends the lock every third of its TTL (``extend_if_equals``: only while
the lock still holds the holder's token): a live holder keeps its lock however long the
collection takes, and a dead one loses it one TTL after its last renewal.

Reading a large cached value costs more than its transfer: a 1,000-node exposition is about
15 MB of text once decompressed. Each entry therefore has a small companion key (``-meta``)
with the collection's id and time; a replica that already decoded that collection (kept in a
small in-process memo) answers from memory after reading only the companion, and hands out the
*same* object, so whatever is derived from it (the summary, the chart) can be memoised by
identity too.

A collection that fails with a message the owner says may be shared (for clusters: a
``ClusterError`` such as "no HAMi scheduler found") is shared the same way for
``failure_ttl_seconds``, so fifty people asking about an unreachable cluster cause one failed
attempt, not fifty in a row; the waiters get ``SharedFailure`` with that message.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from bot.ops.metrics import METRICS, OpsMetrics
from bot.store import codec
from bot.store.keys import key_part
from bot.store.kv import KeyValueStore

log = logging.getLogger("hami_summary.scrape_cache")

T = TypeVar("T")

# Decoded collections kept per process: each may hold tens of MB of text.
DEFAULT_MEMO_ENTRIES = 4
# Renewals stop after this long: twice the longest scrape timeout the settings allow
# (``bot.config.MAX_SCRAPE_TIMEOUT_SECONDS``), room for nvidia-smi runs after the scrape.
DEFAULT_MAX_HOLD_SECONDS = 600.0


class LockRenewal:
    """Keeps a held lock alive while its holder works: every ``ttl_seconds / 3`` the lock's TTL
    is reset, as long as it still holds ``token``, for at most ``max_hold_seconds`` (a
    collection that hangs past every timeout must not hold its cluster's lock for ever). Use as
    a context manager around the work; leaving it stops the renewals (the holder then releases
    the lock itself)."""

    def __init__(
        self,
        kv: KeyValueStore,
        key: str,
        token: bytes,
        ttl_seconds: float,
        max_hold_seconds: float = float("inf"),
    ) -> None:
        self._kv = kv
        self._key = key
        self._token = token
        self._ttl_seconds = ttl_seconds
        self._give_up_at = time.monotonic() + max_hold_seconds
        self._stopped = threading.Event()
        self._thread = threading.Thread(
            target=self._renew, name="hami-scrape-lock-renewal", daemon=True
        )

    def __enter__(self) -> LockRenewal:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stopped.set()
        self._thread.join()

    def _renew(self) -> None:
        while not self._stopped.wait(self._ttl_seconds / 3):
            if time.monotonic() >= self._give_up_at:
                log.warning("stopped renewing the scrape lock %s: held too long", self._key)
                return
            try:
                still_ours = self._kv.extend_if_equals(self._key, self._token, self._ttl_seconds)
            except Exception as error:  # a store hiccup: the next renewal may succeed
                log.warning("could not extend the scrape lock %s: %s", self._key, error)
                continue
            if not still_ours:
                # Expired (the store stalled longer than the TTL) and maybe taken by another
                # replica: that one's collection proceeds too; ours still finishes and stores.
                log.warning("lost the scrape lock %s while collecting", self._key)
                return


class SharedFailure(Exception):
    """Another request's collection of this value failed; ``message`` is its explanation."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True, slots=True)
class _Entry:
    stored_at: float  # Unix time the collection finished
    value: dict[str, Any] | None  # the owner's JSON document
    error: str | None
    collection_id: str | None = None


@dataclass(frozen=True, slots=True)
class _Keys:
    entry: str
    meta: str
    failure: str
    lock: str


class SingleFlightCache(Generic[T]):
    """Values per (name, context, variant), shared through ``kv`` by every replica.

    ``namespace`` begins every key (``<namespace>:``, ``<namespace>-meta:``, ``-failed:``,
    ``-lock:``) and names the stored kinds. ``encode`` and ``decode`` turn a value into a JSON
    document and back (``decode`` raises ``KeyError``, ``TypeError`` or ``ValueError`` for a
    document it cannot read). ``shared_message`` says whether a failed collection may be shared
    with the requests waiting on it: the message to give them, or None.
    """

    def __init__(
        self,
        kv: KeyValueStore,
        namespace: str,
        *,
        encode: Callable[[T], dict[str, Any]],
        decode: Callable[[Mapping[str, Any]], T],
        shared_message: Callable[[Exception], str | None] = lambda error: None,
        lock_ttl_seconds: float = 60.0,
        max_hold_seconds: float = DEFAULT_MAX_HOLD_SECONDS,
        wait_seconds: float = 30.0,
        failure_ttl_seconds: float = 10.0,
        clock: Callable[[], float] = time.time,
        memo_entries: int = DEFAULT_MEMO_ENTRIES,
        metrics: OpsMetrics = METRICS,
    ) -> None:
        self._kv = kv
        self._namespace = namespace
        self._entry_kind = namespace
        self._meta_kind = f"{namespace}-meta"
        self._encode = encode
        self._shared_message = shared_message
        self._metrics = metrics
        self.lock_ttl_seconds = lock_ttl_seconds
        self.max_hold_seconds = max_hold_seconds
        self.wait_seconds = wait_seconds
        self.failure_ttl_seconds = failure_ttl_seconds
        self._clock = clock
        self._decode = decode
        self._memo: OrderedDict[str, T] = OrderedDict()
        self._memo_entries = memo_entries
        self._memo_lock = threading.Lock()
        self._decode_lock = threading.Lock()

    # -- keys and entries ------------------------------------------------------------------

    def _suffix(self, name: str, context: str | None, variant: str) -> str:
        parts = f"{key_part(name)}:{key_part(context)}"
        return f"{parts}:{key_part(variant)}" if variant else parts

    def entry_key(self, name: str, context: str | None, variant: str = "") -> str:
        return f"{self._namespace}:{self._suffix(name, context, variant)}"

    def meta_key(self, name: str, context: str | None, variant: str = "") -> str:
        return f"{self._namespace}-meta:{self._suffix(name, context, variant)}"

    def failure_key(self, name: str, context: str | None, variant: str = "") -> str:
        # Failures sit beside, not over, the last good entry: a failed Refresh must not hide
        # data that is still within its TTL from the next ordinary request.
        return f"{self._namespace}-failed:{self._suffix(name, context, variant)}"

    def lock_key(self, name: str, context: str | None, variant: str = "") -> str:
        return f"{self._namespace}-lock:{self._suffix(name, context, variant)}"

    def _keys(self, name: str, context: str | None, variant: str) -> _Keys:
        return _Keys(
            entry=self.entry_key(name, context, variant),
            meta=self.meta_key(name, context, variant),
            failure=self.failure_key(name, context, variant),
            lock=self.lock_key(name, context, variant),
        )

    def _read(self, key: str, kind: str) -> _Entry | None:
        payload = codec.decode(kind, self._kv.get(key))
        if payload is None:
            return None
        stored_at = payload.get("stored_at")
        value = payload.get("value")
        error = payload.get("error")
        if not isinstance(stored_at, int | float) or isinstance(stored_at, bool):
            return None
        if value is not None and not isinstance(value, dict):
            return None
        if error is not None and not isinstance(error, str):
            return None
        collection_id = payload.get("collection_id")
        if not isinstance(collection_id, str):
            collection_id = None
        return _Entry(float(stored_at), value, error, collection_id)

    def _write(self, key: str, entry: _Entry, ttl_seconds: float, kind: str) -> None:
        value = codec.encode(
            kind,
            {
                "stored_at": entry.stored_at,
                "value": entry.value,
                "error": entry.error,
                "collection_id": entry.collection_id,
            },
            compress=entry.value is not None,
        )
        self._kv.put(key, value, ttl_seconds)

    def _remember(self, collection_id: str | None, value: T) -> None:
        if collection_id is None or self._memo_entries <= 0:
            return
        with self._memo_lock:
            self._memo[collection_id] = value
            self._memo.move_to_end(collection_id)
            while len(self._memo) > self._memo_entries:
                self._memo.popitem(last=False)

    def _recall(self, collection_id: str) -> T | None:
        with self._memo_lock:
            found = self._memo.get(collection_id)
            if found is not None:
                self._memo.move_to_end(collection_id)
            return found

    def _ready(self, keys: _Keys, ttl_seconds: float, not_before: float) -> tuple[T, float] | None:
        """A stored result this request may use: data within its TTL, else a recent failure.

        ``not_before`` (a Unix time) rejects anything stored earlier; fresh requests pass the
        time they were asked so that they only take part in a collection that ends later.
        Raises ``SharedFailure`` for a shared failure.
        """
        meta = self._read(keys.meta, self._meta_kind)
        # The clock is read after what it is compared with: read before, a result stored while
        # the read was on its way would look younger than it is (an age below zero).
        now = self._clock()

        def usable(stored_at: float) -> bool:
            return stored_at >= not_before and now - stored_at <= ttl_seconds

        current_id, current_age = None, 0.0
        if meta is not None and meta.collection_id is not None and usable(meta.stored_at):
            current_id, current_age = meta.collection_id, max(0.0, now - meta.stored_at)
        if current_id is not None and (known := self._recall(current_id)) is not None:
            return known, current_age
        # One decode at a time per process: requests arriving together at a replica that has
        # not seen this collection yet wait for the first decode instead of each decoding
        # the same megabytes (it is CPU-bound, so running them side by side gains nothing).
        with self._decode_lock:
            if current_id is not None and (known := self._recall(current_id)) is not None:
                return known, current_age
            entry = self._read(keys.entry, self._entry_kind)
            now = self._clock()
            if entry is not None and entry.value is not None and usable(entry.stored_at):
                try:
                    value = self._decode(entry.value)
                except (KeyError, TypeError, ValueError) as error:
                    # Written by a release whose owner wrote another shape: a miss.
                    log.info(
                        "ignoring a cached %s this release cannot read: %s", self._namespace, error
                    )
                else:
                    self._remember(entry.collection_id, value)
                    return value, max(0.0, now - entry.stored_at)
        failure = self._read(keys.failure, self._entry_kind)
        now = self._clock()
        if (
            failure is not None
            and failure.error is not None
            and failure.stored_at >= not_before
            and now - failure.stored_at <= self.failure_ttl_seconds
        ):
            raise SharedFailure(failure.error)
        return None

    # -- the one public operation ----------------------------------------------------------

    def get_or_collect(
        self,
        name: str,
        context: str | None,
        collect: Callable[[], T],
        ttl_seconds: float,
        fresh: bool = False,
        *,
        variant: str = "",
    ) -> tuple[T, float]:
        """``(value, age in seconds)`` from the cache, a concurrent collection, or ``collect``.

        ``fresh`` skips what is cached but still joins a collection that finishes after this
        call began, so a burst of Refresh clicks causes one collection. ``variant`` separates
        collections of one name that differ in content, so a request never gets less than it
        asked for. Raises ``SharedFailure`` when another request's collection failed with a
        message to share, and whatever ``collect`` raises.
        """
        keys = self._keys(name, context, variant)
        # A fresh request accepts only results stored after it was asked for.
        not_before = self._clock() if fresh else float("-inf")
        if not fresh:
            found = self._ready(keys, ttl_seconds, not_before)
            if found is not None:
                self._record_cache("hit")
                return found
        self._record_cache("miss")
        return self._collect_single_flight(name, keys, collect, ttl_seconds, not_before)

    def _collect_single_flight(
        self,
        name: str,
        keys: _Keys,
        collect: Callable[[], T],
        ttl_seconds: float,
        not_before: float,
    ) -> tuple[T, float]:
        """Collect under the lock, or take the result of whoever holds it; past
        ``wait_seconds`` of waiting, collect without it."""
        token = uuid.uuid4().hex.encode("ascii")
        deadline = time.monotonic() + self.wait_seconds
        pause_seconds = 0.02
        while True:
            if self._kv.put_if_absent(keys.lock, token, self.lock_ttl_seconds):
                try:
                    # The previous holder may have stored a result between our read and our
                    # lock: use it instead of collecting again.
                    found = self._ready(keys, ttl_seconds, not_before)
                    if found is not None:
                        self._record_cache("shared")
                        return found
                    with LockRenewal(
                        self._kv, keys.lock, token, self.lock_ttl_seconds, self.max_hold_seconds
                    ):
                        return self._collect_and_store(name, keys, collect, ttl_seconds)
                finally:
                    self._kv.delete_if_equals(keys.lock, token)
            if time.monotonic() >= deadline:
                break
            time.sleep(pause_seconds)
            pause_seconds = min(pause_seconds * 1.5, 0.2)
            found = self._ready(keys, ttl_seconds, not_before)
            if found is not None:
                self._record_cache("shared")
                return found
        log.warning(
            "waited %.0f s for another collection of %s; collecting without the lock",
            self.wait_seconds,
            name,
        )
        return self._collect_and_store(name, keys, collect, ttl_seconds)

    def _record_cache(self, result: str) -> None:
        self._metrics.cache_requests.labels(result=result).inc()

    def _record_collection(self, name: str, result: str, duration_seconds: float) -> None:
        self._metrics.scrapes.labels(cluster=name, result=result).inc()
        self._metrics.scrape_duration_seconds.labels(cluster=name).observe(duration_seconds)

    def _collect_and_store(
        self,
        name: str,
        keys: _Keys,
        collect: Callable[[], T],
        ttl_seconds: float,
    ) -> tuple[T, float]:
        started = time.monotonic()
        try:
            value = collect()
        except Exception as error:
            self._record_collection(name, "error", time.monotonic() - started)
            message = self._shared_message(error)
            if message:
                # A failure explained for the user is shared with the requests waiting on it.
                # Anything else (a bug, or a refusal meant for this requester alone, such as a
                # rate limit) is not: the next request tries by itself.
                failure = _Entry(self._clock(), None, message)
                self._write(keys.failure, failure, self.failure_ttl_seconds, self._entry_kind)
            raise
        self._record_collection(name, "ok", time.monotonic() - started)
        stored_at, collection_id = self._clock(), uuid.uuid4().hex
        entry = _Entry(stored_at, self._encode(value), None, collection_id)
        self._write(keys.entry, entry, ttl_seconds, self._entry_kind)
        # The companion goes second: whoever sees it finds the entry already there.
        meta = _Entry(stored_at, None, None, collection_id)
        self._write(keys.meta, meta, ttl_seconds, self._meta_kind)
        self._remember(collection_id, value)
        return value, 0.0
