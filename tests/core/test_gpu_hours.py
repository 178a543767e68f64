"""GPU-hours over simulated drifting history: each namespace's hours equal the ones computed
here from the simulator's own allocations (exact: the allocations change only at snapshot
times), gaps are reported and not counted, and the report's range cuts intervals."""

from __future__ import annotations

import csv
import dataclasses
import io
from collections import defaultdict

import pytest

from core.api import summarize_text
from core.history.gpu_hours import UNRECORDED_MODEL, Gap, typical_spacing, usage_report
from core.history.snapshot import (
    Snapshot,
    decode_snapshot,
    decode_snapshots,
    encode_snapshot,
    encode_snapshots,
    snapshot_of,
    usage_part,
)
from core.model import SourceInfo
from core.settings import Prices
from core.simulate import SimulatedCluster, drift_cluster, render_exposition, simulate_cluster
from core.views.gpu_hours_view import render_csv, render_text
from tests.support.monitor_text import monitor_exposition

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
    text_csv = render_csv(report)
    assert text_csv.startswith("# GPU-hours = allocated cores / 100 x hours")
    rows = list(csv.DictReader(io.StringIO(text_csv.split("\n", 1)[1])))
    scopes = [row["scope"] for row in rows]
    assert scopes.count("namespace") == len(report.namespaces)
    assert scopes.count("namespace-model") == len(report.holdings)
    assert scopes.count("model") == len(report.models)
    for row in rows:
        numbers = [row[k] for k in ("gpu_hours", "gib_hours", "share_percent") if row[k]]
        assert all(float(cell) >= 0 for cell in numbers)
    # One scope's rows add up to the cluster.
    for scope in ("namespace", "namespace-model", "model"):
        total = sum(float(row["gpu_hours"]) for row in rows if row["scope"] == scope)
        assert total == pytest.approx(report.allocated_gpu_hours, abs=1e-3), scope


def test_no_close_snapshots_means_no_hours_and_says_why() -> None:
    _, snapshots = _history()
    report = usage_report(snapshots[3:5], since=T0, until=T0 + 5400, max_gap_seconds=MAX_GAP)
    assert report.covered_seconds == 0 and report.namespaces == ()
    assert "No GPU-hours: no two snapshots in this period are close enough" in render_text(
        report, subject="sim"
    )
    assert typical_spacing(snapshots) == 600.0


def _model_hours(clusters: list[SimulatedCluster]) -> dict[tuple[str, str], float]:
    """GPU-hours per (namespace, GPU model) over the counted intervals, from the simulator."""
    hours: dict[tuple[str, str], float] = defaultdict(float)
    for index in range(len(OFFSETS) - 1):
        seconds = OFFSETS[index + 1] - OFFSETS[index]
        if seconds > MAX_GAP:
            continue
        model_of = {d.uuid: d.device_type for d in clusters[index].devices}
        for a in clusters[index].allocations:
            hours[a.namespace, model_of[a.device_uuid]] += a.cores / 100 * seconds / 3600
    return {key: value for key, value in hours.items() if value > 0}


def test_hours_per_gpu_model_equal_the_simulators() -> None:
    clusters, snapshots = _history()
    report = usage_report(snapshots, since=T0, until=T0 + 6000, max_gap_seconds=MAX_GAP)
    expected = _model_hours(clusters)
    got = {(h.namespace, h.model): h.gpu_hours for h in report.holdings if h.gpu_hours > 0}
    assert got.keys() == expected.keys()
    for key, hours in got.items():
        assert hours == pytest.approx(expected[key], rel=1e-9), key
    assert len({model for _, model in expected}) > 2  # several models, not one
    for model in report.models:
        gpus = sum(1 for d in clusters[0].devices if d.device_type == model.model)
        assert model.capacity_gpu_hours == pytest.approx(gpus * 2400 / 3600)
        assert model.gpu_hours == pytest.approx(
            sum(h for (_, m), h in expected.items() if m == model.model), rel=1e-9
        )


