"""GPU-hours per namespace (and per pod of one namespace) over kept snapshots.

What HAMi allocated is a step function of time: each snapshot's figures hold until the next
snapshot (the last one's until the report's end, the moment asked about). Between two
snapshots no further apart than ``max_gap_seconds`` the figures of the earlier one count for
the whole interval; a longer interval is a **gap**: it is reported with its start and end and
counts for nothing, never interpolated. HAMi's cores are share points of
one GPU (100 is a whole GPU), so:

* GPU-hours = allocated cores / 100 x hours (four pods at 25 % for an hour are one GPU-hour);
* GPU memory GiB-hours = allocated MiB / 1024 x hours;
* share = a namespace's GPU-hours over the cluster's GPU capacity-hours in the same covered
  time (core limits / 100 x hours).

The figures are exact when allocations change only at snapshot times.

**Idle-allocated** GPU-hours count the cores of pods the runtime data (vGPU monitor or
nvidia-smi) showed idle, over the time covered by snapshots that had runtime data; beside
them, each namespace's GPU-hours in that same measured time, so the two compare.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from itertools import pairwise
from typing import Any, TypeVar

from core.history.snapshot import ModelHolding, PodHolding, Snapshot
from core.settings import Prices
from core.summary.workloads import is_core_resource

SECONDS_PER_HOUR = 3600.0
# The model of time counted from snapshots kept before they recorded models.
UNRECORDED_MODEL = "model not recorded"
# Snapshots further apart than this many times their usual spacing leave a gap.
GAP_FACTOR = 1.5
_R = TypeVar("_R", "UsageRow", "ModelUsage", "HoldingUsage")
METHOD = (
    "GPU-hours = allocated cores / 100 x hours; GiB-hours = allocated GPU memory (GiB) x hours; "
    "each snapshot's figures hold until the next one; intervals longer than the gap limit are "
    "not counted"
)


@dataclass(frozen=True, slots=True)
class UsageRow:
    """One namespace's (or one pod's) allocation integrated over the covered time."""

    namespace: str
    pod: str | None
    gpu_hours: float
    gib_hours: float
    share_percent: float  # of the cluster's GPU capacity-hours in the covered time
    # The namespace's core quota limit (/ 100) x the time it was set; None: never set.
    quota_gpu_hours: float | None = None
    quota_use_percent: float | None = None  # its GPU-hours while limited, of quota_gpu_hours
    cost: float | None = None  # None: no prices, or one of its models has none
    # Held by pods measured idle; None: no snapshot of the period had runtime data.
    idle_gpu_hours: float | None = None
    idle_percent: float | None = None  # of its GPU-hours in the measured time


@dataclass(frozen=True, slots=True)
class ModelUsage:
    """The GPU-hours allocated on one GPU model, with what they cost."""

    model: str
    gpu_hours: float
    gib_hours: float
    capacity_gpu_hours: float  # the model's GPUs x hours
    price: float | None  # per GPU-hour; None: no price set for it
    cost: float | None


@dataclass(frozen=True, slots=True)
class HoldingUsage:
    """One namespace's GPU-hours on one GPU model."""

    namespace: str
    model: str
    gpu_hours: float
    gib_hours: float
    cost: float | None


@dataclass(frozen=True, slots=True)
class Gap:
    """Time in the report's range that no pair of close snapshots covers."""

    start: float
    end: float

    @property
    def seconds(self) -> float:
        return self.end - self.start


@dataclass(frozen=True, slots=True)
class UsageReport:
    since: float
    until: float
    max_gap_seconds: float
    snapshots: int
    covered_seconds: float
    gaps: tuple[Gap, ...]
    capacity_gpu_hours: float
    allocated_gpu_hours: float
    namespaces: tuple[UsageRow, ...]  # most GPU-hours first
    pods: tuple[UsageRow, ...]  # of ``namespace`` only, most GPU-hours first
    namespace: str | None
    models: tuple[ModelUsage, ...] = ()  # most GPU-hours first
    holdings: tuple[HoldingUsage, ...] = ()  # by namespace, then most GPU-hours first
    currency: str = ""  # "": no prices set
    unpriced_models: tuple[str, ...] = ()  # models used in the period that have no price
    pods_covered_seconds: float = 0.0  # the time the pods were counted over
    measured_seconds: float = 0.0  # the covered time whose snapshots had runtime data


