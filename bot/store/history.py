"""Summary history per cluster in the shared store: compressed snapshots, bounded, with TTLs.

Each kept snapshot is one key (``history:<cluster>:<context>:<ms>``, under the store's prefix)
holding ``core.history.snapshot.encode_snapshot`` bytes; one index key per cluster and context lists
the kept times. Writing applies ``core.history.retention`` at once: the snapshots it drops are
deleted, so a cluster never has more than ``recent_snapshots + daily_days`` of them. Every key
also carries a TTL of the retention horizon, so a cluster nobody asks about any more leaves
nothing behind.

Beside them, for GPU-hours, each recorded snapshot's usage part (``usage_part``: totals,
namespaces, per-model holdings, quotas; a few KB) is appended to one key per UTC day
(``usage:<cluster>:<context>:<day>``) that lives ``usage_days`` days, so a 30-day report
counts every recorded snapshot while the full snapshots stay few.

Any replica may record; a short lock (``put_if_absent``) makes two replicas that finish a
collection together write one snapshot, not two. Recording is a side effect of answering: it
never raises (``record_collection``), and a failure is logged, not shown.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

from bot.store import codec
from bot.store.keys import key_part
from bot.store.kv import KeyValueStore
from core.history.retention import SECONDS_PER_DAY, horizon_seconds, kept_times, should_record
from core.history.snapshot import (
    Snapshot,
    SnapshotFormatError,
    decode_snapshot,
    decode_snapshots,
    encode_snapshot,
    encode_snapshots,
    snapshot_of,
    usage_part,
)
from core.model import Summary
from core.settings import History

log = logging.getLogger("hami_summary.history")

INDEX_KIND = "history-index"
LOCK_TTL_SECONDS = 30.0
DEFAULT_POLICY = History()


def _times_of(payload: dict[str, Any] | None) -> list[float]:
    raw = payload.get("times") if payload is not None else None
    if not isinstance(raw, list):
        return []
    return [float(t) for t in raw if isinstance(t, int | float) and not isinstance(t, bool)]


class SnapshotHistory:
    """The kept snapshots of each (cluster, context), in ``kv``."""

    def __init__(
        self,
        kv: KeyValueStore,
        *,
        policy: History = DEFAULT_POLICY,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._kv = kv
        self.policy = policy
        self._clock = clock

    # -- keys ------------------------------------------------------------------------------

    def _base(self, cluster: str, context: str | None) -> str:
        return f"history:{key_part(cluster)}:{key_part(context)}"

    def index_key(self, cluster: str, context: str | None = None) -> str:
        return f"history-index:{key_part(cluster)}:{key_part(context)}"

    def snapshot_key(self, cluster: str, context: str | None, taken_at: float) -> str:
        return f"{self._base(cluster, context)}:{round(taken_at * 1000)}"

    def _lock_key(self, cluster: str, context: str | None) -> str:
        return f"history-lock:{key_part(cluster)}:{key_part(context)}"

    # -- reading ---------------------------------------------------------------------------

    def times(self, cluster: str, context: str | None = None) -> list[float]:
        """The kept snapshot times, newest first (an unreadable index reads as empty)."""
        payload = codec.decode(INDEX_KIND, self._kv.get(self.index_key(cluster, context)))
        return sorted(_times_of(payload), reverse=True)

    def load(self, cluster: str, context: str | None, taken_at: float) -> Snapshot | None:
        """One kept snapshot, or None when it expired or another release wrote it."""
        data = self._kv.get(self.snapshot_key(cluster, context, taken_at))
        if data is None:
            return None
        try:
            return decode_snapshot(data)
        except SnapshotFormatError as error:
            log.info(
                "ignoring a history snapshot of %s this release cannot read: %s", cluster, error
            )
            return None

    def snapshots(self, cluster: str, context: str | None = None) -> list[Snapshot]:
        """Every readable kept snapshot, oldest first (for trends)."""
        found = (self.load(cluster, context, t) for t in sorted(self.times(cluster, context)))
        return [s for s in found if s is not None]

    def at_or_before(self, cluster: str, context: str | None, moment: float) -> Snapshot | None:
        """The newest kept snapshot taken at or before ``moment``; else the oldest kept one
        (the caller says how far back the history reaches); None without history."""
        times = self.times(cluster, context)
        candidates = [t for t in times if t <= moment] + sorted(t for t in times if t > moment)
        for taken_at in candidates:
            found = self.load(cluster, context, taken_at)
            if found is not None:
                return found
        return None

    def usage_key(self, cluster: str, context: str | None, day: int) -> str:
        return f"usage:{key_part(cluster)}:{key_part(context)}:{day}"

    def _usage_day(self, cluster: str, context: str | None, day: int) -> list[Snapshot]:
        data = self._kv.get(self.usage_key(cluster, context, day))
        if data is None:
            return []
        try:
            return decode_snapshots(data)
        except SnapshotFormatError as error:
            log.info("ignoring usage records of %s this release cannot read: %s", cluster, error)
            return []

    def usage_snapshots(
        self,
        cluster: str,
        context: str | None,
        since: float,
        until: float,
        kept: list[Snapshot] | None = None,
    ) -> list[Snapshot]:
        """The usage records of [``since``, ``until``] and the one before ``since`` (its
        figures hold into the period), with the full snapshots kept in that time (``kept``,
        when the caller has read them already); oldest first, one per time (a full snapshot
        where both exist)."""
        first_day = int(since // SECONDS_PER_DAY) - 1  # the day before may hold the one before
        found: dict[float, Snapshot] = {}
        for day in range(first_day, int(until // SECONDS_PER_DAY) + 1):
            for record in self._usage_day(cluster, context, day):
                found[record.taken_at] = record
        for snapshot in kept if kept is not None else self.snapshots(cluster, context):
            found[snapshot.taken_at] = snapshot
        before = [t for t in found if t < since]
        start = max(before) if before else since
        return [found[t] for t in sorted(found) if start <= t <= until]

    # -- writing ---------------------------------------------------------------------------

    def _append_usage(self, cluster: str, context: str | None, snapshot: Snapshot) -> None:
        """Add ``snapshot``'s usage part to its day (the caller holds the history lock)."""
        day = int(snapshot.taken_at // SECONDS_PER_DAY)
        records = [
            r for r in self._usage_day(cluster, context, day) if r.taken_at != snapshot.taken_at
        ]
        records.append(usage_part(snapshot))
        records.sort(key=lambda r: r.taken_at)
        ttl = (self.policy.usage_days + 1) * SECONDS_PER_DAY
        self._kv.put(self.usage_key(cluster, context, day), encode_snapshots(records), ttl)

    def wants(self, cluster: str, context: str | None, taken_at: float) -> bool:
        """Whether a snapshot taken at ``taken_at`` would be kept (one read of the index)."""
        return should_record(self.times(cluster, context), taken_at, self.policy)

    def record(self, cluster: str, context: str | None, snapshot: Snapshot) -> bool:
        """Store ``snapshot`` and apply retention; False when not needed or another replica
        is recording this cluster right now."""
        lock, token = self._lock_key(cluster, context), uuid.uuid4().hex.encode("ascii")
        if not self._kv.put_if_absent(lock, token, LOCK_TTL_SECONDS):
            return False
        try:
            times = self.times(cluster, context)
            if not should_record(times, snapshot.taken_at, self.policy):
                return False
            ttl = horizon_seconds(self.policy)
            self._kv.put(
                self.snapshot_key(cluster, context, snapshot.taken_at),
                encode_snapshot(snapshot),
                ttl,
            )
            now = max(self._clock(), snapshot.taken_at)
            kept = kept_times([*times, snapshot.taken_at], now, self.policy)
            for dropped in set(times) - set(kept):
                self._kv.delete(self.snapshot_key(cluster, context, dropped))
            index = codec.encode(INDEX_KIND, {"times": kept})
            self._kv.put(self.index_key(cluster, context), index, ttl)
            self._append_usage(cluster, context, snapshot)
            return True
        finally:
            self._kv.delete_if_equals(lock, token)

    def record_collection(
        self,
        cluster: str,
        context: str | None,
        taken_at: float,
        summary: Callable[[], Summary],
    ) -> bool:
        """Record the unfiltered ``summary()`` of a live collection when history wants one.

        ``summary`` is called only then (at most once per ``min_spacing_minutes``). Never
        raises: history is a side effect of an answer and must not cost it.
        """
        try:
            if not self.wants(cluster, context, taken_at):
                return False
            return self.record(cluster, context, snapshot_of(summary(), taken_at))
        except Exception as error:
            log.warning("could not record the history of cluster %s: %s", cluster, error)
            return False
