"""Invariants of the summary over random cluster states rendered by the simulator.

Two sources of states: the simulator's own realistic clusters (random size, seed and drift),
and arbitrary clusters drawn by hypothesis (odd memory sizes, overcommitted devices,
memory-only and core-only allocations, pods spanning GPUs). Each is rendered to scheduler
text exactly as HAMi would write it, summarised, and checked against itself and against the
simulator's ground truth.
"""

from __future__ import annotations

import math
import uuid
from collections import Counter, defaultdict

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.api import summarize_text
from core.model import SourceInfo, Summary
from core.simulate import (
    GPUCORES_RESOURCE,
    GPUMEM_RESOURCE,
    SimulatedAllocation,
    SimulatedCluster,
    SimulatedDevice,
    render_exposition,
    simulate_cluster,
)

SOURCE = SourceInfo(kind="paste", label="property test")
NAMESPACES = ("team-a", "team-b", "ml-batch", "research")
MEMORY_SIZES_MIB = (15360, 23034, 32768, 40960, 81559)
TOLERANCE = 1e-6

PROPERTY_SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@st.composite
def drawn_clusters(draw: st.DrawFn) -> SimulatedCluster:
    """Any cluster HAMi could report, including states the simulator never generates."""
    devices: list[SimulatedDevice] = []
    node_count = draw(st.integers(1, 5))
    for n in range(node_count):
        mem_limit = draw(st.sampled_from(MEMORY_SIZES_MIB))
        for i in range(draw(st.integers(1, 4))):
            dev_uuid = f"GPU-{uuid.UUID(int=len(devices) * 7919 + 1, version=4)}"
            devices.append(SimulatedDevice(f"node-{n}", i, dev_uuid, "NVIDIA A100", 100, mem_limit))
    allocations: list[SimulatedAllocation] = []
    pod_number = 0
    for d in devices:
        for _ in range(draw(st.integers(0, 4))):
            cores = draw(st.integers(0, 100))
            mem = draw(st.integers(0 if cores else 1, d.mem_limit_mib))
            namespace = draw(st.sampled_from(NAMESPACES))
            allocations.append(
                SimulatedAllocation(namespace, f"pod-{pod_number}", d.node, d.uuid, cores, mem)
            )
            pod_number += 1
    # Some pods span several GPUs of one node, with the same share on each.
    for node in sorted({d.node for d in devices}):
        own = [d for d in devices if d.node == node]
        if len(own) >= 2 and draw(st.booleans()):
            span = draw(st.integers(2, len(own)))
            cores = draw(st.integers(1, 100))
            namespace = draw(st.sampled_from(NAMESPACES))
            for d in own[:span]:
                allocations.append(
                    SimulatedAllocation(
                        namespace, f"pod-{pod_number}", node, d.uuid, cores, d.mem_limit_mib // 2
                    )
                )
            pod_number += 1
    used = sorted({a.namespace for a in allocations})
    limits = []
    for ns in used:
        for resource in (GPUCORES_RESOURCE, GPUMEM_RESOURCE):
            if draw(st.booleans()):
                limits.append((ns, resource, draw(st.integers(1, 10**6))))
    return SimulatedCluster(tuple(devices), tuple(allocations), tuple(used), tuple(limits))


simulated_clusters = st.builds(
    simulate_cluster,
    nodes=st.integers(1, 12),
    gpus_per_node=st.integers(1, 8),
    seed=st.integers(0, 10_000),
    t=st.integers(0, 4),
)

any_cluster = st.one_of(simulated_clusters, drawn_clusters())


def summarise(cluster: SimulatedCluster, **surface: bool) -> Summary:
    return summarize_text(render_exposition(cluster, **surface), SOURCE)


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=TOLERANCE)


# ---------------------------------------------------------------------------- self-consistency


@PROPERTY_SETTINGS
@given(any_cluster)
def test_device_sums_equal_workload_sums(cluster: SimulatedCluster) -> None:
    summary = summarise(cluster)
    cores: defaultdict[str, float] = defaultdict(float)
    mem: defaultdict[str, float] = defaultdict(float)
    for w in summary.workloads:
        cores[w.device_uuid] += w.cores
        mem[w.device_uuid] += w.mem_mib
    for g in summary.gpus:
        assert close(g.core_allocated, cores[g.device_uuid]), g
        assert close(g.mem_allocated_mib, mem[g.device_uuid]), g
    assert close(summary.cluster.core_allocated, sum(cores.values()))
    assert close(summary.cluster.mem_allocated_mib, sum(mem.values()))


@PROPERTY_SETTINGS
@given(any_cluster)
def test_state_counts_add_up_to_the_gpu_total(cluster: SimulatedCluster) -> None:
    summary = summarise(cluster)
    c = summary.cluster
    assert c.gpus == len(summary.gpus) == len(cluster.devices)
    assert c.idle_gpus + c.partial_gpus + c.full_gpus + c.inconsistent_gpus == c.gpus
    states = Counter(g.state for g in summary.gpus)
    assert (states["idle"], states["partial"], states["full"], states["inconsistent"]) == (
        c.idle_gpus,
        c.partial_gpus,
        c.full_gpus,
        c.inconsistent_gpus,
    )
    for node in summary.nodes:
        assert node.idle_gpus + node.partial_gpus + node.full_gpus + node.inconsistent_gpus == (
            node.gpus
        )
    assert sum(n.gpus for n in summary.nodes) == c.gpus


