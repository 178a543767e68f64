"""Expositions from older HAMi releases and their quirks, read as HAMi meant them."""

from __future__ import annotations

import re

from core.api import summarize_text
from core.model import SourceInfo
from core.views import render
from tests.conftest import read_fixture
from tests.core.exposition_builder import Scheduler

PASTE = SourceInfo(kind="paste", label="pasted text")


def test_a_monitor_family_declared_counter_is_read_under_its_own_name() -> None:
    # Older vGPU monitors declare Device_memory_desc_of_container as a counter; the text format
    # then names its samples ..._total. The export holds nothing else, and is still HAMi's.
    labels = 'podnamespace="ml",podname="train-0",ctrname="main",vdeviceid="0",deviceuuid="GPU-1"'
    text = (
        "# HELP Device_memory_desc_of_container Container device memory description\n"
        "# TYPE Device_memory_desc_of_container counter\n"
        f'Device_memory_desc_of_container{{{labels},context="0",module="0",data="0"}} 2048\n'
        "# HELP vGPU_device_memory_usage_in_bytes vGPU device usage\n"
        "# TYPE vGPU_device_memory_usage_in_bytes counter\n"
        f"vGPU_device_memory_usage_in_bytes{{{labels}}} 1073741824\n"
    )
    summary = summarize_text(text, PASTE)
    assert summary.input.components == ("monitor",)
    assert summary.input.families == (
        ("Device_memory_desc_of_container_total", 1),
        ("vGPU_device_memory_usage_in_bytes_total", 1),
    )
    assert summary.input.ignored_series == 0
    assert summary.runtime is not None
    (container,) = summary.runtime.containers
    assert (container.namespace, container.pod, container.device_uuid) == ("ml", "train-0", "GPU-1")
    assert container.mem_used_mib == 1024.0


def _legacy_shared_counts_only_in_the_overview_label() -> tuple[str, dict[str, int]]:
    """The legacy fixture as HAMi <= v2.9 without GPUDeviceSharedNum or per-pod series: the
    shared count survives only in nodeGPUOverview's ``sharedcontainers`` label."""
    lines = read_fixture("scheduler-small-legacy.prom").splitlines()
    shared = {
        re.search(r'deviceuuid="([^"]+)"', line).group(1): int(line.rsplit(" ", 1)[1])  # type: ignore[union-attr]
        for line in lines
        if line.startswith("GPUDeviceSharedNum{")
    }
    kept: list[str] = []
    for line in lines:
        family = re.match(r"(?:# (?:HELP|TYPE) )?([A-Za-z_]+)", line)
        name = family.group(1) if family else ""
        if name.startswith("hami_") or name == "GPUDeviceSharedNum" or name.startswith("vGPU"):
            continue
        if line.startswith("nodeGPUOverview{"):
            uuid = re.search(r'deviceuuid="([^"]+)"', line).group(1)  # type: ignore[union-attr]
            line = line.replace("{", f'{{sharedcontainers="{shared[uuid]}",', 1)
        kept.append(line)
    return "\n".join(kept) + "\n", shared


def test_shared_counts_come_from_the_overview_label_when_the_family_is_absent() -> None:
    text, shared = _legacy_shared_counts_only_in_the_overview_label()
    assert "GPUDeviceSharedNum" not in text and "vGPUCoreAllocated" not in text
    assert sorted(shared.values()) == [0, 0, 1, 1, 2, 2]
    summary = summarize_text(text, PASTE)
    assert {gpu.device_uuid: gpu.shared_count for gpu in summary.gpus} == shared
    assert summary.cluster.shared_gpus == sum(1 for count in shared.values() if count > 1)


