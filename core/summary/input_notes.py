"""The sentences a summary says about its input: what it is based on, what was set aside,
and why a text could not be summarised."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from core.command_errors import failed_fetch_error
from core.errors import InputError
from core.exposition import RejectedLine
from core.line_limits import OverLimitLine, over_limit_note
from core.model import InputProblem, InputReport, NamespaceSummary
from core.readings import DeviceKey, MetricsReadings
from core.recognise import describe_foreign_metrics
from core.sample_screen import REPEAT_REASON
from core.text_decoding import looks_like_utf16_read_as_utf8

ALLOCATION_ONLY_NOTE = (
    "This report reflects scheduler allocation state for vGPU share and GPU memory, not "
    "instantaneous GPU utilisation."
)


RUNTIME_ONLY_NOTE = (
    "Scheduler allocation metrics are absent: only vGPU monitor (runtime) families were found, so "
    "namespace and device allocation conclusions are incomplete. Add the scheduler's /metrics "
    "(Service port 'monitor') for allocation figures."
)


# Scheduler families that hold no allocation (MIG instances, deprecated families) without the
# allocation families themselves: a fragment, not a monitor export.
NO_ALLOCATION_NOTE = (
    "Scheduler allocation metrics are absent: the scheduler families found hold no allocation "
    "(e.g. MIG instances or deprecated families), so namespace and device allocation "
    "conclusions cannot be drawn. Paste or scrape the scheduler's whole /metrics (Service port "
    "'monitor') for allocation figures."
)


HOW_TO_GET_METRICS = (
    "Paste the HAMi scheduler's metrics instead: the Service labelled "
    "app.kubernetes.io/component=hami-scheduler, port 'monitor' (default 31993 -> 9395), path "
    "/metrics, e.g. kubectl get --raw "
    '"/api/v1/namespaces/kube-system/services/hami-scheduler:monitor/proxy/metrics".'
)


def over_input_limit(limit: int) -> str:
    """What to do about an input over ``limit``: sentences to follow "X is over the limit.".

    Both causes are real: a cluster larger than the default was made for, and a whole
    Prometheus dump where only the scheduler's page was wanted.
    """
    return (
        f"The input limit is {human_size(limit)}; a 10,000-node scheduler writes about "
        "150 MB. For a larger cluster raise the limit (--max-input-mib, "
        "HAMI_SUMMARY_MAX_INPUT_MIB or max_input_bytes in the settings file); for a whole "
        "Prometheus dump, send the scheduler's /metrics alone."
    )


def human_size(size_bytes: float) -> str:
    for unit in ("bytes", "KiB", "MiB"):
        if size_bytes < 1024 or unit == "MiB":
            return f"{size_bytes:.0f} {unit}" if unit == "bytes" else f"{size_bytes:.1f} {unit}"
        size_bytes /= 1024
    raise AssertionError("unreachable")


def no_hami_error(text: str, samples: int, readings: MetricsReadings, rejected: int) -> InputError:
    if not text.strip():
        return InputError(f"The text is empty: there is nothing to summarise. {HOW_TO_GET_METRICS}")
    if looks_like_utf16_read_as_utf8(text):
        return InputError(
            "That text is UTF-16 read as if it were UTF-8 (every other character is NUL). Save "
            "the metrics as UTF-8 (e.g. iconv -f UTF-16 -t UTF-8), or give the file itself: "
            "files are read in UTF-16 as well."
        )
    if "\x00" in text or text.count("\ufffd") > max(8, len(text) // 100):
        return InputError(
            "That is binary data, not metrics text (for example a compressed or image file). "
            f"Send the /metrics output as plain text; decompress it first if it is gzipped. "
            f"{HOW_TO_GET_METRICS}"
        )
    if not samples:
        failed = failed_fetch_error(text, HOW_TO_GET_METRICS)
        if failed is not None:
            return failed
        detail = (
            f" {rejected} line(s) looked like metrics but could not be read." if rejected else ""
        )
        return InputError(
            "No metrics found in that text: it holds no line of the form "
            f"'name{{labels}} value'.{detail} {HOW_TO_GET_METRICS}"
        )
    if readings.family_counts.get("hami_build_info") and not readings.foreign_families:
        return InputError(
            "Only hami_build_info was found: it names the HAMi version but holds no allocation. "
            + HOW_TO_GET_METRICS
        )
    verdict = describe_foreign_metrics(readings.foreign_families)
    return InputError(f"No HAMi scheduler or vGPU monitor metrics in that text. {verdict}")


def input_problems_note(problems: Sequence[InputProblem]) -> str:
    """One line naming the values left out of every figure (the first few, and how many).

    Lines repeated with the same value (a text pasted twice) change no figure: they are only
    counted, so they do not hide the problems that do.
    """
    if not problems:
        return ""
    wrong = [p for p in problems if p.reason != REPEAT_REASON]
    repeats = len(problems) - len(wrong)
    parts = []
    if wrong:
        parts.append(
            f"{len(wrong)} value(s) that no HAMi exporter writes were left out of every figure: "
            + _listed(wrong)
            + "."
        )
    if repeats:
        parts.append(
            f"{repeats} line(s) repeat a series already read, with the same value; each series "
            "was counted once (was the text pasted twice?)."
        )
    return "Input problems: " + " ".join(parts)


def _listed(problems: Sequence[InputProblem], count: int = 3) -> str:
    listed = "; ".join(f"{p.series} = {p.value} ({p.reason})" for p in problems[:count])
    return listed + (f"; and {len(problems) - count} more" if len(problems) > count else "")


def nothing_within_limits_error(over_limit: Sequence[OverLimitLine]) -> InputError:
    return InputError(
        "No usable HAMi sample in that text. "
        + over_limit_note(tuple(over_limit)).removeprefix("Input problems: ")
    )


def nothing_usable_error(problems: Sequence[InputProblem]) -> InputError:
    return InputError(
        f"No usable HAMi sample in that text: all {len(problems)} were left out because no "
        f"HAMi exporter writes such values ({_listed(problems)}). Send the /metrics output as "
        "the exporter wrote it, without edits."
    )


def unreadable_lines_note(rejected: Sequence[RejectedLine]) -> str:
    """One sentence on the lines that could not be read as metrics: how many, the first one."""
    first = rejected[0]
    return (
        f"Input problems: {len(rejected):,} line(s) could not be read as metrics and are in no "
        f"figure (first at line {first.line_no}: {first.reason}). Send the /metrics output as "
        "the exporter wrote it, without edits."
    )


def lift_warnings(notes: list[str], warnings: Sequence[str]) -> list[str]:
    """The headline: the note saying what the report is based on, if ``notes`` leads with one,
    then every non-empty warning. Each warning is also put into ``notes``, right after the
    headline notes before it."""
    lead_notes = (RUNTIME_ONLY_NOTE, NO_ALLOCATION_NOTE, ALLOCATION_ONLY_NOTE)
    headline = [notes[0]] if notes and notes[0] in lead_notes else []
    for warning in warnings:
        if warning:
            headline.append(warning)
            notes.insert(len(headline) - 1, warning)
    return headline


def device_series_gap_note(missing: Mapping[str, int], values_left_out: bool = False) -> str:
    """``values_left_out``: some device values were set aside as input problems, so a gap may
    be a value that was there but unusable rather than a missing series."""
    gaps = [f"{figure} of {count} GPU(s)" for figure, count in missing.items() if count]
    if not gaps:
        return ""
    what, cause = (
        ("no usable series", "values left out as input problems, or a truncated paste?")
        if values_left_out
        else ("no series", "a truncated paste or partial scrape?")
    )
    return (
        f"Incomplete input: {what} for the "
        + ", ".join(gaps)
        + f" ({cause}). Those GPUs are marked 'incomplete', their "
        "missing figures count as 0, and they are not offered as free capacity."
    )


def _repeated_uuid_note(repeated: Sequence[DeviceKey]) -> str:
    node, uuid = repeated[0]
    more = f" (and {len(repeated) - 1} more)" if len(repeated) > 1 else ""
    return (
        f"Several GPUs of node {node} report the same UUID {uuid}{more}, as when UUIDs are "
        "masked before pasting: they are kept apart by device index, and pod allocations on "
        "that UUID cannot be told apart between them."
    )


# The Ascend device plugin's vNPU monitor (ascend-device-plugin v1.4.0, internal/monitor) writes
# the vGPU monitor's family names, its NPUs' device_type as "Ascend-" + the DCMI product type.
ASCEND_MONITOR_PREFIX = "Ascend-"
ASCEND_MONITOR_NOTE = (
    "Ascend NPUs measured by the Ascend device plugin's vNPU monitor: a container's "
    "utilisation there is its whole NPU's AICore use (the plugin writes no per-container "
    "figure), so a container on a busy NPU is never called idle; its NPUs carry no node label "
    '(named from the scheduler\'s device of the same UUID where the input has it, else "?").'
)


def summary_notes(
    readings: MetricsReadings,
    report: InputReport,
    namespaces: Sequence[NamespaceSummary],
    has_runtime: bool,
    has_real_usage: bool,
) -> list[str]:
    notes: list[str] = []
    if not readings.has_allocation_families:
        only_monitor = "monitor" in readings.components
        notes.append(RUNTIME_ONLY_NOTE if only_monitor else NO_ALLOCATION_NOTE)
    elif not has_runtime and not has_real_usage:
        notes.append(ALLOCATION_ONLY_NOTE)
    if report.surface == "mixed":
        notes.append(
            "Both current (hami_*) and legacy (GPUDevice*, vGPU*, QuotaUsed, ...) names were "
            "present (--legacy-metrics=true): each allocation was counted once, from the current "
            "names."
        )
    elif report.surface == "legacy":
        notes.append(
            "Only legacy family names were found (HAMi <= v2.8, or --legacy-metrics): read with "
            "their own label names."
        )
    if any(h.device_type.startswith(ASCEND_MONITOR_PREFIX) for h in readings.host_gpus.values()):
        notes.append(ASCEND_MONITOR_NOTE)
    if report.hami_version:
        notes.append(f"HAMi version {report.hami_version} (from hami_build_info).")
    if readings.ignored_series:
        families = len(readings.foreign_families)
        example = ", ".join(readings.foreign_families[:3])
        notes.append(
            f"Ignored {readings.ignored_series} series of {families} unrelated "
            f"famil{'y' if families == 1 else 'ies'} ({example}"
            + (", ..." if families > 3 else "")
            + ")."
        )
    if any(ns.totals_from == "quota" for ns in namespaces):
        notes.append(
            "No per-pod allocation series (hami_vgpu_*) were present: namespace totals come from "
            "the quota metrics (hami_resource_quota_used), which HAMi never deletes and may be "
            "stale."
        )
    if readings.mig_instances:
        notes.append(f"{readings.mig_instances} MIG instance(s) are realised on these GPUs.")
    if readings.repeated_device_uuids:
        notes.append(_repeated_uuid_note(readings.repeated_device_uuids))
    if has_real_usage:
        notes.append(
            "Real usage comes from one nvidia-smi reading per pod: a point-in-time indicator, not "
            "an average."
        )
    notes.extend(report.cleaning_notes)
    return notes


def scheduler_state_warning(report: InputReport) -> str:
    """Why the figures may be stale when the replica that answered says it is a standby or
    has not loaded the cluster yet; "" when it does not say so."""
    if report.scheduler_is_leader is False:
        return (
            "Possibly stale: this scheduler replica is not the leader "
            "(hami_scheduler_is_leader 0), and a standby's figures may lag. Scrape the leader, "
            "the holder of the hami-scheduler Lease."
        )
    if report.scheduler_cache_synced is False:
        return (
            "Possibly incomplete: the scheduler's cache was not synced "
            "(hami_scheduler_cache_synced 0), so it may not have loaded every node and pod "
            "yet. Scrape again in a minute."
        )
    return ""


def scheduler_state_words(report: InputReport) -> str:
    """Which replica answered, for the source line: "" when the scheduler does not say."""
    if report.scheduler_is_leader is None and report.scheduler_cache_synced is None:
        return ""
    role = {True: "leader", False: "standby replica", None: "replica"}[report.scheduler_is_leader]
    synced = {True: "cache synced", False: "cache not synced", None: ""}[
        report.scheduler_cache_synced
    ]
    return f"scheduler {role}" + (f", {synced}" if synced else "")