@PROPERTY_SETTINGS
@given(any_cluster)
def test_free_is_limit_minus_allocated_unless_overcommitted(cluster: SimulatedCluster) -> None:
    summary = summarise(cluster)
    for g in summary.gpus:
        over_cores = g.core_allocated > g.core_limit
        over_mem = g.mem_allocated_mib > g.mem_limit_mib
        assert ("overcommitted" in g.flags) == (over_cores or over_mem)
        expected_cores = 0.0 if over_cores else g.core_limit - g.core_allocated
        expected_mem = 0.0 if over_mem else g.mem_limit_mib - g.mem_allocated_mib
        assert close(g.free_cores, expected_cores), g
        assert close(g.free_mem_mib, expected_mem), g
    for node in summary.nodes:
        mine = [g for g in summary.gpus if g.node == node.node]
        assert close(node.free_cores, sum(g.free_cores for g in mine))
        assert close(node.free_mem_mib, sum(g.free_mem_mib for g in mine))


@PROPERTY_SETTINGS
@given(any_cluster)
def test_namespace_shares_sum_to_a_hundred_percent(cluster: SimulatedCluster) -> None:
    summary = summarise(cluster)
    total_cores = sum(w.cores for w in summary.workloads)
    total_mem = sum(w.mem_mib for w in summary.workloads)
    core_shares = sum(ns.core_share_percent for ns in summary.namespaces)
    mem_shares = sum(ns.mem_share_percent for ns in summary.namespaces)
    assert math.isclose(core_shares, 100.0 if total_cores > 0 else 0.0, abs_tol=1e-6)
    assert math.isclose(mem_shares, 100.0 if total_mem > 0 else 0.0, abs_tol=1e-6)


@PROPERTY_SETTINGS
@given(any_cluster)
def test_consistent_text_raises_no_check_warning(cluster: SimulatedCluster) -> None:
    # The simulator writes device totals, shared counts, ratios and quotas that agree.
    warnings = [c for c in summarise(cluster).checks if c.status == "warn"]
    assert warnings == []


# ---------------------------------------------------------------------------- ground truth


@PROPERTY_SETTINGS
@given(any_cluster)
def test_summary_matches_the_ground_truth(cluster: SimulatedCluster) -> None:
    summary = summarise(cluster)
    truth = cluster.device_totals()
    devices = {d.uuid: d for d in cluster.devices}
    for g in summary.gpus:
        t, d = truth[g.device_uuid], devices[g.device_uuid]
        assert (g.node, g.device_index, g.device_type) == (d.node, d.index, d.device_type)
        assert (g.core_limit, g.mem_limit_mib) == (d.core_limit, d.mem_limit_mib)
        assert (g.core_allocated, g.mem_allocated_mib) == (t.cores, t.mem_mib)
        assert g.shared_count == t.shared_count
        assert close(g.mem_allocated_percent, t.mem_mib / d.mem_limit_mib * 100)
    assert summary.cluster.nodes == len(cluster.nodes)
    assert summary.cluster.pods == len(cluster.pods)
    namespaces = {ns.namespace: ns for ns in summary.namespaces}
    for name, (cores, mem) in cluster.namespace_totals().items():
        assert (namespaces[name].cores, namespaces[name].mem_mib) == (cores, mem), name
    for quota in cluster.quotas():
        if quota.namespace not in namespaces:
            continue
        figures = {q.resource: q for q in namespaces[quota.namespace].quota}
        assert figures[quota.resource].used == quota.used
        assert figures[quota.resource].limit == quota.limit
    workloads = Counter((w.namespace, w.pod, w.device_uuid) for w in summary.workloads)
    assert workloads == Counter((a.namespace, a.pod, a.device_uuid) for a in cluster.allocations)


# ---------------------------------------------------------------------------- surfaces


def numbers(summary: Summary) -> tuple[object, ...]:
    """Everything computed from allocations (quota limits have no legacy twin: left out)."""
    namespaces = tuple(
        (
            ns.namespace,
            ns.cores,
            ns.mem_mib,
            ns.core_share_percent,
            ns.mem_share_percent,
            ns.pods,
            ns.gpus_touched,
            ns.allocations,
            tuple((q.resource, q.used) for q in ns.quota),
        )
        for ns in summary.namespaces
    )
    return (
        summary.cluster,
        summary.nodes,
        summary.gpus,
        summary.workloads,
        namespaces,
        summary.capacity,
    )


@PROPERTY_SETTINGS
@given(any_cluster)
def test_legacy_and_both_surfaces_give_the_same_numbers(cluster: SimulatedCluster) -> None:
    current = summarise(cluster)
    legacy = summarise(cluster, legacy=True)
    both = summarise(cluster, both=True)
    assert (current.input.surface, legacy.input.surface, both.input.surface) == (
        "current",
        "legacy",
        "mixed",
    )
    assert numbers(legacy) == numbers(current)
    assert numbers(both) == numbers(current)
    assert both.namespaces == current.namespaces  # both surfaces keep the quota limits
