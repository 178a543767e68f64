"""Per-GPU and per-node figures.

A GPU is idle with nothing allocated, full when its cores are all allocated and its memory is
at least the saturation share of its limit, inconsistent when one dimension is allocated and
the other, which the device has, is not, and partial otherwise. A node is fit for large jobs
with a whole GPU free, fragmented with free slices only, full with nothing free.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from operator import attrgetter
from typing import Any

from core.model import GpuState, GpuSummary, NodeSummary, NodeVerdict, new_row
from core.readings import BYTES_PER_MIB, DeviceKey, DeviceReading
from core.settings import Thresholds
from core.summary.columns import GpuColumns


def percent(part: float, whole: float) -> float:
    return part / whole * 100.0 if whole > 0 else 0.0


def _index(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        return -1


def gpu_state(
    cores: float, core_limit: float, mem_mib: float, mem_limit_mib: float, t: Thresholds
) -> GpuState:
    if cores <= 0 and mem_mib <= 0:
        return "idle"
    if 0 < cores < core_limit and 0 < mem_mib < mem_limit_mib:
        return "partial"  # the common case, decided without the checks below
    if cores >= core_limit > 0 and (
        mem_limit_mib <= 0 or mem_mib >= mem_limit_mib * t.saturation_percent / 100.0
    ):
        return "full"
    # Only a dimension that exists can be missing: devices registered with no memory
    # (AWS Neuron) are not "inconsistent" for allocating cores alone.
    if (mem_mib > 0 and cores <= 0 and core_limit > 0) or (
        cores > 0 and mem_mib <= 0 and mem_limit_mib > 0
    ):
        return "inconsistent"
    return "partial"


def gpu_flags(
    state: GpuState,
    shared_count: int,
    core_pct: float,
    mem_pct: float,
    cores: float,
    core_limit: float,
    mem_mib: float,
    mem_limit_mib: float,
    t: Thresholds,
) -> tuple[str, ...]:
    if state == "idle" and shared_count == 0:
        return ()
    flags: list[str] = []
    if shared_count > 1:
        flags.append("shared")
    elif shared_count == 1:
        flags.append("exclusive")
    if core_limit > 0 and core_pct >= t.saturation_percent:
        flags.append("core-saturated")
    if mem_limit_mib > 0 and mem_pct >= t.saturation_percent:
        flags.append("memory-saturated")
    # A limit of 0 is unknown (series missing) or a dimension the device lacks: never "over" it.
    if (core_limit > 0 and cores > core_limit) or (mem_limit_mib > 0 and mem_mib > mem_limit_mib):
        flags.append("overcommitted")
    if state == "inconsistent":
        flags.append("investigate")
    return tuple(flags)


def build_gpus(
    devices: Iterable[DeviceReading],
    containers_per_device: Mapping[DeviceKey, int],
    namespaces_per_device: Mapping[DeviceKey, tuple[str, ...]],
    t: Thresholds,
) -> tuple[list[GpuSummary], dict[str, int]]:
    """The GPU rows, sorted by node and index, and how many GPUs lack each figure's series."""
    gpus: list[GpuSummary] = []
    append = gpus.append
    missing = dict.fromkeys(_FIGURES, 0)
    for dev in devices:
        figures = _figures(dev)
        core_limit, mem_limit, cores, mem = figures
        incomplete = None in figures
        if incomplete:
            core_limit, mem_limit, cores, mem = _count_missing(figures, missing)
        key = (dev.node, dev.device_uuid)
        containers = containers_per_device.get(key, 0)
        shared_series = dev.shared_count
        if shared_series is None:
            shared_series = dev.overview_shared_count
        shared = int(shared_series) if shared_series is not None else containers
        core_pct = cores / core_limit * 100.0 if core_limit > 0 else 0.0
        mem_pct = mem / mem_limit * 100.0 if mem_limit > 0 else 0.0
        state = gpu_state(cores, core_limit, mem, mem_limit, t)
        flags = gpu_flags(state, shared, core_pct, mem_pct, cores, core_limit, mem, mem_limit, t)
        free_cores = core_limit - cores if core_limit > cores else 0.0
        free_mem = mem_limit - mem if mem_limit > mem else 0.0
        if incomplete:
            # A figure without its series is unknown, not 0: never "full", never free capacity.
            flags = (*flags, "incomplete")
            free_cores = free_mem = 0.0
            if state == "full":
                state = "partial"
        row = (
            dev.node,
            _index(dev.device_index),
            dev.device_uuid,
            dev.device_type or "unknown",
            core_limit,
            cores,
            core_pct,
            mem_limit,
            mem,
            mem_pct,
            shared,
            containers,
            state,
            flags,
            free_cores,
            free_mem,
            namespaces_per_device.get(key, ()),
            dev.mem_ratio,
        )
        append(new_row(GpuSummary, row))
    gpus.sort(key=attrgetter("node", "device_index", "device_uuid"))
    return gpus, missing


