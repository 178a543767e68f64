"""GPU-hours over simulated drifting history: each namespace's hours equal the ones computed
here from the simulator's own allocations (exact: the allocations change only at snapshot
times), gaps are reported and not counted, and the report's range cuts intervals."""

from __future__ import annotations

import csv
import io
from collections import defaultdict

import pytest

from core.api import summarize_text
from core.history.gpu_hours import Gap, typical_spacing, usage_report
from core.history.snapshot import Snapshot, snapshot_of
from core.model import SourceInfo
from core.simulate import SimulatedCluster, drift_cluster, render_exposition, simulate_cluster
from core.views.gpu_hours_view import render_csv, render_text

T0 = 1_780_000_000.0
# Ten minutes apart, then an hour with no snapshot, then ten minutes again.
OFFSETS = (0.0, 600.0, 1200.0, 1800.0, 5400.0, 6000.0)
MAX_GAP = 900.0


def _history() -> tuple[list[SimulatedCluster], list[Snapshot]]:
    clusters = [simulate_cluster(12, 4, seed=3)]
    for _ in OFFSETS[1:]:
        clusters.append(drift_cluster(clusters[-1], steps=1))
    snapshots = [
        snapshot_of(
            summarize_text(render_exposition(c), SourceInfo(kind="file", label="sim")), T0 + dt
        )
        for c, dt in zip(clusters, OFFSETS, strict=True)
    ]
    return clusters, snapshots


def _expected(
    clusters: list[SimulatedCluster], since: float, until: float
) -> tuple[dict[str, float], dict[str, float]]:
    """GPU-hours and GiB-hours per namespace, from the simulator's allocations."""
    gpu: dict[str, float] = defaultdict(float)
    gib: dict[str, float] = defaultdict(float)
    for index in range(len(OFFSETS) - 1):
        start, end = T0 + OFFSETS[index], T0 + OFFSETS[index + 1]
        if end - start > MAX_GAP:
            continue
        hours = max(0.0, min(end, until) - max(start, since)) / 3600
        for allocation in clusters[index].allocations:
            gpu[allocation.namespace] += allocation.cores / 100 * hours
            gib[allocation.namespace] += allocation.mem_mib / 1024 * hours
    return gpu, gib


def test_namespace_hours_equal_the_simulators_step_function() -> None:
    clusters, snapshots = _history()
    report = usage_report(snapshots, since=T0, until=T0 + 6000, max_gap_seconds=MAX_GAP)
    gpu, gib = _expected(clusters, T0, T0 + 6000)
    assert {r.namespace for r in report.namespaces} == {ns for ns, h in gpu.items() if h > 0}
    for row in report.namespaces:
        assert row.gpu_hours == pytest.approx(gpu[row.namespace], rel=1e-9)
        assert row.gib_hours == pytest.approx(gib[row.namespace], rel=1e-9)
    assert report.gaps == (Gap(T0 + 1800, T0 + 5400),)
    assert report.covered_seconds == 2400.0
    capacity = sum(d.core_limit for d in clusters[0].devices) / 100 * 2400 / 3600
    assert report.capacity_gpu_hours == pytest.approx(capacity)
    assert sum(r.share_percent for r in report.namespaces) == pytest.approx(
        report.allocated_gpu_hours / capacity * 100
    )
    # Most GPU-hours first.
    hours = [r.gpu_hours for r in report.namespaces]
    assert hours == sorted(hours, reverse=True)


def test_the_range_cuts_the_first_interval_and_ignores_what_lies_outside() -> None:
    clusters, snapshots = _history()
    report = usage_report(snapshots, since=T0 + 300, until=T0 + 1500, max_gap_seconds=MAX_GAP)
    gpu, _ = _expected(clusters, T0 + 300, T0 + 1500)
    assert report.covered_seconds == 1200.0
    assert report.gaps == ()
    for row in report.namespaces:
        assert row.gpu_hours == pytest.approx(gpu[row.namespace], rel=1e-9)


def test_the_last_snapshot_holds_until_the_moment_asked_about() -> None:
    clusters, snapshots = _history()
    report = usage_report(snapshots, since=T0 + 5400, until=T0 + 6300, max_gap_seconds=MAX_GAP)
    assert report.covered_seconds == 900.0 and report.gaps == ()
    for row in report.namespaces:
        gpu = sum(a.cores for a in clusters[4].allocations if a.namespace == row.namespace) / 100
        then = sum(a.cores for a in clusters[5].allocations if a.namespace == row.namespace) / 100
        assert row.gpu_hours == pytest.approx((gpu * 600 + then * 300) / 3600, rel=1e-9)
    # Further than the gap limit from the last snapshot, the end is not counted.
    late = usage_report(snapshots, since=T0 + 5400, until=T0 + 7000, max_gap_seconds=MAX_GAP)
    assert late.gaps == (Gap(T0 + 6000, T0 + 7000),)


def test_the_pods_of_one_namespace_add_up_to_it() -> None:
    _, snapshots = _history()
    report = usage_report(snapshots, since=T0, until=T0 + 6000, max_gap_seconds=MAX_GAP)
    biggest = report.namespaces[0].namespace
    with_pods = usage_report(
        snapshots, since=T0, until=T0 + 6000, max_gap_seconds=MAX_GAP, namespace=biggest
    )
    assert with_pods.pods and all(p.namespace == biggest for p in with_pods.pods)
    assert sum(p.gpu_hours for p in with_pods.pods) == pytest.approx(
        with_pods.namespaces[0].gpu_hours
    )


def test_the_text_says_the_gap_and_the_csv_holds_numbers() -> None:
    _, snapshots = _history()
    report = usage_report(snapshots, since=T0, until=T0 + 6000, max_gap_seconds=MAX_GAP)
    text = render_text(report, subject="sim", top=3)
    assert "Not counted: 60 min in 1 gap with no snapshot within 15 min of the next" in text
    assert "Method: GPU-hours = allocated cores / 100 x hours" in text
    assert f"({len(report.namespaces) - 3:,} more in the CSV)" in text
    rows = list(csv.reader(io.StringIO(render_csv(report))))
    assert rows[0][0].startswith("# GPU-hours = allocated cores / 100 x hours")
    assert rows[1] == ["namespace", "pod", "gpu_hours", "gib_hours", "share_percent"]
    assert len(rows) == 2 + len(report.namespaces)
    for row in rows[2:]:
        assert all(float(cell) >= 0 for cell in row[2:])


def test_no_close_snapshots_means_no_hours_and_says_why() -> None:
    _, snapshots = _history()
    report = usage_report(snapshots[3:5], since=T0, until=T0 + 5400, max_gap_seconds=MAX_GAP)
    assert report.covered_seconds == 0 and report.namespaces == ()
    assert "No GPU-hours: no two snapshots in this period are close enough" in render_text(
        report, subject="sim"
    )
    assert typical_spacing(snapshots) == 600.0
