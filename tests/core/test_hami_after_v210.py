"""Families HAMi added after v2.10: the scheduler's allocation outcome counters (PR #3088) and
the vGPU monitor's hardware health (PR #2732), with the memory controller family's new node
label (PR #2776).

The fixtures are the small exports with these families where and as the Go client writes them:
families sorted by name, labels sorted, counters under TYPE ``counter`` with their ``_total``
names, and the ``zone`` label the exporters' registerer adds.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest

from core.exposition import parse_exposition
from core.family_rows import rows_from_samples
from core.fast_reader import read_go_exposition
from core.history.changes import compare
from core.history.snapshot import (
    decode_snapshot,
    encode_snapshot,
    snapshot_from_json,
    snapshot_of,
    snapshot_to_json,
)
from core.model import SourceInfo
from core.outcomes import OutcomeCount, Outcomes, increase
from core.readings import MetricsReadings, read_family_rows
from core.settings import DEFAULT_SETTINGS
from core.simulate import simulate_exposition
from core.summary.build import summarize_text
from core.views import render
from core.views.changes_view import render_text
from tests.conftest import read_fixture

SOURCE = SourceInfo(kind="file", label="fixture")
OUTCOMES = read_fixture("scheduler-small-outcomes.prom")
HEALTH = read_fixture("vgpumonitor-health.prom")


def general(text: str) -> MetricsReadings:
    return read_family_rows(rows_from_samples(parse_exposition(text).samples))


def bulk(text: str) -> MetricsReadings:
    rows = read_go_exposition(text)
    assert rows is not None, "Go-client text with counters must take the bulk route"
    return read_family_rows(rows)


def one_line(text: str) -> str:
    return " ".join(text.split())


# -- the outcome counters ---------------------------------------------------------------------


def test_counters_are_read_in_bulk_and_equal_the_general_parser() -> None:
    readings = bulk(OUTCOMES)
    assert readings == general(OUTCOMES)
    assert readings.outcomes == (
        OutcomeCount("allocation_failures", "bind", "NVIDIA", "lock", 3.0),
        OutcomeCount("allocation_failures", "filter", "NVIDIA", "lookup", 9.0),
        OutcomeCount("allocation_failures", "filter", "NVIDIA", "no_fit", 20.0),
        OutcomeCount("allocations", "filter", "NVIDIA", "none", 1204.0),
        OutcomeCount("bind_rollbacks", "bind", "NVIDIA", "lock", 2.0),
        OutcomeCount("stale_reservations", "reconcile", "NVIDIA", "stale", 1.0),
    )
    # Read, not refused or ignored as unrelated series.
    assert readings.foreign_families == ()


def test_a_counter_typed_without_total_is_read_by_the_general_parser() -> None:
    """The text format lets a counter's TYPE line name the family without ``_total``; its
    samples keep the suffix. The bulk reader leaves such text to the general parser."""
    text = OUTCOMES.replace(
        "# TYPE hami_scheduler_allocations_total counter",
        "# TYPE hami_scheduler_allocations counter",
    ).replace("# HELP hami_scheduler_allocations_total", "# HELP hami_scheduler_allocations")
    assert read_go_exposition(text) is None
    summary = summarize_text(text, SOURCE)
    assert summary.outcomes is not None
    assert summary.outcomes.total("allocations") == 1204


def test_the_summary_totals_failures_and_names_the_reasons() -> None:
    summary = summarize_text(OUTCOMES, SOURCE)
    outcomes = summary.outcomes
    assert outcomes is not None
    assert [outcomes.total(kind) for kind in ("allocations", "allocation_failures")] == [1204, 32]
    assert outcomes.failure_percent == pytest.approx(32 / 1236 * 100)
    assert [(r.phase, r.failure_reason, r.count) for r in outcomes.failures_by_reason()] == [
        ("filter", "no_fit", 20),
        ("filter", "lookup", 9),
        ("bind", "lock", 3),
    ]
    text = one_line(render(summary, "text"))
    assert (
        "Since the scheduler started: 1,204 allocations, 32 failures (2.6% of attempts: "
        "no_fit 20 at filter, lookup 9 at filter, lock 3 at bind), 2 bind rollbacks, 1 stale "
        "reservation"
    ) in text
    # Rollbacks and stale reservations need attention; failures alone are pods not fitting.
    assert "2 bind rollbacks, 1 stale reservation since the scheduler started" in text
    # The allocation figures are those of the same export without the counters.
    plain = summarize_text(read_fixture("scheduler-small-leader.prom"), SOURCE)
    assert summary.gpus == plain.gpus and summary.cluster == plain.cluster
    assert plain.outcomes is None
    assert "Since the scheduler started" not in render(plain, "text")


def test_the_json_document_carries_every_counter() -> None:
    document = json.loads(render(summarize_text(OUTCOMES, SOURCE), "json"))
    outcomes = document["scheduler_outcomes"]
    assert outcomes["totals"] == {
        "allocations": 1204,
        "allocation_failures": 32,
        "bind_rollbacks": 2,
        "stale_reservations": 1,
        "reconciliation_errors": 0,  # never observed: HAMi writes no series for it
    }
    assert outcomes["failure_percent"] == round(32 / 1236 * 100, 4)
    assert outcomes["failures_by_reason"][0] == {
        "phase": "filter",
        "failure_reason": "no_fit",
        "count": 20,
    }
    assert len(outcomes["series"]) == 6
    plain = json.loads(render(summarize_text(read_fixture("scheduler-small.prom"), SOURCE), "json"))
    assert plain["scheduler_outcomes"] is None


def test_a_fractional_or_negative_count_is_set_aside_as_an_input_problem() -> None:
    text = OUTCOMES.replace('phase="filter"} 1204', 'phase="filter"} -4')
    summary = summarize_text(text, SOURCE)
    assert summary.outcomes is not None
    assert summary.outcomes.total("allocations") == 0
    assert any("hami_scheduler_allocations_total" in note for note in summary.notes)


def test_a_hostile_reason_is_shown_escaped_and_cut() -> None:
    reason = "Card\\nInsufficient" + "X" * 200
    text = OUTCOMES.replace('failure_reason="lookup"', f'failure_reason="{reason}"')
    report = render(summarize_text(text, SOURCE), "text")
    line = next(line for line in report.splitlines() if "no_fit 20" in line)
    assert "Card\\nInsufficientXXX" in report and "X" * 60 not in report
    assert "\x1b" not in line


# -- rates between two readings ---------------------------------------------------------------


def test_increase_counts_growth_and_reads_a_fall_as_a_restart() -> None:
    before = (
        OutcomeCount("allocations", "filter", "NVIDIA", "", 100.0),
        OutcomeCount("allocation_failures", "filter", "NVIDIA", "CardInsufficientMemory", 10.0),
    )
    after = (
        OutcomeCount("allocations", "filter", "NVIDIA", "", 40.0),  # restarted: 40 since
        OutcomeCount("allocation_failures", "filter", "NVIDIA", "CardInsufficientMemory", 16.0),
        OutcomeCount("allocation_failures", "bind", "NVIDIA", "NodeLockFailed", 2.0),  # new
    )
    grown = increase(before, after)
    assert grown.total("allocations") == 40
    assert [(r.failure_reason, r.count) for r in grown.failures_by_reason()] == [
        ("CardInsufficientMemory", 6),
        ("NodeLockFailed", 2),
    ]
    assert Outcomes(()).failure_percent is None


def test_changes_between_two_snapshots_give_failures_an_hour() -> None:
    later = OUTCOMES.replace('"none",phase="filter"} 1204', '"none",phase="filter"} 1354').replace(
        '"no_fit",phase="filter"} 20', '"no_fit",phase="filter"} 28'
    )
    first = snapshot_of(summarize_text(OUTCOMES, SOURCE), 0.0)
    second = snapshot_of(summarize_text(later, SOURCE), 7200.0)
    # Kept snapshots carry the counters through their encoding.
    assert decode_snapshot(encode_snapshot(second)) == second
    changes = compare(first, second)
    assert changes.outcomes is not None
    assert changes.outcomes.total("allocation_failures") == 8
    text = one_line(render_text(changes))
    assert (
        "Scheduler outcomes in these 2.0 h: 150 allocations, 8 failures (5.1% of attempts: "
        "no_fit 8 at filter); 4 failures an hour"
    ) in text


def test_changes_without_counters_in_the_earlier_snapshot_say_nothing_of_them() -> None:
    first = snapshot_of(summarize_text(read_fixture("scheduler-small.prom"), SOURCE), 0.0)
    second = snapshot_of(summarize_text(OUTCOMES, SOURCE), 600.0)
    changes = compare(first, second)
    assert changes.outcomes is None
    assert "Scheduler outcomes" not in render_text(changes)


def test_snapshots_written_before_the_counters_were_read_still_decode() -> None:
    snapshot = snapshot_of(summarize_text(read_fixture("scheduler-small.prom"), SOURCE), 5.0)
    payload = snapshot_to_json(snapshot)
    del payload["out"]
    assert snapshot_from_json(payload) == snapshot


def test_the_simulator_writes_counters_that_only_grow() -> None:
    counts = []
    for step in (0, 3, 9):
        text = simulate_exposition(3, 4, seed=1, t=step, outcomes=True)
        readings = bulk(text)
        assert readings == general(text)
        summary = summarize_text(text, SOURCE)
        assert summary.outcomes is not None
        counts.append([summary.outcomes.total(k) for k in ("allocations", "allocation_failures")])
    assert counts == sorted(counts) and counts[0] != counts[-1]
    assert "_total" not in simulate_exposition(3, 4, seed=1)  # only when asked for


# -- the vGPU monitor's hardware health ------------------------------------------------------


def test_health_families_are_read_per_gpu() -> None:
    readings = bulk(HEALTH)
    assert readings == general(HEALTH)
    hosts = {h.device_index: h for h in readings.host_gpus.values()}
    got = {
        index: (
            h.temperature_celsius,
            h.power_watts,
            h.ecc_corrected,
            h.ecc_uncorrected,
            h.memctl_utilization,
        )
        for index, h in hosts.items()
    }
    assert got == {
        "0": (64.0, 187.5, 0.0, 0.0, 18.0),
        "1": (88.0, 249.981, 7.0, 2.0, 54.0),
        "2": (35.0, 33.412, 0.0, 0.0, 0.0),
    }


def test_the_memory_controller_family_is_read_with_and_without_its_node_label() -> None:
    """v2.10 writes it without a node label (joined by UUID), later versions with one."""
    older = {
        h.device_index: h.memctl_utilization
        for h in bulk(read_fixture("vgpumonitor-small.prom")).host_gpus.values()
    }
    newer = {h.device_index: h.memctl_utilization for h in bulk(HEALTH).host_gpus.values()}
    assert older == newer == {"0": 18.0, "1": 54.0, "2": 0.0}


def test_hot_and_ecc_erroring_gpus_need_attention() -> None:
    summary = summarize_text(OUTCOMES + HEALTH, SOURCE)
    runtime = summary.runtime
    assert runtime is not None
    assert {h.device_index: h.health for h in runtime.host_gpus} == {
        0: (),
        1: ("hot", "ecc"),
        2: (),
    }
    text = one_line(render(summary, "text"))
    assert "1 hot GPU: gpu-node-1/1 88 °C" in text
    assert (
        "1 GPU with uncorrected ECC errors (since the driver loaded): gpu-node-1/1 2 errors" in text
    )
    markdown = render(summary, "markdown")
    assert "| temp | power |" in markdown and "| 88 °C | 250 W |" in markdown
    hosts = json.loads(render(summary, "json"))["runtime"]["host_gpus"]
    assert [
        (h["temperature_celsius"], h["power_watts"], h["ecc_corrected_errors"],
         h["ecc_uncorrected_errors"])
        for h in hosts
    ] == [(64, 187.5, 0, 0), (88, 249.981, 7, 2), (35, 33.412, 0, 0)]  # fmt: skip


def test_the_hot_temperature_is_a_setting() -> None:
    cooler = replace(
        DEFAULT_SETTINGS,
        thresholds=replace(DEFAULT_SETTINGS.thresholds, hot_temperature_celsius=90.0),
    )
    summary = summarize_text(HEALTH, SOURCE, settings=cooler)
    assert summary.runtime is not None
    assert [h.health for h in summary.runtime.host_gpus] == [(), ("ecc",), ()]
    assert "hot GPU" not in render(summary, "text")


def test_an_error_type_nvml_does_not_define_is_not_read() -> None:
    text = HEALTH.replace('error_type="uncorrected"', 'error_type="parity"')
    hosts = bulk(text).host_gpus.values()
    assert {h.ecc_uncorrected for h in hosts} == {None}
    assert {h.ecc_corrected for h in hosts} == {0.0, 7.0}


@pytest.mark.parametrize(
    ("family", "bad"),
    [("hami_host_gpu_temperature_celsius", "-3"), ("hami_host_gpu_power_usage_watts", "1e12")],
)
def test_readings_no_gpu_reports_are_set_aside(family: str, bad: str) -> None:
    line = next(line for line in HEALTH.splitlines() if line.startswith(family + "{"))
    text = HEALTH.replace(line, line.rsplit(" ", 1)[0] + " " + bad)
    summary = summarize_text(text, SOURCE)
    assert any(family in note for note in summary.notes)


# -- the Ascend device plugin's vNPU monitor ---------------------------------------------------

ASCEND = read_fixture("ascend-vnpu-monitor.prom")
NPU0 = "2E4A6C81-0D9F3B57-A1C3E5F7-9B2D4F60-13579BDF"
NPU1 = "7C1E3A5B-4F6D8092-B3D5F7A9-1C3E5A70-2468ACE0"


def _ascend_scheduler() -> str:
    """The scheduler's device families for the two NPUs, as HAMi writes them for Ascend."""
    families = {
        "hami_gpu_core_allocated_ratio": ("Device core allocated", ("100", "50")),
        "hami_gpu_core_limit_ratio": ("Device core limit", ("100", "100")),
        "hami_gpu_memory_allocated_bytes": (
            "Device memory allocated",
            ("5.1539607552e+10", "3.4359738368e+10"),
        ),
        "hami_gpu_memory_limit_bytes": (
            "Device memory limit",
            ("6.8719476736e+10", "6.8719476736e+10"),
        ),
    }
    lines = []
    for name, (help_text, values) in families.items():
        lines += [f"# HELP {name} {help_text}", f"# TYPE {name} gauge"]
        for index, (uuid, value) in enumerate(zip((NPU0, NPU1), values, strict=True)):
            lines.append(
                f'{name}{{device_index="{index}",device_type="Ascend910B3",device_uuid="{uuid}",'
                f'node="ascend-node-1",zone="vGPU"}} {value}'
            )
    return "\n".join(lines) + "\n"


