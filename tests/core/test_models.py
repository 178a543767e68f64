"""Capacity by GPU model, checked against figures computed here from the GPU table."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

from core.api import summarize_text
from core.model import GpuSummary, SourceInfo, Summary
from core.simulate import simulate_exposition
from tests.conftest import read_fixture


@pytest.fixture(scope="module")
def summary() -> Summary:
    return summarize_text(simulate_exposition(60, 8, seed=3), SourceInfo("paste", "sim"))


def _free_whole(g: GpuSummary) -> bool:
    return g.state == "idle" and "incomplete" not in g.flags


def test_every_model_is_listed_with_its_gpus_and_states(summary: Summary) -> None:
    by_model: dict[str, list[GpuSummary]] = defaultdict(list)
    for g in summary.gpus:
        by_model[g.device_type].append(g)
    assert len(by_model) >= 3, "the simulated cluster has several models"
    assert [m.model for m in summary.models] == sorted(
        by_model, key=lambda name: (-len(by_model[name]), name)
    )
    for m in summary.models:
        gpus = by_model[m.model]
        states = Counter(g.state for g in gpus)
        assert (m.gpus, m.nodes) == (len(gpus), len({g.node for g in gpus}))
        assert (m.idle_gpus, m.partial_gpus, m.full_gpus, m.inconsistent_gpus) == (
            states["idle"],
            states["partial"],
            states["full"],
            states["inconsistent"],
        )
        assert m.core_allocated == pytest.approx(sum(g.core_allocated for g in gpus))
        assert m.mem_limit_mib == pytest.approx(sum(g.mem_limit_mib for g in gpus))
        assert m.free_whole_gpus == sum(map(_free_whole, gpus))


def test_whole_gpu_jobs_per_model_and_node(summary: Summary) -> None:
    for m in summary.models:
        per_node = Counter(
            g.node for g in summary.gpus if g.device_type == m.model and _free_whole(g)
        )
        largest = max(per_node.values(), default=0)
        assert m.largest_whole_job == largest
        assert m.largest_whole_job_nodes == sum(1 for n in per_node.values() if n == largest)
        for shape in m.capacity[:4]:
            assert shape.placements == sum(n // shape.gpus for n in per_node.values())
    free = Counter(g.node for g in summary.gpus if _free_whole(g))
    most = max(free.values())
    assert summary.largest_whole_job.gpus == most
    assert summary.largest_whole_job.nodes == sum(1 for n in free.values() if n == most)


def test_the_fixture_has_one_row_per_model() -> None:
    small = summarize_text(read_fixture("scheduler-small.prom"), SourceInfo("paste", "x"))
    assert [(m.model, m.gpus, m.free_whole_gpus) for m in small.models] == [
        ("NVIDIA A100-PCIE-40GB", 3, 1),
        ("NVIDIA-Tesla T4", 3, 1),
    ]
    # One whole GPU free on each node: the largest whole-GPU job is 1 GPU, on 2 nodes.
    assert (small.largest_whole_job.gpus, small.largest_whole_job.nodes) == (1, 2)
    assert small.largest_whole_job.model is None


def test_monitor_only_input_has_no_models() -> None:
    monitor = summarize_text(read_fixture("vgpumonitor-small.prom"), SourceInfo("paste", "x"))
    assert monitor.models == () and monitor.largest_whole_job.gpus == 0
