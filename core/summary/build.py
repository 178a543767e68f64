"""Text in, one immutable ``Summary`` out: the pipeline of ``core``.

clean paste -> parse -> typed readings -> devices, workloads, namespaces -> checks, findings,
capacity, runtime, real usage -> notes. Every figure a view shows is computed here, once.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import attrgetter

from core.errors import InputError
from core.exposition import RejectedLine
from core.families import FAMILIES
from core.family_rows import FamilyRows
from core.line_limits import OverLimitLine, over_limit_note, screen_lines
from core.metrics_reader import read_metrics
from core.model import (
    ClusterOverview,
    GpuSummary,
    InputReport,
    NamespaceSummary,
    NodeSummary,
    PodExecResult,
    PodRealUsage,
    ShapeFit,
    SourceInfo,
    Summary,
    Surface,
    Workload,
)
from core.outcomes import outcomes_of
from core.readings import (
    AllocationReading,
    DeviceKey,
    DeviceReading,
    MetricsReadings,
    read_family_rows,
)
from core.settings import DEFAULT_SETTINGS, Settings, Thresholds
from core.summary.capacity import FractionSlices, build_capacity, capacity_answer, fraction_slices
from core.summary.checks import build_checks
from core.summary.columns import GpuColumns
from core.summary.devices import build_gpus, build_nodes, gpu_order, percent
from core.summary.filtered import filter_summary
from core.summary.idle import idle_allocations
from core.summary.input_notes import (
    device_series_gap_note,
    human_size,
    input_problems_note,
    lift_warnings,
    no_hami_error,
    nothing_usable_error,
    nothing_within_limits_error,
    over_input_limit,
    scheduler_state_warning,
    summary_notes,
    unreadable_lines_note,
)
from core.summary.models import build_models, largest_whole_job
from core.summary.patterns import build_findings, distribution
from core.summary.runtime import build_runtime
from core.summary.tenants import Fleet
from core.summary.workloads import AllocationsInOrder, build_namespaces, build_workloads

# Families whose values make a GPU's four figures (limits and allocations of cores and memory).
DEVICE_FIGURE_ROLES = frozenset(
    {
        "core_limit",
        "core_allocated",
        "mem_limit_bytes",
        "mem_allocated_bytes",
        "overview_mem_allocated_bytes",
    }
)
_NODE_AND_UUID = attrgetter("node", "device_uuid")

NO_DEVICES_ANSWER = (
    "Unknown: the input has no scheduler device series, so free capacity cannot be judged; "
    "add the scheduler's /metrics (Service port 'monitor')."
)


def _check_size(text: str, settings: Settings, what: str) -> None:
    limit = settings.limits.max_input_bytes
    # len() counts characters; a str over the limit in characters is over it in bytes too.
    if len(text) > limit:
        raise InputError(
            f"The {what} is {human_size(len(text))}, over the limit. {over_input_limit(limit)}"
        )


def _surface(readings: MetricsReadings) -> Surface:
    seen = readings.surfaces_seen
    if "current" in seen and "legacy" in seen:
        return "mixed"
    if "current" in seen:
        return "current"
    if "legacy" in seen:
        return "legacy"
    return "none"


def _total(nodes: Sequence[NodeSummary], field: str) -> float:
    """The sum of one figure over the node rows, taken in C."""
    total: float = sum(map(attrgetter(field), nodes))
    return total


def _count(nodes: Sequence[NodeSummary], field: str) -> int:
    """The sum of one count (of GPUs) over the node rows, taken in C."""
    count: int = sum(map(attrgetter(field), nodes))
    return count


def _overview(
    cols: GpuColumns,
    nodes: Sequence[NodeSummary],
    namespaces: Sequence[NamespaceSummary],
    answer: str,
    settings: Settings,
) -> ClusterOverview:
    # Summed over nodes, not GPUs: the node totals already hold every GPU once.
    core_limit = _total(nodes, "core_limit")
    cores = _total(nodes, "core_allocated")
    mem_limit = _total(nodes, "mem_limit_mib")
    mem = _total(nodes, "mem_allocated_mib")
    idle = _count(nodes, "idle_gpus")
    # Each namespace row lists its workloads' distinct pods: together, every pod once.
    pods = sum(len(ns.pods) for ns in namespaces)
    return ClusterOverview(
        nodes=len(nodes),
        gpus=len(cols),
        core_limit=core_limit,
        core_allocated=cores,
        core_allocated_percent=percent(cores, core_limit),
        mem_limit_mib=mem_limit,
        mem_allocated_mib=mem,
        mem_allocated_percent=percent(mem, mem_limit),
        idle_gpus=idle,
        partial_gpus=_count(nodes, "partial_gpus"),
        full_gpus=_count(nodes, "full_gpus"),
        inconsistent_gpus=_count(nodes, "inconsistent_gpus"),
        shared_gpus=_count(nodes, "shared_gpus"),
        exclusive_gpus=cols.shared_count.count(1),
        free_whole_gpus=_count(nodes, "free_whole_gpus"),
        free_cores=_total(nodes, "free_cores"),
        free_mem_mib=_total(nodes, "free_mem_mib"),
        pods=pods,
        namespaces=sum(1 for ns in namespaces if ns.cores > 0 or ns.mem_mib > 0),
        distribution=distribution(cols, namespaces, settings.thresholds),
        capacity_answer=answer,
    )


def summarize_text(
    text: str,
    source: SourceInfo,
    *,
    monitor_texts: Sequence[str] = (),
    missing_monitors: Sequence[str] = (),
    real_usage: Sequence[PodExecResult] | None = None,
    namespace: str | None = None,
    node: str | None = None,
    settings: Settings = DEFAULT_SETTINGS,
) -> Summary:
    """Summarise HAMi ``/metrics`` text (scheduler, and/or vGPU monitor families).

    ``text`` may be a messy paste: it is cleaned first and the cleaning is noted in the report.
    ``monitor_texts`` are extra vGPU monitor expositions (one per node) from a live scrape.
    ``real_usage`` are nvidia-smi exec results collected by ``bot``.
    ``namespace`` / ``node`` narrow it (``core.summary.filtered``; cluster totals stay whole).

    Raises ``core.errors.InputError`` with a message for the user when no HAMi series remain
    or the input is over the size limit.
    """
    read = _read_texts(text, monitor_texts, settings)
    readings = read_family_rows(read.rows)
    if not readings.components:
        raise _nothing_to_summarise(read, readings)
    return summarize_readings(
        readings,
        source,
        cleaning_notes=read.paste_notes,
        input_warnings=_set_aside_notes(read),
        missing_monitors=missing_monitors,
        real_usage=real_usage,
        namespace=namespace,
        node=node,
        settings=settings,
    )


@dataclass(frozen=True, slots=True)
class _ReadTexts:
    """The family rows of the metrics text and any monitor texts, with what reading set aside."""

    text: str  # the metrics text after the line screen
    rows: FamilyRows
    rejected_lines: list[RejectedLine]
    paste_notes: tuple[str, ...]
    over_limit: list[OverLimitLine]


def _read_texts(text: str, monitor_texts: Sequence[str], settings: Settings) -> _ReadTexts:
    _check_size(text, settings, "metrics text")
    screened = screen_lines(text)
    text = screened.text
    over_limit = list(screened.over_limit)
    read = read_metrics(text, pasted=True)
    rows, rejected_lines = read.rows, list(read.rejected)
    for number, extra in enumerate(monitor_texts, 1):
        _check_size(extra, settings, "vGPU monitor text")
        screened_extra = screen_lines(extra, f"vGPU monitor text {number}")
        over_limit.extend(screened_extra.over_limit)
        more = read_metrics(screened_extra.text)
        rows.merge(more.rows)
        rejected_lines.extend(more.rejected)
    return _ReadTexts(text, rows, rejected_lines, read.paste_notes, over_limit)


def _nothing_to_summarise(read: _ReadTexts, readings: MetricsReadings) -> InputError:
    """Why texts with no usable HAMi sample cannot be summarised."""
    if readings.problems:
        return nothing_usable_error(readings.problems)
    samples = sum(read.rows.counts.values())
    if read.over_limit and not samples:
        return nothing_within_limits_error(read.over_limit)
    error = no_hami_error(read.text, samples, readings, len(read.rejected_lines))
    if read.over_limit:
        return InputError(f"{error.message} {over_limit_note(tuple(read.over_limit))}")
    return error


def _set_aside_notes(read: _ReadTexts) -> tuple[str, ...]:
    """The sentences about lines set aside before any figure was taken: over a size limit, or
    not readable as metrics (a whole node can be among them: one stray quote in a label
    value makes every line of it unreadable)."""
    notes = []
    if read.over_limit:
        notes.append(over_limit_note(tuple(read.over_limit)))
    if read.rejected_lines:
        notes.append(unreadable_lines_note(read.rejected_lines))
    return tuple(notes)


def allocation_devices(
    allocations: Sequence[AllocationReading],
    devices: Mapping[DeviceKey, object],
    gpu_number: Mapping[DeviceKey, int],
    gpus: int,
) -> tuple[list[DeviceKey], list[int]]:
    """The (node, UUID) of the device each allocation sits on, and that device's number.

    ``gpu_number`` numbers the (node, UUID) of the ``gpus`` GPU rows (``_gpu_numbers``); a
    device the device series do not list is numbered past every row.
    """
    keys = list(map(_NODE_AND_UUID, allocations))
    try:
        return keys, list(map(gpu_number.__getitem__, keys))  # the usual case, in C
    except KeyError:
        pass
    keys = allocation_device_keys(allocations, devices)
    unlisted: dict[DeviceKey, int] = {}
    numbers = [
        gpu_number[key] if key in gpu_number else unlisted.setdefault(key, gpus + len(unlisted))
        for key in keys
    ]
    return keys, numbers


def _gpu_numbers(devices: Sequence[DeviceReading]) -> dict[DeviceKey, int]:
    """The number of each (node, UUID) of the GPU rows: its row's position in ``devices``, or
    the last one's where rows repeat a masked UUID."""
    return dict(zip(map(_NODE_AND_UUID, devices), range(len(devices)), strict=True))


