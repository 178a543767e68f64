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
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from core.history.snapshot import Snapshot

SECONDS_PER_HOUR = 3600.0
# Snapshots further apart than this many times their usual spacing leave a gap.
GAP_FACTOR = 1.5
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


def typical_spacing(snapshots: Sequence[Snapshot]) -> float | None:
    """The median time between consecutive snapshots; None with fewer than two."""
    times = sorted(s.taken_at for s in snapshots)
    steps = sorted(b - a for a, b in pairwise(times) if b > a)
    return steps[len(steps) // 2] if steps else None


def default_max_gap(snapshots: Sequence[Snapshot]) -> float:
    """The gap limit when none is given: ``GAP_FACTOR`` times the usual spacing (0 with
    fewer than two snapshots: nothing is counted)."""
    return GAP_FACTOR * (typical_spacing(snapshots) or 0.0)


def usage_report(
    snapshots: Sequence[Snapshot],
    *,
    since: float,
    until: float,
    max_gap_seconds: float,
    namespace: str | None = None,
) -> UsageReport:
    """The allocation of ``snapshots`` integrated over [``since``, ``until``]."""
    ordered = sorted(snapshots, key=lambda s: s.taken_at)
    gpu_seconds: dict[str, float] = defaultdict(float)
    mib_seconds: dict[str, float] = defaultdict(float)
    pod_gpu_seconds: dict[str, float] = defaultdict(float)
    pod_mib_seconds: dict[str, float] = defaultdict(float)
    capacity_seconds = 0.0
    covered = 0.0
    covered_spans: list[tuple[float, float]] = []
    ends = [s.taken_at for s in ordered[1:]]
    if ordered and until > ordered[-1].taken_at:
        ends.append(until)  # the last snapshot holds until the moment asked about
    for earlier, later_at in zip(ordered, ends, strict=False):
        if later_at - earlier.taken_at > max_gap_seconds:
            continue
        start, end = max(earlier.taken_at, since), min(later_at, until)
        if end <= start:
            continue
        seconds = end - start
        covered += seconds
        covered_spans.append((start, end))
        capacity_seconds += earlier.totals.core_limit / 100.0 * seconds
        for figures in earlier.namespaces:
            gpu_seconds[figures.namespace] += figures.cores / 100.0 * seconds
            mib_seconds[figures.namespace] += figures.mem_mib * seconds
        if namespace is not None:
            for pod in earlier.pods:
                if pod.namespace == namespace:
                    pod_gpu_seconds[pod.pod] += pod.cores / 100.0 * seconds
                    pod_mib_seconds[pod.pod] += pod.mem_mib * seconds

    def rows(gpu: dict[str, float], mib: dict[str, float], pods: bool) -> tuple[UsageRow, ...]:
        made = [
            UsageRow(
                namespace=namespace if pods and namespace is not None else name,
                pod=name if pods else None,
                gpu_hours=gpu[name] / SECONDS_PER_HOUR,
                gib_hours=mib[name] / 1024.0 / SECONDS_PER_HOUR,
                share_percent=gpu[name] / capacity_seconds * 100.0 if capacity_seconds else 0.0,
            )
            for name in gpu
            if gpu[name] > 0 or mib[name] > 0
        ]
        return tuple(sorted(made, key=lambda r: (-r.gpu_hours, -r.gib_hours, r.pod or r.namespace)))

    return UsageReport(
        since=since,
        until=until,
        max_gap_seconds=max_gap_seconds,
        snapshots=sum(1 for s in ordered if since <= s.taken_at <= until),
        covered_seconds=covered,
        gaps=_gaps(covered_spans, since, until),
        capacity_gpu_hours=capacity_seconds / SECONDS_PER_HOUR,
        allocated_gpu_hours=sum(gpu_seconds.values()) / SECONDS_PER_HOUR,
        namespaces=rows(gpu_seconds, mib_seconds, pods=False),
        pods=rows(pod_gpu_seconds, pod_mib_seconds, pods=True),
        namespace=namespace,
    )


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
