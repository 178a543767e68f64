"""Values no HAMi exporter writes are input problems: named, left out of every figure, said.

NaN, infinities, negative numbers, values beyond what HAMi's integer types hold, fractional task
slots and second samples of one series used to crash a summary (``int(NaN)``, ``round(inf)``),
leak bare ``NaN``/``Infinity`` into JSON, or make totals lie ("Cores allocated -30 / -30").
"""

from __future__ import annotations

import json

import pytest

from core.api import summarize_text
from core.errors import InputError
from core.model import InputProblem, SourceInfo, Summary
from core.views import render
from tests.conftest import read_fixture

SOURCE = SourceInfo(kind="paste", label="pasted text")
A100_0 = 'node="gpu-node-1",device_uuid="GPU-5f3c1a2e-7b4d-4e91-9c0a-1d2e3f405162",device_index="0"'
A100_0_UUID = 'device_uuid="GPU-5f3c1a2e-7b4d-4e91-9c0a-1d2e3f405162"'


def with_value(text: str, family: str, where: str, value: str) -> str:
    """``text`` with the value of the first ``family`` sample whose line holds ``where`` set."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.startswith(family + "{") and where in line:
            lines[i] = line.rsplit(" ", 1)[0] + " " + value
            return "\n".join(lines)
    raise AssertionError(f"no {family} sample with {where}")


def summary_with(
    family: str, where: str, value: str, fixture: str = "scheduler-small.prom"
) -> Summary:
    return summarize_text(with_value(read_fixture(fixture), family, where, value), SOURCE)


def strict_json(summary: Summary) -> dict[str, object]:
    def refuse(name: str) -> object:
        raise AssertionError(f"bare {name} in JSON")

    document = json.loads(render(summary, "json"), parse_constant=refuse)
    assert isinstance(document, dict)
    return document


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("NaN", "not a number"),
        ("+Inf", "infinite"),
        ("-Inf", "infinite"),
        ("-30", "negative"),
        ("1e308", "above 2,147,483,647, the most HAMi's 32-bit core count holds"),
    ],
)
def test_a_device_core_value_no_exporter_writes_is_named_and_left_out(
    value: str, reason: str
) -> None:
    summary = summary_with("hami_gpu_core_allocated_ratio", A100_0_UUID, value)
    expected_value = {"1e308": "1e+308"}.get(value, value)
    assert summary.input.problems == (
        InputProblem(
            "hami_gpu_core_allocated_ratio",
            f"hami_gpu_core_allocated_ratio{{{A100_0}}}",
            expected_value,
            reason,
        ),
    )
    note = (
        "Input problems: 1 value(s) that no HAMi exporter writes were left out of every figure: "
        f"hami_gpu_core_allocated_ratio{{{A100_0}}} = {expected_value} ({reason})."
    )
    assert summary.headline[1] == note and note in summary.notes
    # 275 cores less the 50 of the left-out sample; that GPU is incomplete, not free capacity.
    assert summary.cluster.core_allocated == 225
    gpu = next(g for g in summary.gpus if g.device_uuid.startswith("GPU-5f3c1a2e"))
    assert "incomplete" in gpu.flags and gpu.free_cores == 0
    assert summary.headline[2].startswith(
        "Incomplete input: no usable series for the cores allocated of 1 GPU(s) (values left "
        "out as input problems, or a truncated paste?)."
    )
    check = next(c for c in summary.checks if c.name == "device series complete")
    assert check.status == "warn" and "missing or unusable for 1 GPU(s)" in check.message
    assert strict_json(summary)["notes"][1] == note  # type: ignore[index]


@pytest.mark.parametrize(
    ("family", "where", "value", "reason"),
    [
        ("hami_gpu_shared_count", A100_0_UUID, "NaN", "not a number"),
        ("hami_gpu_shared_count", A100_0_UUID, "2.5", "not a whole number"),
        (
            "hami_gpu_memory_limit_bytes",
            A100_0_UUID,
            "1e308",
            "above 2,147,483,647 MiB, the most HAMi's 32-bit MiB count holds",
        ),
        ("hami_node_gpu_memory_allocated_ratio", A100_0_UUID, "-Inf", "infinite"),
        ("hami_vgpu_core_allocated_ratio", 'pod="llm-infer-0"', "+Inf", "infinite"),
        ("hami_vgpu_memory_allocated_bytes", 'pod="llm-infer-0"', "-1", "negative"),
        (
            "hami_resource_quota_used",
            'namespace="team-a",quota_name="nvidia.com/gpucores"',
            "NaN",
            "not a number",
        ),
        (
            "hami_resource_quota_limit",
            'namespace="team-a",quota_name="nvidia.com/gpumem"',
            "1e308",
            "above 9,223,372,036,854,775,807, the most a 64-bit quota holds",
        ),
    ],
)
def test_every_allocation_family_survives_and_reports_its_bad_value(
    family: str, where: str, value: str, reason: str
) -> None:
    summary = summary_with(family, where, value)
    [problem] = summary.input.problems
    assert (problem.family, problem.reason) == (family, reason)
    assert problem.series.startswith(family + "{")
    document = strict_json(summary)
    assert document["cluster"]["core_allocated"] >= 0  # type: ignore[index]
    assert all(ns.cores >= 0 and ns.mem_mib >= 0 for ns in summary.namespaces)
    for fmt in ("text", "markdown", "csv"):
        assert "Input problems" in render(summary, fmt) or fmt == "csv"


def test_negative_values_no_longer_give_negative_totals_or_idle_gpus_that_are_not() -> None:
    text = read_fixture("scheduler-small.prom")
    for family in ("hami_gpu_core_allocated_ratio", "hami_gpu_core_limit_ratio"):
        for line in [ln for ln in text.split("\n") if ln.startswith(family + "{")]:
            text = text.replace(line, line.rsplit(" ", 1)[0] + " -30")
    summary = summarize_text(text, SOURCE)
    assert len(summary.input.problems) == 12
    assert summary.cluster.core_allocated == 0 and summary.cluster.core_limit == 0
    assert summary.cluster.free_whole_gpus == 0  # no GPU has known limits: none is offered
    assert "Cores allocated -" not in render(summary, "text")


def test_nothing_usable_left_is_refused_with_the_values_named() -> None:
    text = read_fixture("scheduler-small.prom")
    lines = [
        line
        if line.startswith("#") or not line or line.startswith("hami_build_info")
        else line.rsplit(" ", 1)[0] + " NaN"
        for line in text.split("\n")
    ]
    with pytest.raises(InputError) as refusal:
        summarize_text("\n".join(lines), SOURCE)
    assert refusal.value.message.startswith(
        "No usable HAMi sample in that text: all 63 were left out because no HAMi exporter "
        "writes such values (hami_gpu_core_allocated_ratio{"
    )
    assert refusal.value.message.endswith(
        "; and 60 more). Send the /metrics output as the exporter wrote it, without edits."
    )


def test_a_legacy_twin_still_supplies_a_figure_whose_current_value_is_unusable() -> None:
    summary = summary_with(
        "hami_gpu_core_allocated_ratio", A100_0_UUID, "NaN", "scheduler-small-legacy.prom"
    )
    assert [p.value for p in summary.input.problems] == ["NaN"]
    assert summary.cluster.core_allocated == 275  # GPUDeviceCoreAllocated filled it in
    assert not any("incomplete" in g.flags for g in summary.gpus)


def test_a_repeated_series_keeps_its_first_value_and_says_so() -> None:
    text = read_fixture("scheduler-small.prom")
    line = next(ln for ln in text.split("\n") if ln.startswith("hami_vgpu_core_allocated_ratio{"))
    text = text.replace(line, line + "\n" + line.rsplit(" ", 1)[0] + " 217")
    summary = summarize_text(text, SOURCE)
    assert sum(ns.cores for ns in summary.namespaces) == 275  # not 462: the first value is kept
    [problem] = summary.input.problems
    assert problem.value == "217"
    assert problem.reason == "a second sample of a series already read; the first, 30, is kept"
    assert problem.series == (
        'hami_vgpu_core_allocated_ratio{namespace="team-a",pod="llm-infer-0",'
        'container_index="0",device_uuid="GPU-5f3c1a2e-7b4d-4e91-9c0a-1d2e3f405162",'
        'node="gpu-node-1"}'
    )


def test_a_text_pasted_twice_counts_each_series_once_and_says_how_many_lines_repeat() -> None:
    once = read_fixture("scheduler-small.prom")
    summary = summarize_text(once + once, SOURCE)
    reference = summarize_text(once, SOURCE)
    assert summary.cluster == reference.cluster and summary.namespaces == reference.namespaces
    assert summary.headline[1] == (
        "Input problems: 63 line(s) repeat a series already read, with the same value; each "
        "series was counted once (was the text pasted twice?)."
    )


def test_numeric_labels_no_exporter_writes_are_read_as_not_set() -> None:
    text = read_fixture("scheduler-small.prom").replace(
        'limit="81920",namespace="team-a"', 'limit="+Inf",namespace="team-a"'
    )
    text = text.replace(
        'hami_resource_quota_limit{namespace="team-a",quota_name="nvidia.com/gpumem",'
        'zone="vGPU"} 81920\n',
        "",
    )
    summary = summarize_text(text, SOURCE)
    [problem] = summary.input.problems
    assert problem.value == 'limit="+Inf"' and problem.reason == "label infinite, read as not set"
    team_a = next(ns for ns in summary.namespaces if ns.namespace == "team-a")
    assert {f.resource: f.limit for f in team_a.quota}["nvidia.com/gpumem"] is None
    strict_json(summary)


def test_monitor_values_out_of_range_are_left_out_of_the_runtime_section() -> None:
    summary = summary_with(
        "hami_host_gpu_utilization_ratio", A100_0_UUID, "250", "vgpumonitor-small.prom"
    )
    [problem] = summary.input.problems
    assert (problem.value, problem.reason) == ("250", "above 100%")
    assert summary.runtime is not None
    host = next(h for h in summary.runtime.host_gpus if h.device_uuid.startswith("GPU-5f3c"))
    assert host.utilization_percent is None
    strict_json(summary)


def test_control_characters_in_a_named_series_cannot_break_the_report_line() -> None:
    text = with_value(
        read_fixture("scheduler-small.prom"), "hami_gpu_core_allocated_ratio", A100_0_UUID, "NaN"
    )
    line = next(ln for ln in text.split("\n") if ln.endswith(" NaN"))
    text = text.replace(line, line.replace('node="gpu-node-1"', 'node="gpu\\nnode\x1b[31m"'))
    summary = summarize_text(text, SOURCE)
    [problem] = summary.input.problems
    assert 'node="gpu\\nnode\\x1b[31m"' in problem.series
    assert problem.series.isprintable()


@pytest.mark.parametrize(
    "family", ["hami_vgpu_core_allocated_ratio", "hami_vgpu_memory_allocated_bytes"]
)
def test_a_missing_container_index_is_the_same_series_as_index_0(family: str) -> None:
    text = read_fixture("scheduler-small.prom")
    line = next(ln for ln in text.split("\n") if ln.startswith(family + "{"))
    repeat = line.replace('container_index="0",', "").rsplit(" ", 1)[0] + " 99"
    summary = summarize_text(text.replace(line, line + "\n" + repeat), SOURCE)
    assert [p.value for p in summary.input.problems] == ["99"]
    assert sum(ns.cores for ns in summary.namespaces) == 275
    plain = summarize_text(text, SOURCE)
    assert [ns.mem_mib for ns in summary.namespaces] == [ns.mem_mib for ns in plain.namespaces]
