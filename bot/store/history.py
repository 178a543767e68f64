"""Summary history per cluster in the shared store: compressed snapshots, bounded, with TTLs.

Each kept snapshot is one key (``history:<cluster>:<context>:<ms>``, under the store's prefix)
holding ``core.history.snapshot.encode_snapshot`` bytes; one index key per cluster and context lists
the kept times. Writing applies ``core.history.retention`` at once: the snapshots it drops are
deleted, so a cluster never has more than ``recent_snapshots + daily_days`` of them. Every key
also carries a TTL of the retention horizon, so a cluster nobody asks about any more leaves
nothing behind.

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
from core.history.retention import horizon_seconds, kept_times, should_record
from core.history.snapshot import (
    Snapshot,
    SnapshotFormatError,
    decode_snapshot,
    encode_snapshot,
    snapshot_of,
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

    # -- writing ---------------------------------------------------------------------------

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
