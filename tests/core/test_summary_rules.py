"""The summary's rules on states, flags, verdicts, classes, checks and capacity, case by case."""

from __future__ import annotations

import pytest

from core.api import summarize_text
from core.errors import InputError
from core.model import SourceInfo, Summary
from tests.core.exposition_builder import Scheduler

SOURCE = SourceInfo(kind="paste", label="test")


def summarize(s: Scheduler, **kwargs: str) -> Summary:
    return summarize_text(s.text(), SOURCE, **kwargs)  # type: ignore[arg-type]


def gpu(summary: Summary, node: str, index: int):  # type: ignore[no-untyped-def]
    return next(g for g in summary.gpus if g.node == node and g.device_index == index)


def test_states_and_flags() -> None:
    s = Scheduler()
    s.device("n1", 0, cores=0, mem_mib=0, shared=0)
    s.device("n1", 1, cores=100, mem_mib=40960 * 0.995, shared=1)
    s.device("n1", 2, cores=0, mem_mib=8192, shared=1)  # memory-only
    s.device("n1", 3, cores=30, mem_mib=0, shared=1)
    s.device("n1", 4, cores=120, mem_mib=45000, shared=3)
    s.device("n1", 5, cores=40, mem_mib=1000, shared=2)
    summary = summarize(s)
    assert gpu(summary, "n1", 0).state == "idle" and gpu(summary, "n1", 0).flags == ()
    full = gpu(summary, "n1", 1)
    assert full.state == "full"
    assert full.flags == ("exclusive", "core-saturated", "memory-saturated")
    memory_only = gpu(summary, "n1", 2)
    assert memory_only.state == "inconsistent" and "investigate" in memory_only.flags
    assert gpu(summary, "n1", 3).state == "inconsistent"
    over = gpu(summary, "n1", 4)
    assert over.state == "full"
    assert over.flags == ("shared", "core-saturated", "memory-saturated", "overcommitted")
    assert over.free_cores == 0 and over.free_mem_mib == 0
    assert gpu(summary, "n1", 5).state == "partial"
    kinds = {f.kind for f in summary.findings}
    assert {"inconsistent", "overcommitted", "fully-occupied", "shared", "idle"} <= kinds
    inconsistent = next(f for f in summary.findings if f.kind == "inconsistent")
    assert "requested no core share" in inconsistent.message


def test_node_verdicts() -> None:
    s = Scheduler()
    s.device("big", 0, cores=0, mem_mib=0)
    s.device("frag", 0, cores=50, mem_mib=100)
    s.device("frag", 1, cores=100, mem_mib=40960)
    s.device("full", 0, cores=100, mem_mib=40960)
    verdicts = {n.node: n.verdict for n in summarize(s).nodes}
    assert verdicts == {"big": "fit-for-large-jobs", "frag": "fragmented", "full": "full"}


def _classes(s: Scheduler) -> dict[str, str]:
    # The device allocation series would disagree with the pods placed below; the classes
    # come from the pods alone.
    text = (
        s.text()
        .replace("hami_gpu_core_allocated_ratio", "ignored_core")
        .replace("hami_gpu_memory_allocated_bytes", "ignored_mem")
    )
    summary = summarize_text(text, SOURCE)
    return {ns.namespace: ns.usage_class for ns in summary.namespaces}


def test_namespace_classes_by_size_of_the_cluster_and_shape() -> None:
    s = Scheduler()
    uuids = [s.device(f"n{i // 8}", i % 8, cores=0, mem_mib=0) for i in range(200)]
    # big: >= 50 % of allocated cores and memory, on whole GPUs
    for i in range(30):
        s.pod("big", f"trainer-{i}", f"n{i // 8}", uuids[i], cores=100, mem_mib=40960)
    # wide: a sliver of the allocated cores, but a pod on 12 % of the fleet's GPUs: major,
    # never small
    for i in range(40, 64):
        s.pod("wide", f"w{i}", f"n{i // 8}", uuids[i], cores=5, mem_mib=100)
    # mid: 4 GPUs of 200 (2 %), memory only
    for i in range(80, 84):
        s.pod("mid", f"m{i}", f"n{i // 8}", uuids[i], cores=0, mem_mib=20000)
    # tiny: one slice on one GPU of 200 (0.5 %)
    s.pod("tiny", "nb", "n12", uuids[96], cores=10, mem_mib=100)
    # both: one whole GPU and one slice on 2 GPUs (1 %)
    s.pod("both", "a", "n13", uuids[104], cores=100, mem_mib=40960)
    s.pod("both", "b", "n13", uuids[105], cores=20, mem_mib=1000)
    assert _classes(s) == {
        "big": "dominant tenant, whole GPUs",
        "wide": "major tenant, fractions",
        "mid": "medium tenant, memory only",
        "tiny": "small tenant, fractions",
        "both": "medium tenant, mixed",
    }