# A GPU's four figures, in the order of ``_figures``, as the device series check names them.
_FIGURES = ("core limit", "memory limit", "cores allocated", "memory allocated")


def _figures(dev: DeviceReading) -> tuple[Any, Any, Any, Any]:
    """Core limit, memory limit (MiB), cores and memory (MiB) allocated; None where no series
    gives the figure. The overview's figures fill in for missing memory ones."""
    mem_limit = dev.mem_limit_bytes
    allocated = dev.mem_allocated_bytes
    if allocated is None:
        allocated = dev.overview_mem_allocated_bytes
    return (
        dev.core_limit,
        mem_limit / BYTES_PER_MIB if mem_limit is not None else dev.overview_mem_limit_mib,
        dev.core_allocated,
        allocated / BYTES_PER_MIB if allocated is not None else None,
    )


def _count_missing(
    figures: tuple[float | None, ...], missing: dict[str, int]
) -> tuple[float, float, float, float]:
    """``figures`` with 0 for each one missing, counted in ``missing``."""
    for name, figure in zip(_FIGURES, figures, strict=True):
        if figure is None:
            missing[name] += 1
    core_limit, mem_limit, cores, mem = (0.0 if f is None else f for f in figures)
    return core_limit, mem_limit, cores, mem


def node_verdict(idle: int, free_cores: float, free_mem: float) -> NodeVerdict:
    if idle > 0:
        return "fit-for-large-jobs"
    if free_cores > 0 or free_mem > 0:
        return "fragmented"
    return "full"


def build_nodes(
    gpus: Sequence[GpuSummary], cols: GpuColumns, pods_per_node: Mapping[str, int]
) -> list[NodeSummary]:
    """Per-node totals: sums over each node's run of GPUs (``gpus`` is sorted by node)."""
    nodes: list[NodeSummary] = []
    states = cols.state
    # GPUs that look idle but lack a series: not whole free GPUs (see the "incomplete" flag).
    idle_incomplete = [
        incomplete and state == "idle"
        for incomplete, state in zip(cols.incomplete, states, strict=True)
    ]
    for name, (start, end) in zip(cols.node_names, cols.node_bounds, strict=True):
        core_limit = sum(cols.core_limit[start:end])
        cores = sum(cols.cores[start:end])
        mem_limit = sum(cols.mem_limit_mib[start:end])
        mem = sum(cols.mem_mib[start:end])
        free_cores = sum(cols.free_cores[start:end])
        free_mem = sum(cols.free_mem_mib[start:end])
        node_states = states[start:end]
        idle = node_states.count("idle")
        free_whole = idle - sum(idle_incomplete[start:end])
        # The largest free slice on one GPU: the most free cores, then the most free memory.
        best_cores, best_mem = max(
            zip(cols.free_cores[start:end], cols.free_mem_mib[start:end], strict=True)
        )
        nodes.append(
            new_row(
                NodeSummary,
                (
                    name,
                    end - start,
                    tuple(sorted(set(cols.device_type[start:end]))),
                    float(core_limit),
                    float(cores),
                    percent(cores, core_limit),
                    float(mem_limit),
                    float(mem),
                    percent(mem, mem_limit),
                    idle,
                    node_states.count("partial"),
                    node_states.count("full"),
                    node_states.count("inconsistent"),
                    sum(1 for count in cols.shared_count[start:end] if count > 1),
                    free_whole,
                    float(free_cores),
                    float(free_mem),
                    float(best_cores),
                    float(best_mem),
                    node_verdict(free_whole, free_cores, free_mem),
                    pods_per_node.get(name, 0),
                ),
            )
        )
    return nodes