def test_the_ascend_monitor_is_read_without_node_or_zone_labels() -> None:
    readings = bulk(ASCEND)
    assert readings == general(ASCEND)
    assert {
        h.device_uuid: (h.node, h.device_index, h.mem_used_bytes, h.utilization)
        for h in readings.host_gpus.values()
    } == {
        NPU0: ("", "0", 19327352832.0, 63.0),
        NPU1: ("", "1", 12884901888.0, 41.0),
    }
    used = {(c.pod, c.device_uuid): c.mem_used_bytes for c in readings.containers.values()}
    assert used == {
        ("llm-infer-0", NPU0): 13958643712.0,
        ("llm-infer-0", NPU1): 12884901888.0,
        ("embed-svc-0", NPU0): 5368709120.0,
    }
    summary = summarize_text(ASCEND, SOURCE)
    assert any(note.startswith("Ascend NPUs measured by the Ascend") for note in summary.notes)
    text = render(summary, "text")
    assert "2 GPUs measured by the vGPU monitor" in " ".join(text.split())
    assert "?/0  Ascend910B" in text
    # No last-kernel family: not known, never "none yet".
    assert "none yet" not in text and "not known" in text


def test_the_scheduler_names_the_node_of_an_ascend_npu() -> None:
    summary = summarize_text(_ascend_scheduler() + ASCEND, SOURCE)
    assert summary.runtime is not None
    assert [
        (h.node, h.device_uuid, h.scheduler_device_known) for h in summary.runtime.host_gpus
    ] == [
        ("ascend-node-1", NPU0, True),
        ("ascend-node-1", NPU1, True),
    ]
    assert "?/" not in render(summary, "text")