def test_namespace_footprint_spread_and_quota_use() -> None:
    s = Scheduler()
    uuids = [s.device(f"n{i // 4}", i % 4, cores=0, mem_mib=0) for i in range(40)]
    for i in range(0, 40, 4):  # one pod on each of 10 nodes
        s.pod("spread", f"p{i}", f"n{i // 4}", uuids[i], cores=50, mem_mib=20480)
    s.quota("spread", "nvidia.com/gpucores", 500, limit=400)
    s.quota("spread", "nvidia.com/gpumem", 204800, limit=409600)
    summary = summarize(s)
    ns = next(n for n in summary.namespaces if n.namespace == "spread")
    assert ns.nodes_touched == 10 and ns.gpus_touched == 10
    assert ns.footprint_percent == pytest.approx(25.0)  # 10 of 40 GPUs
    assert ns.quota_use_percent == pytest.approx(125.0)  # the higher of 125 % and 50 %
    assert (ns.size_class, ns.shape) == ("dominant", "fractions")
    assert (ns.quota_state, ns.usage_class) == ("over", "dominant tenant, fractions, over quota")


def test_class_thresholds_come_from_the_settings() -> None:
    from core.settings import Settings, Thresholds

    s = Scheduler()
    uuids = [s.device("n1", i, cores=0, mem_mib=0) for i in range(8)]
    for i, name in enumerate("abc"):
        s.pod(name, "p", "n1", uuids[i], cores=100, mem_mib=40960)
    default = {n.namespace: n.size_class for n in summarize(s).namespaces}
    assert default == dict.fromkeys("abc", "major")  # 1 GPU of 8: 12.5 % of the cluster
    raised = Settings(thresholds=Thresholds(major_tenant_percent=20.0))
    summary = summarize_text(s.text(), SOURCE, settings=raised)
    assert {n.namespace: n.size_class for n in summary.namespaces} == dict.fromkeys("abc", "medium")


def test_fragmented_distribution_and_risk_finding() -> None:
    s = Scheduler()
    for i in range(4):
        uuid = s.device("n1", i, cores=60, mem_mib=20000, shared=1)
        s.pod(f"ns{i}", f"p{i}", "n1", uuid, cores=60, mem_mib=20000)
    summary = summarize(s)
    assert summary.cluster.distribution == "fragmented"
    risk = next(f for f in summary.findings if f.kind == "fragmentation-risk")
    assert "whole-GPU jobs may not" in risk.message
    whole = next(c for c in summary.capacity if c.name == "1 whole GPU")
    assert whole.placements == 0
    assert "Only fractional jobs" not in summary.cluster.capacity_answer  # no half slice fits
    quarter = next(c for c in summary.capacity if c.name == "quarter GPU")
    assert quarter.placements == 4  # 40 free cores and 20960 MiB free on each GPU


def test_capacity_shapes_count_placements_per_node() -> None:
    s = Scheduler()
    for i in range(4):
        s.device("a", i, cores=0, mem_mib=0)
    for i in range(2):
        s.device("b", i, cores=0, mem_mib=0)
    s.device("b", 2, cores=50, mem_mib=20480)
    shapes = {c.name: c for c in summarize(s).capacity}
    assert shapes["1 whole GPU"].placements == 6
    assert shapes["1 whole GPU"].node_count == 2
    assert shapes["4 whole GPUs"].node_count == 1
    assert shapes["2 whole GPUs"].placements == 3
    assert shapes["2 whole GPUs"].nodes == (("a", 2), ("b", 1))
    assert shapes["4 whole GPUs"].placements == 1 and shapes["4 whole GPUs"].nodes == (("a", 1),)
    assert shapes["8 whole GPUs"].placements == 0
    assert shapes["half GPU"].placements == 6 * 2 + 1
    assert shapes["memory-only 40.0 GiB"].placements == 6