def allocation_device_keys(
    allocations: Sequence[AllocationReading], devices: Mapping[DeviceKey, object]
) -> list[DeviceKey]:
    """The (node, UUID) of the device each allocation sits on: a device is identified by both.
    An allocation whose node label is missing or differs still joins a device by a UUID that
    only one node reports."""
    as_labelled = list(map(_NODE_AND_UUID, allocations))
    if all(map(devices.__contains__, as_labelled)):  # the usual case, checked in C
        return as_labelled
    by_uuid: dict[str, list[DeviceKey]] = defaultdict(list)
    for key in devices:
        by_uuid[key[1]].append(key)
    keys: list[DeviceKey] = []
    for a in allocations:
        key = (a.node, a.device_uuid)
        if key not in devices:
            same_uuid = by_uuid.get(a.device_uuid, ())
            if len(same_uuid) == 1:
                key = same_uuid[0]
        keys.append(key)
    return keys


def summarize_readings(
    readings: MetricsReadings,
    source: SourceInfo,
    *,
    cleaning_notes: Sequence[str] = (),
    input_warnings: Sequence[str] = (),
    missing_monitors: Sequence[str] = (),
    real_usage: Sequence[PodExecResult] | None = None,
    namespace: str | None = None,
    node: str | None = None,
    settings: Settings = DEFAULT_SETTINGS,
) -> Summary:
    """``input_warnings``: sentences about input set aside before reading, for the headline
    (and ``InputReport.set_aside``)."""
    t = settings.thresholds
    devices, indexes = gpu_order(readings.devices.values())
    gpu_number = _gpu_numbers(devices)
    listed = list(readings.allocations.values())
    device_keys, device_ids = allocation_devices(listed, readings.devices, gpu_number, len(devices))
    allocations = AllocationsInOrder(listed, device_keys, device_ids)
    gpus, missing_series = _gpu_rows(devices, indexes, gpu_number, allocations, t)
    cols = GpuColumns.of(gpus)
    workloads, workload_devices = _workload_rows(allocations, cols)
    nodes = build_nodes(gpus, cols, allocations.pods_per_node)
    namespaces = _namespace_rows(readings, workloads, workload_devices, cols, t)
    slices = fraction_slices(cols)
    capacity, answer = _capacity_and_answer(cols, slices, nodes, missing_series)
    device_values_left_out = _device_values_left_out(readings)
    checks = build_checks(
        gpus, cols, workloads, workload_devices, namespaces, missing_series, t,
        values_left_out=device_values_left_out,
    )  # fmt: skip
    scheduler_nodes = {g.device_uuid: g.node for g in gpus}
    hosts, containers = readings.host_gpus.values(), readings.containers.values()
    last_kernel_written = any(
        FAMILIES[name].field == "last_kernel_seconds"
        for name in readings.family_counts
        if name in FAMILIES
    )
    runtime = build_runtime(
        hosts, containers, scheduler_nodes, missing_monitors, t,
        last_kernel_written=last_kernel_written,
        partial_collections=readings.partial_collections,
    )  # fmt: skip
    usage = _real_usage(real_usage, workloads, t)
    report = _input_report(
        readings, cleaning_notes, input_warnings, with_real_usage=real_usage is not None
    )
    notes = summary_notes(readings, report, namespaces, runtime is not None, usage is not None)
    gap_note = device_series_gap_note(missing_series, device_values_left_out)
    warnings = (
        scheduler_state_warning(report),
        *report.set_aside,
        input_problems_note(readings.problems),
        gap_note,
    )
    headline = lift_warnings(notes, warnings)
    whole = Summary(
        source=source,
        input=report,
        cluster=_overview(cols, nodes, namespaces, answer, settings),
        nodes=tuple(nodes),
        gpus=tuple(gpus),
        workloads=tuple(workloads),
        namespaces=tuple(namespaces),
        findings=tuple(build_findings(gpus, cols, workloads, namespaces, t)),
        checks=tuple(checks),
        capacity=tuple(capacity),
        runtime=runtime,
        real_usage=usage,
        notes=tuple(notes),
        headline=tuple(headline),
        models=tuple(build_models(gpus, cols, slices)),
        largest_whole_job=largest_whole_job(nodes),
        idle_allocations=idle_allocations(runtime, usage, t),
        outcomes=outcomes_of(readings.outcomes),
    )
    return filter_summary(whole, namespace=namespace, node=node)