def test_a_memory_controller_series_without_node_still_joins_a_gpu_with_one() -> None:
    """A node-less series of a GPU another family names the node of fills that GPU; it does
    not become a second, node-less GPU."""
    readings = bulk(read_fixture("vgpumonitor-small.prom"))
    assert {h.node for h in readings.host_gpus.values()} == {"gpu-node-1"}
    assert len(readings.host_gpus) == 3


# -- an AMD GPU's vGPU monitor ----------------------------------------------------------------


def test_the_amd_monitor_is_read_without_zone_or_per_container_utilisation() -> None:
    """Byte for byte what HAMi's AMD monitor writes in its own collector test (the NVIDIA
    monitor's family names, no ``zone``, no per-container utilisation or last kernel, and a
    collection gauge of its own)."""
    summary = summarize_text(read_fixture("amd-vgpu-monitor.prom"), SOURCE)
    assert summary.runtime is not None
    [host] = summary.runtime.host_gpus
    assert (host.node, host.device_index, host.device_type) == ("gpu-1", 1, "AMD Radeon Graphics")
    assert host.mem_used_mib == pytest.approx(1_251_446_784 / 2**20)
    assert (host.utilization_percent, host.temperature_celsius, host.power_watts) == (37, 42, 11)
    [container] = summary.runtime.containers
    assert (container.namespace, container.pod, container.container) == ("amd-e2e", "burn", "burn")
    assert (container.mem_used_mib, container.mem_limit_mib) == (1024.0, 4096.0)
    assert container.mem_used_percent == pytest.approx(25.0)
    assert container.sm_utilization_percent is None
    assert container.seconds_since_last_kernel is None and not container.last_kernel_written
    # Not measured idle: its utilisation is not known.
    assert summary.idle_allocations == ()
    text = render(summary, "text")
    assert "unrelated" not in text  # its collection gauge is HAMi's own, and read
    assert summary.runtime.partial_collections == ()
    assert "collection partly failed" not in text
    assert re.search(r"gpu-1\s+1\s+33ff7590-\S+\s+1\.2 GiB\s+37\.0%\s+42 °C\s+11 W", text)