def test_devices_of_one_node_with_one_masked_uuid_stay_apart_and_are_noted() -> None:
    s = Scheduler()
    s.device("gpu-node-1", 0, cores=30, mem_mib=10240, shared=1, uuid="GPU-xxxx")
    s.device("gpu-node-1", 1, cores=100, mem_mib=40960, shared=1, uuid="GPU-xxxx")
    s.device("gpu-node-2", 0, cores=0, mem_mib=0, shared=0, uuid="GPU-xxxx")
    summary = summarize_text(s.text(), PASTE)
    rows = [(g.node, g.device_index, g.device_uuid, g.core_allocated) for g in summary.gpus]
    assert rows == [
        ("gpu-node-1", 0, "GPU-xxxx", 30),
        ("gpu-node-1", 1, "GPU-xxxx", 100),
        ("gpu-node-2", 0, "GPU-xxxx", 0),
    ]
    assert (summary.cluster.gpus, summary.cluster.core_allocated) == (3, 130)
    assert (
        "Several GPUs of node gpu-node-1 report the same UUID GPU-xxxx, as when UUIDs are masked "
        "before pasting: they are kept apart by device index, and pod allocations on that UUID "
        "cannot be told apart between them."
    ) in summary.notes


def test_a_pod_on_an_unlisted_device_is_not_joined_to_a_gpu_when_uuids_repeat() -> None:
    # Two GPUs with one masked UUID give the GPU rows one (node, UUID) key fewer than rows: a
    # device that only an allocation names is still numbered past every GPU.
    s = Scheduler()
    s.device("gpu-node-1", 0, cores=30, mem_mib=10240, shared=1, uuid="GPU-xxxx")
    s.device("gpu-node-1", 1, cores=100, mem_mib=40960, shared=1, uuid="GPU-xxxx")
    s.device("gpu-node-2", 0, cores=0, mem_mib=0, shared=1, uuid="GPU-b")
    s.pod("ns1", "p1", "gpu-node-2", "GPU-zzzz", cores=100, mem_mib=100)
    s.pod("ns1", "p2", "gpu-node-2", "GPU-b", cores=0, mem_mib=0)
    summary = summarize_text(s.text(), PASTE)
    shares = {w.device_uuid: w.shares_gpu for w in summary.workloads}
    assert shares == {"GPU-zzzz": False, "GPU-b": False}
    assert summary.namespaces[0].gpus_touched == 2
    sums = next(c for c in summary.checks if c.name == "device vs container sums")
    assert "gpu-node-2/GPU 0" not in sums.message
    assert "GPU-zzzz: containers hold 100 cores / 100.00 MiB on a device" in sums.message


def test_a_scheduler_fragment_without_allocation_is_not_called_a_monitor_export() -> None:
    text = (
        "# TYPE hami_node_gpu_mig_instance_info gauge\n"
        'hami_node_gpu_mig_instance_info{device_index="0",device_type="NVIDIA A100-SXM4-80GB",'
        'device_uuid="GPU-a",instance_id="1",node="n1",profile="1g.10gb"} 1\n'
    )
    summary = summarize_text(text, PASTE)
    assert summary.input.components == ("scheduler",)
    assert summary.headline == (
        "Scheduler allocation metrics are absent: the scheduler families found hold no "
        "allocation (e.g. MIG instances or deprecated families), so namespace and device "
        "allocation conclusions cannot be drawn. Paste or scrape the scheduler's whole /metrics "
        "(Service port 'monitor') for allocation figures.",
    )
    assert not any("vGPU monitor" in note for note in summary.notes)


def test_a_fragment_without_limit_series_never_claims_every_gpu_is_allocated() -> None:
    # Six GPUs, two of them idle, with the memory limit families cut away.
    lines = read_fixture("scheduler-small.prom").splitlines()
    cut = ("hami_gpu_memory_limit_bytes", "hami_node_gpu_overview")
    text = "\n".join(line for line in lines if not any(name in line for name in cut)) + "\n"
    summary = summarize_text(text, PASTE)
    assert all("incomplete" in gpu.flags for gpu in summary.gpus) and len(summary.gpus) == 6
    answer = summary.cluster.capacity_answer
    assert "fully allocated" not in answer
    assert answer.endswith(
        "Not known: every GPU lacks a limit or allocation series, so no free capacity can be "
        "judged."
    )
    kinds = {finding.kind: finding.message for finding in summary.findings}
    assert "idle" not in kinds
    assert kinds["idle-incomplete"].startswith(
        "2 GPU(s) with nothing allocated lack a limit or allocation series, so they are not "
        "offered for jobs: "
    )
    text_report = render(summary, "text")
    assert "Free: 0 whole GPUs, 0 cores, 0 GiB (not counting 6 incomplete GPUs)" in text_report
    # The first page says the same: free capacity of those GPUs is not known, never 0.
    page = " ".join(text_report.split("\nDetails\n")[0].split())
    assert "0 whole GPUs free, 6 GPUs not known" in page
    assert "cores allocated: not known (6 GPUs lack a limit or allocation series)" in page
    assert "what fits now: not known: no GPU has every series" in page
    assert "fully allocated" not in page