def _gpu_rows(
    devices: Sequence[DeviceReading],
    indexes: Sequence[int],
    gpu_number: Mapping[DeviceKey, int],
    allocations: AllocationsInOrder,
    t: Thresholds,
) -> tuple[list[GpuSummary], dict[str, int]]:
    """The GPU rows (``build_gpus``) and how many GPUs lack each figure's series; ``devices``
    are in row order (``gpu_order``)."""
    # Rows that repeat a (node, UUID) each show the allocations on it, which carry the number
    # of the last of them.
    holders: Sequence[int] = range(len(devices))
    if len(gpu_number) < len(devices):
        holders = list(map(gpu_number.__getitem__, map(_NODE_AND_UUID, devices)))
    return build_gpus(
        devices,
        indexes,
        list(map(allocations.containers.get, holders, repeat(0))),
        list(map(allocations.namespaces.get, holders, repeat(()))),
        t,
    )


def _workload_rows(
    allocations: AllocationsInOrder, cols: GpuColumns
) -> tuple[list[Workload], Sequence[int]]:
    """The workload rows and the device number of each (``build_workloads``)."""
    return build_workloads(allocations, cols.core_limit), allocations.device_ids


def _namespace_rows(
    readings: MetricsReadings,
    workloads: list[Workload],
    workload_devices: Sequence[int],
    cols: GpuColumns,
    t: Thresholds,
) -> list[NamespaceSummary]:
    """The namespace rows, classed against the capacity of the whole fleet of GPUs."""
    fleet = Fleet(float(sum(cols.core_limit)), float(sum(cols.mem_limit_mib)), len(cols))
    return build_namespaces(
        workloads,
        workload_devices,
        readings.quotas.values(),
        readings.quota_limit_family_seen,
        t,
        fleet,
    )