def test_checks_warn_with_numbers_on_both_sides() -> None:
    s = Scheduler()
    uuid = s.device("n1", 0, cores=50, mem_mib=10000, shared=3, ratio=0.5)
    s.pod("ns", "p", "n1", uuid, cores=30, mem_mib=10000)
    s.quota("ns", "nvidia.com/gpucores", 80)
    s.quota("ns", "nvidia.com/gpumem", 10000, limit=20000)
    checks = {c.name: c for c in summarize(s).checks}
    ratio = checks["device memory ratio"]
    assert ratio.status == "warn"
    assert "allocated/limit = 0.2441" in ratio.message and "ratio series = 0.5000" in ratio.message
    sums = checks["device vs container sums"]
    assert sums.status == "warn" and "device 50 cores" in sums.message
    assert "containers 30 cores" in sums.message and "stale scheduler cache" in sums.message
    shared = checks["shared count vs allocations"]
    assert shared.status == "warn" and "shared count 3, 1 distinct allocations" in shared.message
    quota = checks["namespace sums vs quota used"]
    assert quota.status == "warn" and "pods 30 cores, quota used 80 cores" in quota.message


def test_checks_are_skipped_when_their_input_is_missing() -> None:
    s = Scheduler()
    s.device("n1", 0, cores=50, mem_mib=10000)
    checks = {c.name: c.status for c in summarize(s).checks}
    assert checks == {
        "device series complete": "pass",
        "device memory ratio": "skip",
        "device vs container sums": "skip",
        "shared count vs allocations": "skip",
        "namespace sums vs quota used": "skip",
    }


def test_quota_only_input_gives_namespace_totals_and_says_so() -> None:
    s = Scheduler()
    s.device("n1", 0, cores=50, mem_mib=10000)
    s.quota("team", "nvidia.com/gpucores", 50, limit=40)
    s.quota("team", "nvidia.com/gpumem", 10000)
    summary = summarize(s)
    (ns,) = summary.namespaces
    assert (ns.cores, ns.mem_mib, ns.totals_from) == (50, 10000, "quota")
    assert any("namespace totals come from the quota metrics" in n for n in summary.notes)
    exceeded = [f for f in summary.findings if f.kind == "quota-exceeded"]
    assert len(exceeded) == 1 and "against a quota limit of 40" in exceeded[0].message


def test_zero_or_missing_quota_limit_is_never_a_violation() -> None:
    s = Scheduler()
    uuid = s.device("n1", 0, cores=50, mem_mib=10000)
    s.pod("team", "p", "n1", uuid, cores=50, mem_mib=10000)
    s.quota("team", "nvidia.com/gpucores", 50, limit=0)
    s.quota("team", "nvidia.com/gpumem", 10000)
    summary = summarize(s)
    assert all(f.limit is None for f in summary.namespaces[0].quota)
    assert not [f for f in summary.findings if f.kind == "quota-exceeded"]


def test_filters_narrow_tables_but_not_the_overview() -> None:
    s = Scheduler()
    a = s.device("n1", 0, cores=50, mem_mib=10000)
    b = s.device("n2", 0, cores=20, mem_mib=1000)
    s.pod("team-a", "p", "n1", a, cores=50, mem_mib=10000)
    s.pod("team-b", "q", "n2", b, cores=20, mem_mib=1000)
    summary = summarize(s, namespace="team-b")
    assert [ns.namespace for ns in summary.namespaces] == ["team-b"]
    assert [g.node for g in summary.gpus] == ["n2"]
    assert summary.cluster.core_allocated == 70
    assert summary.filters == (("namespace", "team-b"),)
    by_node = summarize(s, node="n1")
    assert [w.pod for w in by_node.workloads] == ["p"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"namespace": "nope"},
            "No namespace named 'nope' holds GPUs in these metrics. The namespaces here: team-a.",
        ),
        ({"node": "nope"}, "No node named 'nope' in these metrics. The nodes here: n1."),
    ],
)
def test_unknown_filter_values_are_named(kwargs: dict[str, str], message: str) -> None:
    s = Scheduler()
    uuid = s.device("n1", 0, cores=50, mem_mib=10000)
    s.pod("team-a", "p", "n1", uuid, cores=50, mem_mib=10000)
    with pytest.raises(InputError) as error:
        summarize(s, **kwargs)
    assert error.value.message == message


