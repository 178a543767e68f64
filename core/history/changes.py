"""What changed between two snapshots of one cluster.

Namespaces that grew or shrank, pods that started or stopped holding GPUs, nodes that appeared
or disappeared, free whole GPUs per model then and now, GPUs that became inconsistent and quota
thresholds crossed, and what the scheduler's outcome counters grew by. ``compare`` only
computes; ``core.views.changes_view`` renders.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from core.history.snapshot import (
    ClusterFigures,
    InconsistentGpu,
    NamespaceFigures,
    PodFigures,
    QuotaUse,
    Snapshot,
)
from core.outcomes import Outcomes, increase

# Quota use, in percent of the limit, whose crossing is reported (either way).
QUOTA_THRESHOLDS: tuple[float, ...] = (90.0, 100.0)
# Differences below these are rounding, not change.
_CORES_EPSILON = 0.01
_MIB_EPSILON = 0.01


@dataclass(frozen=True, slots=True)
class NamespaceChange:
    namespace: str
    cores_before: float
    cores_after: float
    mem_before_mib: float
    mem_after_mib: float
    gpus_before: int
    gpus_after: int

    @property
    def cores_delta(self) -> float:
        return self.cores_after - self.cores_before

    @property
    def mem_delta_mib(self) -> float:
        return self.mem_after_mib - self.mem_before_mib

    @property
    def gpus_delta(self) -> int:
        return self.gpus_after - self.gpus_before


@dataclass(frozen=True, slots=True)
class ModelChange:
    model: str
    gpus_before: int
    gpus_after: int
    free_before: int
    free_after: int


@dataclass(frozen=True, slots=True)
class QuotaCrossing:
    namespace: str
    resource: str
    threshold_percent: float
    direction: Literal["up", "down"]
    before_percent: float
    after_percent: float
    used: float
    limit: float


@dataclass(frozen=True, slots=True)
class Changes:
    cluster: str | None
    before_at: float
    after_at: float
    totals_before: ClusterFigures
    totals_after: ClusterFigures
    namespaces: tuple[NamespaceChange, ...]  # largest change of cores first
    pods_started: tuple[PodFigures, ...]  # most GPUs, then most cores first
    pods_stopped: tuple[PodFigures, ...]
    nodes_appeared: tuple[str, ...]
    nodes_disappeared: tuple[str, ...]
    models: tuple[ModelChange, ...]  # every model in either snapshot, by name
    became_inconsistent: tuple[InconsistentGpu, ...]
    no_longer_inconsistent: tuple[InconsistentGpu, ...]
    quota_crossings: tuple[QuotaCrossing, ...]
    # What the scheduler's outcome counters grew by; None unless both snapshots have them.
    outcomes: Outcomes | None = None

    @property
    def allocation_changed(self) -> bool:
        """Whether anything beyond the time differs (the totals too: a GPU's allocation can
        change while its pod series stay the same, when the two disagree)."""
        return bool(
            self.totals_before != self.totals_after
            or self.namespaces
            or self.pods_started
            or self.pods_stopped
            or self.nodes_appeared
            or self.nodes_disappeared
            or any(
                m.free_before != m.free_after or m.gpus_before != m.gpus_after for m in self.models
            )
            or self.became_inconsistent
            or self.no_longer_inconsistent
            or self.quota_crossings
        )


def compare(
    before: Snapshot, after: Snapshot, quota_thresholds: Sequence[float] = QUOTA_THRESHOLDS
) -> Changes:
    """The differences from ``before`` to ``after`` (normally the older one first)."""
    old_pods = {(p.namespace, p.pod): p for p in before.pods}
    new_pods = {(p.namespace, p.pod): p for p in after.pods}
    old_nodes = {n.node for n in before.nodes}
    new_nodes = {n.node for n in after.nodes}
    old_bad = {g.device_uuid: g for g in before.inconsistent}
    new_bad = {g.device_uuid: g for g in after.inconsistent}
    return Changes(
        cluster=after.cluster or before.cluster,
        before_at=before.taken_at,
        after_at=after.taken_at,
        totals_before=before.totals,
        totals_after=after.totals,
        namespaces=_namespace_changes(before.namespaces, after.namespaces),
        pods_started=_largest_first(p for k, p in new_pods.items() if k not in old_pods),
        pods_stopped=_largest_first(p for k, p in old_pods.items() if k not in new_pods),
        nodes_appeared=tuple(sorted(new_nodes - old_nodes)),
        nodes_disappeared=tuple(sorted(old_nodes - new_nodes)),
        models=_model_changes(before, after),
        became_inconsistent=tuple(g for u, g in new_bad.items() if u not in old_bad),
        no_longer_inconsistent=tuple(g for u, g in old_bad.items() if u not in new_bad),
        quota_crossings=_quota_crossings(before.quotas, after.quotas, quota_thresholds),
        # Without counters in the earlier snapshot, their growth is not known (not all of it).
        outcomes=increase(before.outcomes, after.outcomes)
        if before.outcomes and after.outcomes
        else None,
    )


def _largest_first(pods: Iterable[PodFigures]) -> tuple[PodFigures, ...]:
    rows = list(pods)
    rows.sort(key=lambda p: (-p.gpus, -p.cores, -p.mem_mib, p.namespace, p.pod))
    return tuple(rows)


def _namespace_changes(
    before: Sequence[NamespaceFigures], after: Sequence[NamespaceFigures]
) -> tuple[NamespaceChange, ...]:
    empty = NamespaceFigures("", 0.0, 0.0, 0, 0)
    old = {n.namespace: n for n in before}
    new = {n.namespace: n for n in after}
    changes: list[NamespaceChange] = []
    for name in sorted(old.keys() | new.keys()):
        a, b = old.get(name, empty), new.get(name, empty)
        if (
            abs(b.cores - a.cores) >= _CORES_EPSILON
            or abs(b.mem_mib - a.mem_mib) >= _MIB_EPSILON
            or b.gpus != a.gpus
        ):
            changes.append(
                NamespaceChange(name, a.cores, b.cores, a.mem_mib, b.mem_mib, a.gpus, b.gpus)
            )
    changes.sort(key=lambda c: (-abs(c.cores_delta), -abs(c.mem_delta_mib), c.namespace))
    return tuple(changes)


def _model_changes(before: Snapshot, after: Snapshot) -> tuple[ModelChange, ...]:
    old = {m.model: m for m in before.models}
    new = {m.model: m for m in after.models}
    rows: list[ModelChange] = []
    for model in sorted(old.keys() | new.keys()):
        a, b = old.get(model), new.get(model)
        rows.append(
            ModelChange(
                model,
                a.gpus if a else 0,
                b.gpus if b else 0,
                a.free_whole if a else 0,
                b.free_whole if b else 0,
            )
        )
    return tuple(rows)


def quota_percent(use: QuotaUse | None) -> float | None:
    """Use in percent of the limit; 0 for a quota that did not exist yet, None without limit."""
    if use is None:
        return 0.0
    if use.limit is None or use.limit <= 0:
        return None
    return use.used / use.limit * 100.0


def _quota_crossings(
    before: Sequence[QuotaUse], after: Sequence[QuotaUse], thresholds: Sequence[float]
) -> tuple[QuotaCrossing, ...]:
    old = {(q.namespace, q.resource): q for q in before}
    crossings: list[QuotaCrossing] = []
    for q in after:
        now = quota_percent(q)
        then = quota_percent(old.get((q.namespace, q.resource)))
        if now is None or then is None or q.limit is None:
            continue  # without a limit on both sides there is no threshold to cross
        for threshold in sorted(thresholds):
            if then < threshold <= now:
                direction: Literal["up", "down"] = "up"
            elif now < threshold <= then:
                direction = "down"
            else:
                continue
            crossings.append(
                QuotaCrossing(
                    q.namespace, q.resource, threshold, direction, then, now, q.used, q.limit
                )
            )
    crossings.sort(key=lambda c: (c.direction != "up", -c.after_percent, c.namespace, c.resource))
    return tuple(crossings)