def test_costs_are_hours_times_the_models_price_and_a_missing_price_is_said() -> None:
    clusters, snapshots = _history()
    expected = _model_hours(clusters)
    models = sorted({model for _, model in expected})
    priced = {model: 1.5 + n for n, model in enumerate(models[1:])}  # models[0] has no price
    prices = Prices("EUR", tuple(priced.items()))
    report = usage_report(
        snapshots, since=T0, until=T0 + 6000, max_gap_seconds=MAX_GAP, prices=prices
    )
    assert report.currency == "EUR" and report.unpriced_models == (models[0],)
    for row in report.namespaces:
        used = {m: h for (ns, m), h in expected.items() if ns == row.namespace}
        if models[0] in used:
            assert row.cost is None, row.namespace
        else:
            cost = sum(h * priced[m] for m, h in used.items())
            assert row.cost == pytest.approx(cost, rel=1e-9), row.namespace
    text = render_text(report, subject="sim", top=50)
    assert f"no price for {models[0]}" in text and "cost: in EUR" in text
    # A "*" price covers every model not named.
    everything = Prices("EUR", (*priced.items(), ("*", 0.5)))
    report = usage_report(
        snapshots, since=T0, until=T0 + 6000, max_gap_seconds=MAX_GAP, prices=everything
    )
    assert report.unpriced_models == ()
    assert sum(r.cost or 0 for r in report.namespaces) == pytest.approx(
        sum(h * priced.get(m, 0.5) for (_, m), h in expected.items()), rel=1e-9
    )


def test_a_core_quota_is_compared_with_the_hours_used_while_it_was_set() -> None:
    clusters, snapshots = _history()
    report = usage_report(snapshots, since=T0, until=T0 + 6000, max_gap_seconds=MAX_GAP)
    gpu, _ = _expected(clusters, T0, T0 + 6000)
    limits = {
        ns: limit
        for ns, resource, limit in clusters[0].quota_limits
        if resource == "nvidia.com/gpucores"
    }
    assert limits, "the simulator sets core quotas"
    for row in report.namespaces:
        if row.namespace in limits:
            assert row.quota_gpu_hours == pytest.approx(limits[row.namespace] / 100 * 2400 / 3600)
            assert row.quota_use_percent == pytest.approx(
                gpu[row.namespace] / row.quota_gpu_hours * 100, rel=1e-9
            )
        else:
            assert row.quota_gpu_hours is None and row.quota_use_percent is None


def test_snapshots_kept_before_models_were_recorded_count_as_such() -> None:
    _, snapshots = _history()
    older = [dataclasses.replace(s, holdings=()) for s in snapshots]
    report = usage_report(older, since=T0, until=T0 + 6000, max_gap_seconds=MAX_GAP)
    assert {h.model for h in report.holdings} == {UNRECORDED_MODEL}
    assert sum(h.gpu_hours for h in report.holdings) == pytest.approx(report.allocated_gpu_hours)


def _history_with_runtime(
    measured: int,
) -> tuple[list[SimulatedCluster], list[Snapshot], set[tuple[str, str]]]:
    """``_history`` whose first ``measured`` snapshots also read a vGPU monitor page, on which
    every third pod (by name, in the first cluster) is idle."""
    clusters, _ = _history()
    pods = sorted({(a.namespace, a.pod) for a in clusters[0].allocations})
    idle = set(pods[::3])
    snapshots = []
    for index, (cluster, dt) in enumerate(zip(clusters, OFFSETS, strict=True)):
        monitors = [monitor_exposition(cluster, idle)] if index < measured else []
        summary = summarize_text(
            render_exposition(cluster), SourceInfo(kind="file", label="sim"), monitor_texts=monitors
        )
        snapshots.append(snapshot_of(summary, T0 + dt))
    return clusters, snapshots, idle


def test_idle_allocated_hours_count_the_pods_measured_idle_while_runtime_data_was_kept() -> None:
    # Runtime data in the first three snapshots (0 to 30 min); the next holds across the gap,
    # and the last two (90 to 110 min) have none.
    clusters, snapshots, idle = _history_with_runtime(measured=3)
    assert snapshots[0].idle is not None and snapshots[4].idle is None
    report = usage_report(snapshots, since=T0, until=T0 + 6600, max_gap_seconds=MAX_GAP)
    assert report.measured_seconds == 1800.0 and report.covered_seconds == 3000.0
    idle_hours: dict[str, float] = defaultdict(float)
    measured_hours: dict[str, float] = defaultdict(float)
    for index in range(3):
        for a in clusters[index].allocations:
            measured_hours[a.namespace] += a.cores / 100 * 600 / 3600
            if (a.namespace, a.pod) in idle:
                idle_hours[a.namespace] += a.cores / 100 * 600 / 3600
    assert any(idle_hours.values())
    for row in report.namespaces:
        assert row.idle_gpu_hours == pytest.approx(idle_hours[row.namespace], abs=1e-9)
        if measured_hours[row.namespace]:
            assert row.idle_percent == pytest.approx(
                idle_hours[row.namespace] / measured_hours[row.namespace] * 100, rel=1e-9
            )
        else:
            assert row.idle_percent is None

    text = render_text(report, subject="sim", top=50)
    header = next(line for line in text.splitlines() if line.startswith("namespace"))
    assert header.split()[-1] == "idle"
    total = sum(idle_hours.values())
    assert (
        f"while runtime data was kept (30 min of the 50 min covered), the part its pods held "
        f"while measured idle; {total:,.1f} GPU-hours in all"
    ) in " ".join(text.split())
    rows = list(csv.DictReader(io.StringIO(render_csv(report).split("\n", 1)[1])))
    by_namespace = {r["namespace"]: r for r in rows if r["scope"] == "namespace"}
    for namespace, hours in idle_hours.items():
        if namespace in by_namespace:
            assert float(by_namespace[namespace]["idle_gpu_hours"]) == pytest.approx(
                hours, abs=1e-4
            )