def test_some_incomplete_gpus_leave_the_rest_judged() -> None:
    s = Scheduler()
    s.device("n1", 0, cores=100, mem_mib=40960, shared=1)
    s.device("n1", 1, cores=0, mem_mib=0, shared=0)
    text = "\n".join(
        line
        for line in s.text().splitlines()
        if not (line.startswith("hami_gpu_memory_limit_bytes") and 'device_index="1"' in line)
    )
    summary = summarize_text(text + "\n", PASTE)
    assert summary.cluster.capacity_answer.endswith(
        "Not known for 1 GPU(s) that lack a limit or allocation series; the other 1 are fully "
        "allocated."
    )


def test_gpu_rows_sort_by_node_then_index_as_a_number_whatever_the_labels() -> None:
    # Indexes beyond one character's range or below -1 take the tuple sort; the rows come out
    # in the same order as with the string keys.
    s = Scheduler()
    s.device("n1", 2_000_000, cores=0, mem_mib=0, uuid="GPU-a")
    s.device("n1", 3, cores=0, mem_mib=0, uuid="GPU-b")
    s.device("n0", 1, cores=0, mem_mib=0, uuid="GPU-c")
    s.device("n0", -2, cores=0, mem_mib=0, uuid="GPU-d")
    rows = [(g.node, g.device_index) for g in summarize_text(s.text(), PASTE).gpus]
    assert rows == [("n0", -2), ("n0", 1), ("n1", 3), ("n1", 2_000_000)]
    plain = Scheduler()
    plain.device("n1", 7, cores=0, mem_mib=0, uuid="GPU-a")
    plain.device("n1", 10, cores=0, mem_mib=0, uuid="GPU-b")
    plain.device("n", 9, cores=0, mem_mib=0, uuid="GPU-c")
    rows = [(g.node, g.device_index) for g in summarize_text(plain.text(), PASTE).gpus]
    assert rows == [("n", 9), ("n1", 7), ("n1", 10)]


def test_a_pod_with_containers_on_two_nodes_counts_once_on_each() -> None:
    s = Scheduler()
    a = s.device("n1", 0, cores=60, mem_mib=2048, shared=1)
    b = s.device("n2", 0, cores=40, mem_mib=1024, shared=1)
    c = s.device("n2", 1, cores=30, mem_mib=0, shared=1)
    lines = []
    # Sorted by UUID the containers sit on n1, n2, n2: the pod is counted once on n2.
    placed = [("n1", a, 60), ("n2", b, 40), ("n2", c, 30)]
    for container, (node, uuid, cores) in enumerate(placed):
        labels = (
            f'container_index="{container}",device_uuid="{uuid}",namespace="ml",node="{node}",'
            f'pod="train",zone="vGPU"'
        )
        lines.append(f"hami_vgpu_core_allocated_ratio{{{labels}}} {cores}")
        lines.append(f"hami_vgpu_memory_allocated_bytes{{{labels}}} 0")
    summary = summarize_text(s.text() + "\n".join(lines) + "\n", PASTE)
    assert [(n.node, n.pods) for n in summary.nodes] == [("n1", 1), ("n2", 1)]
    assert all(w.multi_gpu and not w.shares_gpu for w in summary.workloads)
    assert [g.containers for g in summary.gpus] == [1, 1, 1]
