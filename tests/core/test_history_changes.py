"""``changes`` between two drifted simulated collections lists exactly the true differences.

The expected differences are computed here from the simulator's ground truth (allocations,
devices, quota limits), never from a summary or a snapshot.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import replace

import pytest

from core.history.changes import compare
from core.history.snapshot import ModelFigures
from core.simulate import (
    GPUCORES_RESOURCE,
    SimulatedAllocation,
    SimulatedCluster,
    drift_cluster,
    simulate_cluster,
)
from core.views.changes_view import changes_to_json, pods_csv, render_text
from tests.core.history_support import (
    free_whole_per_model,
    inconsistent_uuids,
    pods_of,
    snapshot_at,
)

T0 = 1_767_225_600.0  # 2026-01-01 00:00 UTC


def _namespaces(cluster: SimulatedCluster) -> dict[str, tuple[int, int, int]]:
    """namespace -> (cores, MiB, GPUs touched) from the allocations."""
    devices: dict[str, set[str]] = {}
    for a in cluster.allocations:
        devices.setdefault(a.namespace, set()).add(a.device_uuid)
    return {
        ns: (cores, mem, len(devices[ns]))
        for ns, (cores, mem) in cluster.namespace_totals().items()
    }


def _without_node(cluster: SimulatedCluster, node: str) -> SimulatedCluster:
    return dataclasses.replace(
        cluster,
        devices=tuple(d for d in cluster.devices if d.node != node),
        allocations=tuple(a for a in cluster.allocations if a.node != node),
    )


def _with_empty_node(cluster: SimulatedCluster, like: str, name: str) -> SimulatedCluster:
    copies = tuple(
        dataclasses.replace(d, node=name, uuid=f"GPU-{name}-{d.index}")
        for d in cluster.devices
        if d.node == like
    )
    return dataclasses.replace(cluster, devices=cluster.devices + copies)


def _with_memory_only_pod(cluster: SimulatedCluster) -> tuple[SimulatedCluster, str]:
    """A pod holding memory but no cores on an idle GPU: that GPU becomes inconsistent."""
    totals = cluster.device_totals()
    idle = next(d for d in cluster.devices if totals[d.uuid].shared_count == 0)
    pod = SimulatedAllocation("research", "mem-only-7x2q9", idle.node, idle.uuid, 0, 2048)
    return dataclasses.replace(cluster, allocations=(*cluster.allocations, pod)), idle.uuid


def _with_core_limit(cluster: SimulatedCluster, namespace: str, limit: int) -> SimulatedCluster:
    limits = [q for q in cluster.quota_limits if q[:2] != (namespace, GPUCORES_RESOURCE)]
    limits.append((namespace, GPUCORES_RESOURCE, limit))
    return dataclasses.replace(cluster, quota_limits=tuple(limits))


def _quota_percent(cluster: SimulatedCluster) -> dict[tuple[str, str], float]:
    return {(q.namespace, q.resource): q.used / q.limit * 100 for q in cluster.quotas() if q.limit}


def _expected_crossings(
    before: SimulatedCluster, after: SimulatedCluster
) -> set[tuple[str, str, float, str]]:
    old, new = _quota_percent(before), _quota_percent(after)
    known = {(q.namespace, q.resource) for q in before.quotas()}
    found = set()
    for key, now in new.items():
        if key not in old and key in known:
            continue  # the limit was not set before: nothing to cross
        then = old.get(key, 0.0)
        for threshold in (90.0, 100.0):
            if then < threshold <= now:
                found.add((*key, threshold, "up"))
            elif now < threshold <= then:
                found.add((*key, threshold, "down"))
    return found


def _drifted_pair(seed: int) -> tuple[SimulatedCluster, SimulatedCluster, str]:
    before = simulate_cluster(40, 4, seed=seed)
    after = drift_cluster(before, steps=25)
    after = _without_node(after, "gpu-node-07")
    after = _with_empty_node(after, "gpu-node-01", "gpu-node-41")
    after, bad_uuid = _with_memory_only_pod(after)
    grown = max(after.namespace_totals().items(), key=lambda kv: kv[1][0])[0]
    cores_now = after.namespace_totals()[grown][0]
    cores_then = before.namespace_totals().get(grown, (0, 0))[0]
    after = _with_core_limit(after, grown, cores_now)  # at 100 % of its limit now
    before = _with_core_limit(before, grown, max(cores_then * 2, 100))  # at most 50 % then
    return before, after, bad_uuid


@pytest.mark.parametrize("seed", [3, 11])
def test_changes_list_exactly_the_true_differences(seed: int) -> None:
    before, after, bad_uuid = _drifted_pair(seed)
    changes = compare(snapshot_at(before, T0), snapshot_at(after, T0 + 3 * 3600))

    old_pods, new_pods = pods_of(before), pods_of(after)
    started = {k: v for k, v in new_pods.items() if k not in old_pods}
    stopped = {k: v for k, v in old_pods.items() if k not in new_pods}
    assert started and stopped
    assert {(p.namespace, p.pod): (p.gpus, p.cores, p.mem_mib) for p in changes.pods_started} == (
        started
    )
    assert {(p.namespace, p.pod): (p.gpus, p.cores, p.mem_mib) for p in changes.pods_stopped} == (
        stopped
    )
    gpus_started = [p.gpus for p in changes.pods_started]
    assert gpus_started == sorted(gpus_started, reverse=True)

    old_ns, new_ns = _namespaces(before), _namespaces(after)
    zero = (0, 0, 0)
    expected_ns = {
        ns: (old_ns.get(ns, zero), new_ns.get(ns, zero))
        for ns in old_ns.keys() | new_ns.keys()
        if old_ns.get(ns, zero) != new_ns.get(ns, zero)
    }
    assert {
        c.namespace: (
            (c.cores_before, c.mem_before_mib, c.gpus_before),
            (c.cores_after, c.mem_after_mib, c.gpus_after),
        )
        for c in changes.namespaces
    } == expected_ns

    assert changes.nodes_appeared == ("gpu-node-41",)
    assert changes.nodes_disappeared == ("gpu-node-07",)

    old_free, new_free = free_whole_per_model(before), free_whole_per_model(after)
    assert {m.model: (m.free_before, m.free_after) for m in changes.models} == {
        model: (old_free.get(model, 0), new_free.get(model, 0))
        for model in old_free.keys() | new_free.keys()
    }

    became = inconsistent_uuids(after) - inconsistent_uuids(before)
    assert bad_uuid in became
    assert {g.device_uuid for g in changes.became_inconsistent} == became
    assert {g.device_uuid for g in changes.no_longer_inconsistent} == (
        inconsistent_uuids(before) - inconsistent_uuids(after)
    )

    crossings = {
        (c.namespace, c.resource, c.threshold_percent, c.direction) for c in changes.quota_crossings
    }
    assert crossings == _expected_crossings(before, after)
    assert any(c[2] == 100.0 and c[3] == "up" for c in crossings)


def test_text_fits_one_screen_and_json_carries_every_row() -> None:
    before, after, _ = _drifted_pair(5)
    changes = compare(snapshot_at(before, T0), snapshot_at(after, T0 + 5400, "gpu-prod"))
    text = render_text(changes)
    lines = text.splitlines()
    assert len(lines) <= 45 and max(len(line) for line in lines) <= 100
    assert lines[0] == (
        "Changes in cluster gpu-prod: 2026-01-01 00:00 UTC -> 2026-01-01 01:30 UTC (1.5 h apart)"
    )
    assert "Nodes: 1 appeared (gpu-node-41); 1 disappeared (gpu-node-07)" in text
    started = changes.pods_started
    assert f"Started holding GPUs: {len(started):,} pod(s)" in text
    assert f"... and {len(started) - 5:,} more" in text
    assert "nvidia.com/gpucores passed 90% and 100% (" in text
    data = json.loads(json.dumps(changes_to_json(changes), allow_nan=False))
    assert len(data["pods_started"]) == len(started)
    assert data["after_at"] == "2026-01-01T01:30:00+00:00"
    assert data["nodes_appeared"] == ["gpu-node-41"]


def test_two_equal_snapshots_say_nothing_changed() -> None:
    cluster = simulate_cluster(5, 2, seed=1)
    changes = compare(snapshot_at(cluster, T0), snapshot_at(cluster, T0 + 600))
    assert not changes.allocation_changed
    text = render_text(changes)
    assert "Nothing changed in the allocation between the two." in text
    assert "Namespaces that grew" not in text and "Started holding" not in text


def test_pods_csv_lists_every_pod_and_never_a_formula() -> None:
    before = simulate_cluster(4, 2, seed=2)
    after = dataclasses.replace(
        before,
        allocations=(
            *before.allocations[1:],
            SimulatedAllocation(
                "team-a", "=HYPERLINK(1)", "gpu-node-01", before.devices[0].uuid, 10, 64
            ),
        ),
    )
    changes = compare(snapshot_at(before, T0), snapshot_at(after, T0 + 60))
    lines = pods_csv(changes).splitlines()
    assert lines[0] == "change,namespace,pod,node,gpus,cores,memory_mib"
    assert len(lines) == 1 + len(changes.pods_started) + len(changes.pods_stopped)
    assert "started,team-a,'=HYPERLINK(1),gpu-node-01,1,10.0,64.0" in lines


def test_many_gpu_models_stay_on_one_screen_changed_ones_first() -> None:
    cluster = simulate_cluster(5, 2, seed=1)
    base = snapshot_at(cluster, T0)
    models = tuple(ModelFigures(f"NVIDIA Model-{n:02d}", 8, 4, 2, 2, 0, 4) for n in range(20))
    changed = (replace(models[17], free_whole=1), replace(models[3], free_whole=6))
    after_models = tuple(next((c for c in changed if c.model == m.model), m) for m in models)
    before = dataclasses.replace(base, models=models)
    after = dataclasses.replace(base, models=after_models, taken_at=T0 + 600)
    lines = render_text(compare(before, after)).splitlines()
    start = lines.index("Free whole GPUs per model, then -> now:")
    assert [line.split() for line in lines[start + 2 : start + 4]] == [
        ["Model-03", "4", "->", "6", "(+2)", "8"],
        ["Model-17", "4", "->", "1", "(-3)", "8"],
    ]
    assert lines[start + 10] == "  ... and 12 more models, unchanged"
    assert len(lines) <= 45