def _device_values_left_out(readings: MetricsReadings) -> bool:
    """Whether some value of a GPU's four figures was set aside as an input problem."""
    return any(FAMILIES[p.family].role in DEVICE_FIGURE_ROLES for p in readings.problems)


def _capacity_and_answer(
    cols: GpuColumns,
    slices: FractionSlices,
    nodes: Sequence[NodeSummary],
    missing_series: Mapping[str, int],
) -> tuple[list[ShapeFit], str]:
    """The capacity outlook and its one-line answer; without device series there is nothing
    to judge capacity by (e.g. monitor metrics only)."""
    if not len(cols):
        return [], NO_DEVICES_ANSWER
    capacity = build_capacity(cols, slices)
    answer = capacity_answer(
        capacity,
        _total(nodes, "free_cores"),
        _total(nodes, "free_mem_mib"),
        gpus=len(cols),
        incomplete_gpus=sum(cols.incomplete),
    )
    if any(missing_series.values()):
        answer = "Incomplete input (see the device series check): " + answer
    return capacity, answer


def _real_usage(
    real_usage: Sequence[PodExecResult] | None, workloads: Sequence[Workload], t: Thresholds
) -> tuple[PodRealUsage, ...] | None:
    """The nvidia-smi readings judged against each pod's allocated memory; None without any."""
    if real_usage is None:
        return None
    from core.usage_assessment import assess_real_usage

    allocated: dict[tuple[str, str], float] = defaultdict(float)
    for w in workloads:
        allocated[(w.namespace, w.pod)] += w.mem_mib
    return assess_real_usage(real_usage, allocated, t)


def _input_report(
    readings: MetricsReadings,
    cleaning_notes: Sequence[str],
    set_aside: Sequence[str],
    *,
    with_real_usage: bool,
) -> InputReport:
    components = sorted(readings.components)
    if with_real_usage:
        components.append("nvidia-smi")
    return InputReport(
        surface=_surface(readings),
        components=tuple(components),
        families=tuple(sorted(readings.family_counts.items())),
        ignored_series=readings.ignored_series,
        cleaning_notes=tuple(cleaning_notes),
        hami_version=readings.hami_version,
        problems=readings.problems,
        set_aside=tuple(note for note in set_aside if note),
        scheduler_is_leader=_flag(readings.scheduler.is_leader),
        scheduler_cache_synced=_flag(readings.scheduler.cache_synced),
    )


def _flag(value: float | None) -> bool | None:
    return None if value is None else value == 1