def test_a_missing_limit_series_is_reported_not_read_as_overcommitment() -> None:
    s = Scheduler()
    uuid = s.device("n1", 0, cores=50, mem_mib=10000, shared=1)
    s.pod("team", "p", "n1", uuid, cores=50, mem_mib=10000)
    text = "\n".join(
        line for line in s.text().splitlines() if not line.startswith("hami_gpu_memory_limit")
    )
    summary = summarize_text(text + "\n", SOURCE)
    (only,) = summary.gpus
    assert "overcommitted" not in only.flags
    assert not [f for f in summary.findings if f.kind == "overcommitted"]
    check = next(c for c in summary.checks if c.name == "device series complete")
    assert check.status == "warn"
    assert check.message.startswith(
        "hami_gpu_memory_limit_bytes / GPUDeviceMemoryLimit missing for 1 GPU(s)."
    )
    assert summary.cluster.capacity_answer.startswith("Incomplete input")


def test_devices_are_identified_by_node_and_uuid() -> None:
    s = Scheduler()
    a = s.device("n1", 0, cores=30, mem_mib=1000, shared=1, uuid="GPU-same")
    b = s.device("n2", 0, cores=60, mem_mib=2000, shared=1, uuid="GPU-same")
    s.pod("x", "p", "n1", a, cores=30, mem_mib=1000)
    s.pod("y", "q", "n2", b, cores=60, mem_mib=2000)
    summary = summarize(s)
    assert [(g.node, g.containers, g.namespaces) for g in summary.gpus] == [
        ("n1", 1, ("x",)),
        ("n2", 1, ("y",)),
    ]
    assert all(not w.shares_gpu for w in summary.workloads)
    assert {c.name: c.status for c in summary.checks}["device vs container sums"] == "pass"


def test_fragmented_verdict_always_comes_with_its_finding() -> None:
    s = Scheduler()
    s.device("n1", 0, cores=0, mem_mib=0)
    for i in range(1, 4):
        uuid = s.device("n1", i, cores=40, mem_mib=10000, shared=1)
        s.pod(f"ns{i}", f"p{i}", "n1", uuid, cores=40, mem_mib=10000)
    summary = summarize(s)
    assert summary.cluster.distribution == "fragmented"
    risk = next(f for f in summary.findings if f.kind == "fragmentation-risk")
    assert "whole-GPU jobs fit only on the 1 idle GPU(s)" in risk.message


def test_gpus_with_missing_series_are_incomplete_and_never_free_capacity() -> None:
    from tests.conftest import read_fixture

    cut = read_fixture("scheduler-small.prom")[:3000]  # ends inside the allocated-memory family
    summary = summarize_text(cut, SOURCE)
    assert all("incomplete" in g.flags for g in summary.gpus)
    assert summary.cluster.free_whole_gpus == 0
    assert all(g.state != "full" for g in summary.gpus)
    assert all(s.placements == 0 for s in summary.capacity)
    assert summary.headline[1].startswith("Incomplete input: no series for the memory limit")
    assert summary.cluster.capacity_answer.startswith("Incomplete input")


def test_monitor_only_text_report_states_no_allocation_figures() -> None:
    from core.views import render
    from tests.conftest import read_fixture

    summary = summarize_text(read_fixture("vgpumonitor-small.prom"), SOURCE)
    text = render(summary, "text")
    assert "No scheduler device series in the input" in text
    assert "Cores allocated" not in text
    assert "Scheduler allocation metrics are absent" in text.split("Cluster overview")[0]
