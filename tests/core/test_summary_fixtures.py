"""The summary of the shared fixtures must match scheduler-small.expected.json to the unit."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from core.api import summarize_text
from core.model import SourceInfo, Summary
from core.views.json_view import to_document
from tests.conftest import read_fixture

EXPECTED: dict[str, Any] = json.loads(read_fixture("scheduler-small.expected.json"))
SOURCE = SourceInfo(kind="file", label="fixture")


def legacy_only(text: str) -> str:
    """What a pre-v2.9 cluster emits: the legacy families only (plus hami_build_info)."""
    kept = []
    for line in text.splitlines():
        name = re.sub(r"^# (HELP|TYPE) ", "", line).split("{")[0].split(" ")[0]
        if name.startswith("hami_") and name != "hami_build_info":
            continue
        kept.append(line)
    return "\n".join(kept) + "\n"


def summary_of(name: str) -> Summary:
    return summarize_text(read_fixture(name), SOURCE)


SCHEDULER_INPUTS = {
    "current": lambda: summary_of("scheduler-small.prom"),
    "mixed": lambda: summary_of("scheduler-small-legacy.prom"),
    "legacy": lambda: summarize_text(
        legacy_only(read_fixture("scheduler-small-legacy.prom")), SOURCE
    ),
}


@pytest.fixture(params=sorted(SCHEDULER_INPUTS))
def surface_and_summary(request: pytest.FixtureRequest) -> tuple[str, Summary]:
    return request.param, SCHEDULER_INPUTS[request.param]()


def test_surface_is_reported(surface_and_summary: tuple[str, Summary]) -> None:
    surface, summary = surface_and_summary
    assert summary.input.surface == surface
    assert summary.input.components == ("scheduler",)


def test_cluster_totals(surface_and_summary: tuple[str, Summary]) -> None:
    _, summary = surface_and_summary
    expected = EXPECTED["cluster"]
    cluster = to_document(summary)["cluster"]
    for key in (
        "nodes",
        "gpus",
        "idle_gpus",
        "full_gpus",
        "partial_gpus",
        "inconsistent_gpus",
        "shared_gpus",
        "exclusive_gpus",
        "free_whole_gpus",
        "free_cores",
        "free_mem_mib",
        "core_limit",
        "core_allocated",
        "mem_limit_mib",
        "mem_allocated_mib",
        "pods",
        "namespaces",
        "core_allocated_percent",
        "mem_allocated_percent",
    ):
        assert cluster[key] == pytest.approx(expected[key], abs=1e-4), key


def test_nodes(surface_and_summary: tuple[str, Summary]) -> None:
    _, summary = surface_and_summary
    nodes = {n.node: n for n in summary.nodes}
    assert list(nodes) == sorted(EXPECTED["nodes"])
    for name, exp in EXPECTED["nodes"].items():
        node = nodes[name]
        assert node.gpus == exp["gpus"]
        assert (node.idle_gpus, node.full_gpus, node.partial_gpus, node.inconsistent_gpus) == (
            exp["idle_gpus"],
            exp["full_gpus"],
            exp["partial_gpus"],
            exp["inconsistent_gpus"],
        )
        assert node.shared_gpus == exp["shared_gpus"]
        assert node.core_limit == exp["core_limit"]
        assert node.core_allocated == exp["core_allocated"]
        assert node.mem_limit_mib == exp["mem_limit_mib"]
        assert node.mem_allocated_mib == exp["mem_allocated_mib"]
        assert node.free_whole_gpus == exp["free_whole_gpus"]
        assert node.free_cores == exp["free_cores"]
        assert node.free_mem_mib == exp["free_mem_mib"]
        assert node.largest_free_cores == exp["max_free_cores_on_one_gpu"]
        assert node.largest_free_mem_mib == exp["max_free_mem_mib_on_one_gpu"]
        assert node.core_allocated_percent == pytest.approx(exp["core_allocated_percent"], abs=1e-4)
        assert node.mem_allocated_percent == pytest.approx(exp["mem_allocated_percent"], abs=1e-4)
        assert node.pods == len(exp["pods"])
        assert node.device_types == tuple(exp["device_types"])
        assert node.verdict == "fit-for-large-jobs"


def test_devices(surface_and_summary: tuple[str, Summary]) -> None:
    surface, summary = surface_and_summary
    gpus = {g.device_uuid: g for g in summary.gpus}
    assert len(gpus) == len(EXPECTED["devices"])
    for exp in EXPECTED["devices"]:
        gpu = gpus[exp["device_uuid"]]
        assert (gpu.node, gpu.device_index) == (exp["node"], exp["device_index"])
        if surface != "legacy":  # HAMi <= v2.8 legacy families carry the type too here
            assert gpu.device_type == exp["device_type"]
        assert gpu.mem_limit_mib == exp["mem_limit_mib"]
        assert gpu.mem_allocated_mib == exp["mem_allocated_mib"]
        assert gpu.core_limit == exp["core_limit"]
        assert gpu.core_allocated == exp["core_allocated"]
        assert gpu.shared_count == exp["shared_count"]
        assert gpu.core_allocated_percent == pytest.approx(exp["core_allocated_percent"])
        assert gpu.mem_allocated_percent == pytest.approx(exp["mem_allocated_percent"])
        assert gpu.state == exp["state"]
        assert list(gpu.flags) == exp["flags"]
        assert gpu.free_cores == exp["free_cores"]
        assert gpu.free_mem_mib == exp["free_mem_mib"]
        assert gpu.mem_ratio_reported == pytest.approx(exp["mem_allocated_ratio"])
        assert gpu.containers == len(exp["allocations"])


def test_workloads_and_pods(surface_and_summary: tuple[str, Summary]) -> None:
    _, summary = surface_and_summary
    by_pod: dict[tuple[str, str], list[Any]] = {}
    for w in summary.workloads:
        by_pod.setdefault((w.namespace, w.pod), []).append(w)
    assert len(by_pod) == len(EXPECTED["pods"])
    for exp in EXPECTED["pods"]:
        rows = by_pod[(exp["namespace"], exp["pod"])]
        assert sorted(w.device_uuid for w in rows) == sorted(exp["device_uuids"])
        assert sum(w.cores for w in rows) == exp["gpucores_total"]
        assert sum(w.mem_mib for w in rows) == exp["gpumem_mib_total"]
        assert all(w.multi_gpu == exp["multi_gpu"] for w in rows)
        assert any(w.shares_gpu for w in rows) == exp["shares_a_gpu"]
        assert sum(1 for w in rows if w.whole_gpu) == exp["whole_gpu_devices"]
        assert sum(1 for w in rows if not w.whole_gpu) == exp["fractional_gpu_devices"]
        assert all(w.node == exp["node"] for w in rows)
    keys = [(w.namespace, w.pod, w.device_uuid) for w in summary.workloads]
    assert keys == sorted(keys)


def test_namespaces_and_quota(surface_and_summary: tuple[str, Summary]) -> None:
    surface, summary = surface_and_summary
    namespaces = {ns.namespace: ns for ns in summary.namespaces}
    assert list(namespaces) == sorted(EXPECTED["namespaces"])
    for name, exp in EXPECTED["namespaces"].items():
        ns = namespaces[name]
        assert ns.cores == exp["gpucores"]
        assert ns.mem_mib == exp["gpumem_mib"]
        assert ns.pods == tuple(exp["pods"])
        assert ns.gpus_touched == exp["gpus_touched"]
        assert ns.allocations == exp["allocations"]
        assert ns.core_share_percent == pytest.approx(exp["core_share_percent"], abs=1e-4)
        assert ns.mem_share_percent == pytest.approx(exp["mem_share_percent"], abs=1e-4)
        quota = {f.resource: f for f in ns.quota}
        for resource, exp_q in exp["quota"].items():
            assert quota[resource].used == exp_q["used"]
            if surface == "legacy":
                # Without hami_resource_quota_limit only the limit label is left (limit="0": unset).
                expected_limit = float(exp_q["limit_label"]) or None
            else:
                expected_limit = exp_q["limit_metric"]
            assert quota[resource].limit == expected_limit
    assert sum(ns.core_share_percent for ns in summary.namespaces) == pytest.approx(100.0)
    assert sum(ns.mem_share_percent for ns in summary.namespaces) == pytest.approx(100.0)


def test_checks_all_pass_on_consistent_fixture(surface_and_summary: tuple[str, Summary]) -> None:
    _, summary = surface_and_summary
    assert [(c.name, c.status) for c in summary.checks] == [
        ("device series complete", "pass"),
        ("device memory ratio", "pass"),
        ("device vs container sums", "pass"),
        ("shared count vs allocations", "pass"),
        ("namespace sums vs quota used", "pass"),
    ]


def test_family_counts_match_fixture_description() -> None:
    for name in ("scheduler-small.prom", "scheduler-small-legacy.prom", "vgpumonitor-small.prom"):
        summary = summary_of(name)
        expected = EXPECTED["fixtures"][name]
        assert dict(summary.input.families) == expected["families"], name
        assert sum(dict(summary.input.families).values()) == expected["sample_count"]
        assert summary.input.ignored_series == 0


def test_runtime_section_of_vgpu_monitor() -> None:
    summary = summary_of("vgpumonitor-small.prom")
    expected = EXPECTED["vgpumonitor_gpu_node_1"]
    assert summary.input.components == ("monitor",)
    assert summary.gpus == ()
    assert summary.runtime is not None
    hosts = {h.device_index: h for h in summary.runtime.host_gpus}
    for exp in expected["host_gpus"]:
        host = hosts[exp["device_index"]]
        assert host.node == exp["node"]
        assert host.device_type == exp["device_type_monitor_label"]
        assert host.mem_used_mib == exp["host_memory_used_mib"]
        assert host.utilization_percent == exp["utilization_percent"]
        assert (
            host.memory_controller_utilization_percent
            == (exp["memory_controller_utilization_percent"])
        )
    containers = {(c.namespace, c.pod): c for c in summary.runtime.containers}
    for exp in expected["containers"]:
        c = containers[(exp["namespace"], exp["pod"])]
        assert c.container == exp["container"]
        assert c.device_uuid == exp["device_uuid"]
        assert c.mem_used_mib == exp["used_mib"]
        assert c.mem_limit_mib == exp["limit_mib"]
        assert c.mem_used_percent == pytest.approx(exp["used_percent_of_limit"], abs=1e-4)
        assert c.sm_utilization_percent == exp["sm_util_percent"]
        assert c.seconds_since_last_kernel == exp["last_kernel_elapsed_seconds"]
    # Runtime values are never presented as allocation, and nothing is concluded without it.
    assert summary.cluster.core_allocated == 0 and summary.cluster.mem_allocated_mib == 0
    assert summary.cluster.distribution == "unknown"
    assert summary.capacity == ()
    assert summary.cluster.capacity_answer.startswith("Unknown: the input has no scheduler")
    assert "allocation metrics are absent" in summary.notes[0]


def test_scheduler_and_monitor_join_on_uuid() -> None:
    summary = summarize_text(
        read_fixture("scheduler-small.prom"),
        SOURCE,
        monitor_texts=[read_fixture("vgpumonitor-small.prom")],
    )
    assert summary.input.components == ("monitor", "scheduler")
    assert summary.runtime is not None
    # device_type differs between exporters ("NVIDIA-NVIDIA A100..."), the UUID join still holds.
    assert all(h.scheduler_device_known for h in summary.runtime.host_gpus)
    assert summary.cluster.core_allocated == 275
    assert not any("not instantaneous GPU utilisation" in n for n in summary.notes)