def test_a_monitor_whose_last_collection_partly_failed_needs_attention() -> None:
    amd = read_fixture("amd-vgpu-monitor.prom")
    failed = amd.replace(
        'hami_vgpumonitor_collect_success{node="gpu-1"} 1',
        'hami_vgpumonitor_collect_success{node="gpu-1"} 0\n'
        'hami_vgpumonitor_collect_success{node="gpu-2"} 1\n'
        'hami_vgpumonitor_collect_success{node="gpu-3"} 0',
    )
    assert bulk(failed).partial_collections == ("gpu-1", "gpu-3")
    summary = summarize_text(failed, SOURCE)
    assert summary.runtime is not None
    assert summary.runtime.partial_collections == ("gpu-1", "gpu-3")
    assert (
        "2 vGPU monitors whose last collection partly failed (the figures there may be "
        "incomplete): gpu-1, gpu-3" in one_line(render(summary, "text"))
    )
    document = json.loads(render(summary, "json"))
    assert document["runtime"]["partial_collections"] == ["gpu-1", "gpu-3"]
    # A value no flag takes is set aside, not read as a failure.
    odd = amd.replace('{node="gpu-1"} 1', '{node="gpu-1"} 0.5')
    odd_summary = summarize_text(odd, SOURCE)
    assert odd_summary.runtime is not None and odd_summary.runtime.partial_collections == ()
    assert any("hami_vgpumonitor_collect_success" in note for note in odd_summary.notes)
