"""The simulator writes what the HAMi scheduler writes, and what it writes is consistent.

Formatting is proven byte-for-byte against the fixtures (rendered by the Go client); the
consistency checks read the simulator's text back with the reference parser
(``prometheus_client``), independently of the simulator's own ground truth.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict

import pytest
from prometheus_client.parser import text_string_to_metric_families

from core.simulate import (
    GPUCORES_RESOURCE,
    GPUMEM_RESOURCE,
    SimulatedAllocation,
    SimulatedCluster,
    SimulatedDevice,
    drift_cluster,
    go_float,
    render_exposition,
    simulate_cluster,
    simulate_exposition,
)
from tests.conftest import read_fixture

MIB = 1024 * 1024

_UUIDS = (
    "GPU-5f3c1a2e-7b4d-4e91-9c0a-1d2e3f405162",
    "GPU-8a9b0c1d-2e3f-4a5b-8c6d-7e8f90a1b2c3",
    "GPU-0d4e6f81-93a5-4b7c-9d1e-2f3a4b5c6d7e",
    "GPU-c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f",
    "GPU-e7f80912-3a4b-4c5d-ae6f-7b8c9d0e1f20",
    "GPU-6b7c8d9e-0f1a-4b2c-bd3e-4f5a6b7c8d9e",
)


def fixture_cluster() -> SimulatedCluster:
    """The cluster state of ``scheduler-small.prom`` (hami-metrics-reference.md section 8)."""
    a100 = [
        SimulatedDevice("gpu-node-1", i, _UUIDS[i], "NVIDIA A100-PCIE-40GB", 100, 40960)
        for i in range(3)
    ]
    t4 = [
        SimulatedDevice("gpu-node-2", i, _UUIDS[3 + i], "NVIDIA-Tesla T4", 100, 15360)
        for i in range(3)
    ]
    allocations = (
        SimulatedAllocation("team-a", "llm-infer-0", "gpu-node-1", _UUIDS[0], 30, 10240),
        SimulatedAllocation("team-b", "embed-svc-0", "gpu-node-1", _UUIDS[0], 20, 8192),
        SimulatedAllocation("team-a", "train-full-0", "gpu-node-1", _UUIDS[1], 100, 40960),
        SimulatedAllocation("ml-batch", "ddp-worker-0", "gpu-node-2", _UUIDS[4], 50, 7680),
        SimulatedAllocation("ml-batch", "ddp-worker-0", "gpu-node-2", _UUIDS[5], 50, 7680),
        SimulatedAllocation("team-b", "notebook-0", "gpu-node-2", _UUIDS[4], 25, 4096),
    )
    return SimulatedCluster(
        devices=tuple(a100 + t4),
        allocations=allocations,
        quota_namespaces=("ml-batch", "team-a", "team-b"),
        quota_limits=(
            ("team-a", GPUCORES_RESOURCE, 300),
            ("team-a", GPUMEM_RESOURCE, 81920),
            ("team-b", GPUMEM_RESOURCE, 16384),
        ),
    )


def samples_by_family(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    out: dict[str, list[tuple[dict[str, str], float]]] = defaultdict(list)
    for family in text_string_to_metric_families(text):
        assert family.type == "gauge", family.name
        for s in family.samples:
            out[s.name].append((dict(s.labels), s.value))
    return out


# ---------------------------------------------------------------------------- formatting


def test_renders_the_current_fixture_byte_for_byte() -> None:
    assert render_exposition(fixture_cluster()) == read_fixture("scheduler-small.prom")


def test_renders_the_legacy_mode_fixture_byte_for_byte() -> None:
    rendered = render_exposition(fixture_cluster(), both=True)
    assert rendered == read_fixture("scheduler-small-legacy.prom")


def test_legacy_only_is_the_legacy_fixture_without_current_families() -> None:
    # Reference section 8: a legacy-only input is the legacy file minus hami_* (but build info).
    kept: list[str] = []
    skipping = False
    for line in read_fixture("scheduler-small-legacy.prom").splitlines(keepends=True):
        if line.startswith("# HELP "):
            name = line.split()[2]
            skipping = name.startswith("hami_") and name != "hami_build_info"
        if not skipping:
            kept.append(line)
    assert render_exposition(fixture_cluster(), legacy=True) == "".join(kept)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.0, "0"),
        (1.0, "1"),
        (100.0, "100"),
        (0.45, "0.45"),
        (0.7666666666666667, "0.7666666666666667"),
        (999999.0, "999999"),
        (100000.0, "100000"),
        (1e6, "1e+06"),
        (1234567.0, "1.234567e+06"),
        (42949672960.0, "4.294967296e+10"),
        (8053063680.0, "8.05306368e+09"),
        (1e21, "1e+21"),
        (1.5e300, "1.5e+300"),
        (0.0001, "0.0001"),
        (0.00001, "1e-05"),
        (1.25e-7, "1.25e-07"),
        (-2.5, "-2.5"),
        (-0.0, "-0"),
        (123456.5, "123456.5"),
        (float("nan"), "NaN"),
        (float("inf"), "+Inf"),
        (float("-inf"), "-Inf"),
    ],
)
def test_numbers_are_formatted_like_go_strconv_g(value: float, expected: str) -> None:
    assert go_float(value) == expected


def test_every_formatted_number_reads_back_exactly() -> None:
    for value in (0.1, 1 / 3, 2 / 3, 81559 / 40960, 1e-300, 123456789.125, 2.0**60):
        assert float(go_float(value)) == value


def test_text_is_ordered_as_the_go_client_orders_it() -> None:
    text = simulate_exposition(12, 8, seed=4, both=True)
    names = [line.split()[2] for line in text.splitlines() if line.startswith("# HELP ")]
    assert names == sorted(names, key=lambda n: n.encode())
    assert names[0].startswith("GPUDevice") and names[-1].startswith("vGPU")
    families = samples_by_family(text)
    assert set(families) == set(names)
    for name, samples in families.items():
        keys = [tuple(v for _, v in sorted(labels.items())) for labels, _ in samples]
        assert keys == sorted(keys), f"{name} samples are not sorted by label values"
    for line in text.splitlines():
        if line.startswith("#") or not line:
            continue
        label_names = [p.split("=", 1)[0] for p in line[line.index("{") + 1 :].split('",')]
        assert label_names == sorted(label_names), line


def test_zone_label_on_every_series_but_build_info() -> None:
    for name, samples in samples_by_family(simulate_exposition(5, 4, seed=1, both=True)).items():
        for labels, _ in samples:
            if name == "hami_build_info":
                assert "zone" not in labels
            else:
                assert labels["zone"] == "vGPU", name


def test_surfaces_hold_the_right_families() -> None:
    current = set(samples_by_family(simulate_exposition(6, 4, seed=2)))
    legacy = set(samples_by_family(simulate_exposition(6, 4, seed=2, legacy=True)))
    both = set(samples_by_family(simulate_exposition(6, 4, seed=2, both=True)))
    assert all(n.startswith("hami_") for n in current)
    assert legacy == {
        "GPUDeviceCoreAllocated",
        "GPUDeviceCoreLimit",
        "GPUDeviceMemoryAllocated",
        "GPUDeviceMemoryLimit",
        "GPUDeviceSharedNum",
        "QuotaUsed",
        "hami_build_info",
        "nodeGPUMemoryPercentage",
        "nodeGPUOverview",
        "vGPUCoreAllocated",
        "vGPUMemoryAllocated",
    }
    assert both == current | legacy
    with pytest.raises(ValueError, match="not both"):
        simulate_exposition(1, 1, legacy=True, both=True)


# ---------------------------------------------------------------------------- consistency


def _device_key(labels: dict[str, str]) -> tuple[str, str]:
    return labels["node"], labels["device_uuid"]


@pytest.mark.parametrize(
    ("nodes", "gpus", "seed", "t"), [(1, 1, 0, 0), (8, 4, 7, 0), (40, 8, 3, 5)]
)
def test_device_series_agree_with_the_container_series(
    nodes: int, gpus: int, seed: int, t: int
) -> None:
    fam = samples_by_family(simulate_exposition(nodes, gpus, seed=seed, t=t))
    per_device_cores: defaultdict[tuple[str, str], float] = defaultdict(float)
    per_device_mem: defaultdict[tuple[str, str], float] = defaultdict(float)
    per_device_pods: Counter[tuple[str, str]] = Counter()
    ns_cores: defaultdict[str, float] = defaultdict(float)
    ns_mem: defaultdict[str, float] = defaultdict(float)
    for labels, value in fam["hami_vgpu_core_allocated_ratio"]:
        assert labels["container_index"] == "0"
        per_device_cores[_device_key(labels)] += value
        per_device_pods[_device_key(labels)] += 1
        ns_cores[labels["namespace"]] += value
    for labels, value in fam["hami_vgpu_memory_allocated_bytes"]:
        per_device_mem[_device_key(labels)] += value
        ns_mem[labels["namespace"]] += value / MIB

    limits_mem = {_device_key(lb): v for lb, v in fam["hami_gpu_memory_limit_bytes"]}
    limits_cores = {_device_key(lb): v for lb, v in fam["hami_gpu_core_limit_ratio"]}
    assert len(limits_mem) == nodes * gpus
    for labels, value in fam["hami_gpu_core_allocated_ratio"]:
        key = _device_key(labels)
        assert value == per_device_cores[key]
        assert value <= limits_cores[key]
    for labels, value in fam["hami_gpu_memory_allocated_bytes"]:
        key = _device_key(labels)
        assert value == per_device_mem[key]
        assert value <= limits_mem[key]
        assert labels["device_cores"] == go_float(limits_cores[key])  # v2.10: Totalcore
    for labels, value in fam["hami_gpu_shared_count"]:
        assert value == per_device_pods[_device_key(labels)]
    for labels, value in fam["hami_node_gpu_overview"]:
        key = _device_key(labels)
        assert value == per_device_mem[key]
        assert int(labels["device_memory_limit"]) * MIB == limits_mem[key]
    for labels, value in fam["hami_node_gpu_memory_allocated_ratio"]:
        key = _device_key(labels)
        assert value == per_device_mem[key] / limits_mem[key]

    quota_limits = {
        (lb["namespace"], lb["quota_name"]): v for lb, v in fam.get("hami_resource_quota_limit", [])
    }
    seen_namespaces = set()
    for labels, value in fam["hami_resource_quota_used"]:
        ns, resource = labels["namespace"], labels["quota_name"]
        seen_namespaces.add(ns)
        expected = ns_cores[ns] if resource == GPUCORES_RESOURCE else ns_mem[ns]
        assert value == expected, (ns, resource)
        limit = quota_limits.get((ns, resource))
        # The label is HAMi's int64 Limit as a decimal string, never in exponent form.
        assert labels["limit"] == ("0" if limit is None else str(int(limit)))
        if limit is not None:
            assert value <= limit
    assert set(ns_cores) <= seen_namespaces


def test_ground_truth_matches_the_text() -> None:
    cluster = simulate_cluster(20, 8, seed=11, t=3)
    fam = samples_by_family(render_exposition(cluster))
    truth = cluster.device_totals()
    by_uuid = {lb["device_uuid"]: v for lb, v in fam["hami_gpu_core_allocated_ratio"]}
    assert by_uuid == {u: float(t.cores) for u, t in truth.items()}
    quota = {(lb["namespace"], lb["quota_name"]): v for lb, v in fam["hami_resource_quota_used"]}
    assert quota == {(q.namespace, q.resource): float(q.used) for q in cluster.quotas()}
    pods = {(lb["namespace"], lb["pod"]) for lb, _ in fam["hami_vgpu_core_allocated_ratio"]}
    assert pods == set(cluster.pods)


def test_the_mix_is_realistic() -> None:
    cluster = simulate_cluster(50, 8, seed=0)
    totals = cluster.device_totals()
    limits = {d.uuid: d for d in cluster.devices}
    idle = [u for u, t in totals.items() if t.cores == 0 and t.mem_mib == 0]
    full = [
        u
        for u, t in totals.items()
        if t.cores >= limits[u].core_limit and t.mem_mib >= limits[u].mem_limit_mib
    ]
    shared = Counter(t.shared_count for t in totals.values() if t.shared_count >= 2)
    memory_only = [a for a in cluster.allocations if a.cores == 0 and a.mem_mib > 0]
    devices_per_pod = Counter((a.namespace, a.pod) for a in cluster.allocations)
    multi = [p for p, n in devices_per_pod.items() if n >= 2]
    assert len(idle) >= 20 and len(full) >= 20
    assert set(shared) >= {2, 3, 4}
    assert memory_only and multi
    for pod in multi:  # multi-GPU pods stay on one node
        assert len({a.node for a in cluster.allocations if (a.namespace, a.pod) == pod}) == 1
    assert len({d.device_type for d in cluster.devices}) >= 4
    assert len(cluster.namespace_totals()) >= 6
    limited = {ns for ns, _, _ in cluster.quota_limits}
    assert limited and set(cluster.quota_namespaces) - limited  # with and without limits
    assert any(
        (ns, GPUMEM_RESOURCE) in {(n, r) for n, r, _ in cluster.quota_limits}
        and (ns, GPUCORES_RESOURCE) not in {(n, r) for n, r, _ in cluster.quota_limits}
        for ns in limited
    )
    assert all(len(a.pod) > len("x-") and a.pod == a.pod.lower() for a in cluster.allocations)


# ---------------------------------------------------------------------------- determinism, drift


def test_same_seed_same_text_other_seed_other_text() -> None:
    assert simulate_exposition(6, 4, seed=9) == simulate_exposition(6, 4, seed=9)
    assert simulate_exposition(6, 4, seed=9) != simulate_exposition(6, 4, seed=10)


def test_drift_changes_a_few_pods_per_step() -> None:
    base = simulate_cluster(30, 8, seed=2)
    later = simulate_cluster(30, 8, seed=2, t=1)
    before, after = set(base.allocations), set(later.allocations)
    gone, new = before - after, after - before
    assert gone and new
    assert len(gone) <= 10 and len(new) <= 10
    assert base.devices == later.devices
    assert drift_cluster(base, steps=4) == simulate_cluster(30, 8, seed=2, t=4)
    assert drift_cluster(drift_cluster(base), steps=3) == simulate_cluster(30, 8, seed=2, t=4)


def test_long_drift_keeps_the_cluster_alive() -> None:
    cluster = simulate_cluster(10, 4, seed=5)
    later = drift_cluster(cluster, steps=300)
    share = sum(t.cores for t in later.device_totals().values()) / (40 * 100)
    assert 0.1 < share < 0.95
    assert len(later.pods) > len(cluster.pods) // 3


def _core_share(cluster: SimulatedCluster) -> float:
    return sum(t.cores for t in cluster.device_totals().values()) / sum(
        d.core_limit for d in cluster.devices
    )


def test_drift_rises_and_falls_and_pods_come_and_go() -> None:
    cluster = simulate_cluster(20, 4, seed=1)
    shares, pods_seen = [], set(cluster.pods)
    arrived = left = 0
    for _ in range(60):
        later = drift_cluster(cluster, steps=2)
        arrived += len(set(later.pods) - set(cluster.pods))
        left += len(set(cluster.pods) - set(later.pods))
        pods_seen |= set(later.pods)
        shares.append(_core_share(later))
        cluster = later
    assert arrived > 40 and left > 40  # pods arriving and leaving all along
    assert max(shares) - min(shares) > 0.08  # busy and quiet spells, not a flat line
    assert min(shares) > 0.3 and max(shares) < 0.9


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_one_namespace_grows_until_its_quota_stops_it_then_lets_go(seed: int) -> None:
    from core.simulate.generate import GROWTH_STEPS, RELEASE_STEPS, growing_namespace

    cluster = simulate_cluster(20, 4, seed=seed)
    grower = growing_namespace(cluster)
    limits = {(ns, res): lim for ns, res, lim in cluster.quota_limits}
    # The largest core quota of the cluster, computed here from the limits themselves.
    assert limits[(grower, GPUCORES_RESOURCE)] == max(
        lim for (_, res), lim in limits.items() if res == GPUCORES_RESOURCE
    )

    def held(state: SimulatedCluster) -> tuple[int, int]:
        return (
            sum(a.cores for a in state.allocations if a.namespace == grower),
            sum(a.mem_mib for a in state.allocations if a.namespace == grower),
        )

    def fullest_quota(state: SimulatedCluster) -> float:
        """The grower's use of its tighter quota (cores or memory), from its allocations."""
        cores, mem = held(state)
        uses = [cores / limits[(grower, GPUCORES_RESOURCE)]]
        if (grower, GPUMEM_RESOURCE) in limits:
            uses.append(mem / limits[(grower, GPUMEM_RESOURCE)])
        return max(uses)

    start = fullest_quota(cluster)
    growing = [held(cluster)[0]]
    for _ in range(GROWTH_STEPS):
        cluster = drift_cluster(cluster)
        growing.append(held(cluster)[0])
    assert growing[-1] > growing[0] and growing == sorted(growing)  # it only grows
    assert start < 0.9 <= fullest_quota(cluster) <= 1.0  # until its quota is nearly used up
    shrinking = [held(cluster)[0]]
    for _ in range(RELEASE_STEPS):
        cluster = drift_cluster(cluster)
        shrinking.append(held(cluster)[0])
    # Its pods end one a step (now and then a new one of its own arrives among the others').
    assert shrinking[-1] < 0.85 * shrinking[0]
    assert sum(b < a for a, b in itertools.pairwise(shrinking)) >= RELEASE_STEPS // 2


def test_invalid_sizes_are_refused_with_the_reason() -> None:
    with pytest.raises(ValueError, match="nodes must be between 1 and"):
        simulate_cluster(0, 8)
    with pytest.raises(ValueError, match="gpus_per_node must be between 1 and"):
        simulate_cluster(2, 65)
    with pytest.raises(ValueError, match="t must be 0 or more"):
        simulate_cluster(2, 2, t=-1)


@pytest.mark.slow
def test_a_thousand_nodes_of_eight_gpus_fit_the_input_limit() -> None:
    # Its speed is measured in tests/benchmarks/bench_summarize.py, not asserted here.
    text = simulate_exposition(1000, 8, seed=0)
    samples = sum(1 for line in text.splitlines() if line and not line.startswith("#"))
    assert 65_000 <= samples <= 100_000
    assert len(text.encode()) < 64 * MIB  # under the default input limit of summarize
    assert not math.isnan(float(text.rsplit(" ", 1)[-1]))