def typical_spacing(snapshots: Sequence[Snapshot]) -> float | None:
    """The median time between consecutive snapshots; None with fewer than two."""
    times = sorted(s.taken_at for s in snapshots)
    steps = sorted(b - a for a, b in pairwise(times) if b > a)
    return steps[len(steps) // 2] if steps else None


def default_max_gap(snapshots: Sequence[Snapshot]) -> float:
    """The gap limit when none is given: ``GAP_FACTOR`` times the usual spacing (0 with
    fewer than two snapshots: nothing is counted)."""
    return GAP_FACTOR * (typical_spacing(snapshots) or 0.0)


def _zeros() -> defaultdict[Any, float]:
    return defaultdict(float)


@dataclass
class _Tally:
    """Core- and MiB-seconds as the intervals are counted."""

    capacity: float = 0.0
    gpu: defaultdict[str, float] = field(default_factory=_zeros)
    mib: defaultdict[str, float] = field(default_factory=_zeros)
    held_gpu: defaultdict[tuple[str, str], float] = field(default_factory=_zeros)
    held_mib: defaultdict[tuple[str, str], float] = field(default_factory=_zeros)
    model_capacity: defaultdict[str, float] = field(default_factory=_zeros)
    quota: defaultdict[str, float] = field(default_factory=_zeros)
    quota_used: defaultdict[str, float] = field(default_factory=_zeros)
    measured: float = 0.0  # seconds with runtime data
    measured_gpu: defaultdict[str, float] = field(default_factory=_zeros)
    idle_gpu: defaultdict[str, float] = field(default_factory=_zeros)

    def add(self, snapshot: Snapshot, seconds: float) -> None:
        """``snapshot``'s figures held for ``seconds``."""
        self.capacity += snapshot.totals.core_limit / 100.0 * seconds
        cores_of = {}
        for figures in snapshot.namespaces:
            cores_of[figures.namespace] = figures.cores
            self.gpu[figures.namespace] += figures.cores / 100.0 * seconds
            self.mib[figures.namespace] += figures.mem_mib * seconds
        # Snapshots kept before the per-model table have only the namespaces' totals.
        holdings = snapshot.holdings or [
            ModelHolding(ns.namespace, UNRECORDED_MODEL, ns.cores, ns.mem_mib)
            for ns in snapshot.namespaces
        ]
        for held in holdings:
            self.held_gpu[held.namespace, held.model] += held.cores / 100.0 * seconds
            self.held_mib[held.namespace, held.model] += held.mem_mib * seconds
        for model in snapshot.models:
            self.model_capacity[model.model] += model.gpus * seconds
        for quota in snapshot.quotas:
            if quota.limit is not None and is_core_resource(quota.resource):
                self.quota[quota.namespace] += quota.limit / 100.0 * seconds
                self.quota_used[quota.namespace] += (
                    cores_of.get(quota.namespace, 0.0) / 100.0 * seconds
                )
        if snapshot.idle is not None:
            self.measured += seconds
            for namespace, cores in cores_of.items():
                self.measured_gpu[namespace] += cores / 100.0 * seconds
            for idle in snapshot.idle:
                self.idle_gpu[idle.namespace] += idle.cores / 100.0 * seconds


def usage_report(
    snapshots: Sequence[Snapshot],
    *,
    since: float,
    until: float,
    max_gap_seconds: float,
    namespace: str | None = None,
    prices: Prices | None = None,
    pod_snapshots: Sequence[Snapshot] | None = None,
) -> UsageReport:
    """The allocation of ``snapshots`` integrated over [``since``, ``until``], with costs
    where ``prices`` sets them. The pods of ``namespace`` are counted from ``pod_snapshots``
    when given (a long history may keep pods for its recent part only), else from
    ``snapshots``."""
    intervals = _intervals(snapshots, since, until, max_gap_seconds)
    tally = _Tally()
    for snapshot, start, end in intervals:
        tally.add(snapshot, end - start)
    if pod_snapshots is not None:
        pod_intervals = _intervals(pod_snapshots, since, until, max_gap_seconds)
    else:
        pod_intervals = intervals
    if prices is not None and not prices.per_gpu_hour:
        prices = None
    holdings = _holdings(tally, prices)
    spans = [(start, end) for _, start, end in intervals]
    return UsageReport(
        since=since,
        until=until,
        max_gap_seconds=max_gap_seconds,
        snapshots=sum(1 for s in snapshots if since <= s.taken_at <= until),
        covered_seconds=sum(end - start for start, end in spans),
        gaps=_gaps(spans, since, until),
        capacity_gpu_hours=tally.capacity / SECONDS_PER_HOUR,
        allocated_gpu_hours=sum(tally.gpu.values()) / SECONDS_PER_HOUR,
        namespaces=_namespace_rows(tally, holdings, priced=prices is not None),
        pods=_pod_rows(pod_intervals, namespace, prices) if namespace is not None else (),
        namespace=namespace,
        models=_models(tally, holdings, prices),
        holdings=holdings,
        currency=prices.currency if prices is not None else "",
        unpriced_models=tuple(
            sorted({h.model for h in holdings if prices is not None and h.cost is None})
        ),
        pods_covered_seconds=sum(end - start for _, start, end in pod_intervals),
        measured_seconds=tally.measured,
    )


def _intervals(
    snapshots: Sequence[Snapshot], since: float, until: float, max_gap_seconds: float
) -> list[tuple[Snapshot, float, float]]:
    """``(snapshot, start, end)``: each snapshot's figures hold from its time until the next
    one's (the last one's until ``until``), cut to [since, until]; an interval longer than
    ``max_gap_seconds`` is left out (a gap)."""
    ordered = sorted(snapshots, key=lambda s: s.taken_at)
    ends = [s.taken_at for s in ordered[1:]]
    if ordered and until > ordered[-1].taken_at:
        ends.append(until)  # the last snapshot holds until the moment asked about
    found = []
    for earlier, later_at in zip(ordered, ends, strict=False):
        if later_at - earlier.taken_at > max_gap_seconds:
            continue
        start, end = max(earlier.taken_at, since), min(later_at, until)
        if end > start:
            found.append((earlier, start, end))
    return found


def _pod_rows(
    intervals: list[tuple[Snapshot, float, float]], namespace: str, prices: Prices | None
) -> tuple[UsageRow, ...]:
    """The pods of ``namespace``, their share of the cluster's capacity in the same time, and
    with ``prices`` their cost per GPU model (time from snapshots kept before pods' models
    were counts as ``UNRECORDED_MODEL``)."""
    gpu: defaultdict[str, float] = _zeros()
    mib: defaultdict[str, float] = _zeros()
    held: defaultdict[tuple[str, str], float] = _zeros()  # (pod, model) -> GPU-seconds
    capacity = 0.0
    for snapshot, start, end in intervals:
        seconds = end - start
        capacity += snapshot.totals.core_limit / 100.0 * seconds
        for pod in snapshot.pods:
            if pod.namespace == namespace:
                gpu[pod.pod] += pod.cores / 100.0 * seconds
                mib[pod.pod] += pod.mem_mib * seconds
        holdings = snapshot.pod_holdings or [
            PodHolding(n, UNRECORDED_MODEL, p.cores, p.mem_mib) for n, p in enumerate(snapshot.pods)
        ]
        for h in holdings:
            pod = snapshot.pods[h.pod]
            if pod.namespace == namespace:
                held[pod.pod, h.model] += h.cores / 100.0 * seconds
    rows = _rows(gpu, mib, capacity, namespace)
    if prices is None:
        return rows
    costs: dict[str, float | None] = {}
    for (name, model), seconds in held.items():
        price, known = prices.of(model), costs.get(name, 0.0)
        costs[name] = None if known is None or price is None else known + seconds / 3600 * price
    return tuple(replace(row, cost=costs.get(row.pod or "")) for row in rows)


def _most_first(rows: list[_R]) -> tuple[_R, ...]:
    return tuple(sorted(rows, key=lambda r: (-r.gpu_hours, -r.gib_hours, _name(r))))


def _name(row: UsageRow | ModelUsage | HoldingUsage) -> str:
    if isinstance(row, UsageRow):
        return row.pod or row.namespace
    return row.model if isinstance(row, ModelUsage) else f"{row.namespace}/{row.model}"


def _rows(
    gpu: dict[str, float], mib: dict[str, float], capacity: float, pods_of: str | None
) -> tuple[UsageRow, ...]:
    """Pod rows (``pods_of`` their namespace) or namespace rows (None) of the seconds."""
    return _most_first(
        [
            UsageRow(
                namespace=pods_of if pods_of is not None else name,
                pod=name if pods_of is not None else None,
                gpu_hours=gpu[name] / SECONDS_PER_HOUR,
                gib_hours=mib[name] / 1024.0 / SECONDS_PER_HOUR,
                share_percent=gpu[name] / capacity * 100.0 if capacity else 0.0,
            )
            for name in gpu
            if gpu[name] > 0 or mib[name] > 0
        ]
    )


def _namespace_rows(
    tally: _Tally, holdings: tuple[HoldingUsage, ...], *, priced: bool
) -> tuple[UsageRow, ...]:
    costs: dict[str, float | None] = {}
    for held in holdings:
        known = costs.get(held.namespace, 0.0)
        costs[held.namespace] = None if known is None or held.cost is None else known + held.cost
    rows = []
    for row in _rows(tally.gpu, tally.mib, tally.capacity, None):
        limit = tally.quota.get(row.namespace)
        measured = tally.measured_gpu.get(row.namespace, 0.0)
        idle = tally.idle_gpu.get(row.namespace, 0.0)
        rows.append(
            replace(
                row,
                quota_gpu_hours=limit / SECONDS_PER_HOUR if limit else None,
                quota_use_percent=tally.quota_used[row.namespace] / limit * 100.0
                if limit
                else None,
                cost=costs.get(row.namespace) if priced else None,
                idle_gpu_hours=idle / SECONDS_PER_HOUR if tally.measured else None,
                idle_percent=idle / measured * 100.0 if measured else None,
            )
        )
    return tuple(rows)


def _holdings(tally: _Tally, prices: Prices | None) -> tuple[HoldingUsage, ...]:
    made = []
    for (namespace, model), seconds in tally.held_gpu.items():
        mib = tally.held_mib[namespace, model]
        if seconds <= 0 and mib <= 0:
            continue
        hours = seconds / SECONDS_PER_HOUR
        price = prices.of(model) if prices is not None else None
        made.append(
            HoldingUsage(
                namespace,
                model,
                hours,
                mib / 1024.0 / SECONDS_PER_HOUR,
                hours * price if price is not None else None,
            )
        )
    return tuple(sorted(made, key=lambda h: (h.namespace, -h.gpu_hours, h.model)))


def _models(
    tally: _Tally, holdings: tuple[HoldingUsage, ...], prices: Prices | None
) -> tuple[ModelUsage, ...]:
    gpu: dict[str, float] = defaultdict(float)
    gib: dict[str, float] = defaultdict(float)
    for held in holdings:
        gpu[held.model] += held.gpu_hours
        gib[held.model] += held.gib_hours
    made = []
    for model in set(gpu) | {m for m, seconds in tally.model_capacity.items() if seconds > 0}:
        price = prices.of(model) if prices is not None else None
        made.append(
            ModelUsage(
                model=model,
                gpu_hours=gpu.get(model, 0.0),
                gib_hours=gib.get(model, 0.0),
                capacity_gpu_hours=tally.model_capacity.get(model, 0.0) / SECONDS_PER_HOUR,
                price=price,
                cost=gpu.get(model, 0.0) * price if price is not None else None,
            )
        )
    return _most_first(made)


def _gaps(spans: list[tuple[float, float]], since: float, until: float) -> tuple[Gap, ...]:
    """The parts of [since, until] outside ``spans`` (sorted, not overlapping)."""
    gaps = []
    cursor = since
    for start, end in spans:
        if start > cursor:
            gaps.append(Gap(cursor, start))
        cursor = max(cursor, end)
    if until > cursor:
        gaps.append(Gap(cursor, until))
    return tuple(gaps)