def test_without_runtime_data_idle_hours_are_not_known_rather_than_zero() -> None:
    _, snapshots = _history()
    report = usage_report(snapshots, since=T0, until=T0 + 6000, max_gap_seconds=MAX_GAP)
    assert report.measured_seconds == 0.0
    assert all(r.idle_gpu_hours is None and r.idle_percent is None for r in report.namespaces)
    text = render_text(report, subject="sim", top=50)
    header = next(line for line in text.splitlines() if line.startswith("namespace"))
    assert "idle" not in header.split() and "runtime data" not in text
    rows = list(csv.DictReader(io.StringIO(render_csv(report).split("\n", 1)[1])))
    assert all(r["idle_gpu_hours"] == "" for r in rows)


def test_idle_holdings_survive_the_stored_forms() -> None:
    _, snapshots, _ = _history_with_runtime(measured=1)
    kept = decode_snapshot(encode_snapshot(snapshots[0]))
    assert kept.idle == snapshots[0].idle and kept.idle
    assert (
        decode_snapshots(encode_snapshots([usage_part(s) for s in snapshots[:2]]))[1].idle is None
    )


def test_the_pods_of_one_namespace_cost_their_hours_on_each_model() -> None:
    clusters, snapshots = _history()
    namespace = clusters[0].allocations[0].namespace
    prices = Prices("EUR", (("*", 0.5), (clusters[0].devices[0].device_type, 2.0)))
    report = usage_report(
        snapshots,
        since=T0,
        until=T0 + 6000,
        max_gap_seconds=MAX_GAP,
        namespace=namespace,
        prices=prices,
    )
    expected: dict[str, float] = defaultdict(float)
    for index in range(len(OFFSETS) - 1):
        seconds = OFFSETS[index + 1] - OFFSETS[index]
        if seconds > MAX_GAP:
            continue
        model_of = {d.uuid: d.device_type for d in clusters[index].devices}
        for a in clusters[index].allocations:
            if a.namespace == namespace:
                price = prices.of(model_of[a.device_uuid])
                assert price is not None
                expected[a.pod] += a.cores / 100 * seconds / 3600 * price
    assert {p.pod for p in report.pods} >= {pod for pod, cost in expected.items() if cost > 0}
    for pod in report.pods:  # a pod holding memory and no cores costs nothing
        assert pod.cost == pytest.approx(expected.get(pod.pod or "", 0.0), rel=1e-9), pod.pod
    # The pods' costs add up to their namespace's.
    [row] = [r for r in report.namespaces if r.namespace == namespace]
    assert sum(p.cost or 0 for p in report.pods) == pytest.approx(row.cost)
    text = render_text(report, subject="sim", top=50)
    pods_header = text.split(f"Pods of {namespace}")[1].splitlines()[1]
    assert pods_header.split()[-1] == "cost"
    rows = list(csv.DictReader(io.StringIO(render_csv(report).split("\n", 1)[1])))
    assert all(r["cost"] and r["currency"] == "EUR" for r in rows if r["scope"] == "pod")


def test_pods_kept_before_their_models_were_cost_at_the_any_model_price() -> None:
    _, snapshots = _history()
    older = [dataclasses.replace(s, pod_holdings=()) for s in snapshots]
    namespace = snapshots[0].pods[0].namespace
    priced = usage_report(
        older,
        since=T0,
        until=T0 + 6000,
        max_gap_seconds=MAX_GAP,
        namespace=namespace,
        prices=Prices("EUR", (("*", 1.0),)),
    )
    assert all(p.cost == pytest.approx(p.gpu_hours) for p in priced.pods)
    unpriced = usage_report(
        older,
        since=T0,
        until=T0 + 6000,
        max_gap_seconds=MAX_GAP,
        namespace=namespace,
        prices=Prices("EUR", (("NVIDIA A100-PCIE-40GB", 1.0),)),
    )
    assert all(p.cost is None for p in unpriced.pods)
