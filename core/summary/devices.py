"""Per-GPU and per-node figures (SPEC.md sections 5 and 6)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from operator import attrgetter

from core.model import GpuState, GpuSummary, NodeSummary, NodeVerdict
from core.readings import BYTES_PER_MIB, DeviceReading
from core.settings import Thresholds


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
    # (AWS Neuron, reference 5) are not "inconsistent" for allocating cores alone.
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
    if cores > core_limit or mem_mib > mem_limit_mib:
        flags.append("overcommitted")
    if state == "inconsistent":
        flags.append("investigate")
    return tuple(flags)


def build_gpus(
    devices: Iterable[DeviceReading],
    containers_per_device: Mapping[str, int],
    namespaces_per_device: Mapping[str, tuple[str, ...]],
    t: Thresholds,
) -> list[GpuSummary]:
    gpus: list[GpuSummary] = []
    append = gpus.append
    no_namespaces: tuple[str, ...] = ()
    for dev in devices:
        core_limit = dev.core_limit if dev.core_limit is not None else 0.0
        cores = dev.core_allocated if dev.core_allocated is not None else 0.0
        if dev.mem_limit_bytes is not None:
            mem_limit = dev.mem_limit_bytes / BYTES_PER_MIB
        elif dev.overview_mem_limit_mib is not None:
            mem_limit = dev.overview_mem_limit_mib
        else:
            mem_limit = 0.0
        alloc_bytes = dev.mem_allocated_bytes
        if alloc_bytes is None:
            alloc_bytes = dev.overview_mem_allocated_bytes
        mem = alloc_bytes / BYTES_PER_MIB if alloc_bytes is not None else 0.0
        uuid = dev.device_uuid
        containers = containers_per_device.get(uuid, 0)
        shared = int(dev.shared_count) if dev.shared_count is not None else containers
        core_pct = cores / core_limit * 100.0 if core_limit > 0 else 0.0
        mem_pct = mem / mem_limit * 100.0 if mem_limit > 0 else 0.0
        state = gpu_state(cores, core_limit, mem, mem_limit, t)
        append(
            GpuSummary(
                dev.node,
                _index(dev.device_index),
                uuid,
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
                gpu_flags(state, shared, core_pct, mem_pct, cores, core_limit, mem, mem_limit, t),
                core_limit - cores if core_limit > cores else 0.0,
                mem_limit - mem if mem_limit > mem else 0.0,
                namespaces_per_device.get(uuid, no_namespaces),
                dev.mem_ratio,
            )
        )
    gpus.sort(key=attrgetter("node", "device_index", "device_uuid"))
    return gpus


def node_verdict(idle: int, free_cores: float, free_mem: float) -> NodeVerdict:
    if idle > 0:
        return "fit-for-large-jobs"
    if free_cores > 0 or free_mem > 0:
        return "fragmented"
    return "full"


def build_nodes(gpus: Iterable[GpuSummary], pods_per_node: Mapping[str, int]) -> list[NodeSummary]:
    """Per-node totals in one pass over the GPUs (a large cluster has thousands)."""
    # node -> [core_limit, cores, mem_limit, mem, free_cores, free_mem, idle, partial, full,
    #          inconsistent, shared, gpus, best free cores, best free mem]
    totals: dict[str, list[float]] = {}
    types: dict[str, set[str]] = defaultdict(set)
    state_slot = {"idle": 6, "partial": 7, "full": 8, "inconsistent": 9}
    for g in gpus:
        acc = totals.get(g.node)
        if acc is None:
            acc = totals[g.node] = [0.0] * 12 + [-1.0, -1.0]
        acc[0] += g.core_limit
        acc[1] += g.core_allocated
        acc[2] += g.mem_limit_mib
        acc[3] += g.mem_allocated_mib
        acc[4] += g.free_cores
        acc[5] += g.free_mem_mib
        acc[state_slot[g.state]] += 1
        if g.shared_count > 1:
            acc[10] += 1
        acc[11] += 1
        if (g.free_cores, g.free_mem_mib) > (acc[12], acc[13]):
            acc[12], acc[13] = g.free_cores, g.free_mem_mib
        types[g.node].add(g.device_type)
    nodes: list[NodeSummary] = []
    for name in sorted(totals):
        (
            core_limit,
            cores,
            mem_limit,
            mem,
            free_cores,
            free_mem,
            idle,
            partial,
            full,
            inconsistent,
            shared,
            count,
            best_cores,
            best_mem,
        ) = totals[name]
        nodes.append(
            NodeSummary(
                name,
                int(count),
                tuple(sorted(types[name])),
                core_limit,
                cores,
                percent(cores, core_limit),
                mem_limit,
                mem,
                percent(mem, mem_limit),
                int(idle),
                int(partial),
                int(full),
                int(inconsistent),
                int(shared),
                int(idle),
                free_cores,
                free_mem,
                best_cores,
                best_mem,
                node_verdict(int(idle), free_cores, free_mem),
                pods_per_node.get(name, 0),
            )
        )
    return nodes
