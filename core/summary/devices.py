"""Per-GPU and per-node figures (SPEC.md sections 5 and 6)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

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
        containers = containers_per_device.get(dev.device_uuid, 0)
        shared = int(dev.shared_count) if dev.shared_count is not None else containers
        core_pct = percent(cores, core_limit)
        mem_pct = percent(mem, mem_limit)
        state = gpu_state(cores, core_limit, mem, mem_limit, t)
        gpus.append(
            GpuSummary(
                node=dev.node,
                device_index=_index(dev.device_index),
                device_uuid=dev.device_uuid,
                device_type=dev.device_type or "unknown",
                core_limit=core_limit,
                core_allocated=cores,
                core_allocated_percent=core_pct,
                mem_limit_mib=mem_limit,
                mem_allocated_mib=mem,
                mem_allocated_percent=mem_pct,
                shared_count=shared,
                containers=containers,
                state=state,
                flags=gpu_flags(state, shared, core_pct, mem_pct, cores, core_limit, mem,
                                mem_limit, t),
                free_cores=max(core_limit - cores, 0.0),
                free_mem_mib=max(mem_limit - mem, 0.0),
                namespaces=namespaces_per_device.get(dev.device_uuid, ()),
                mem_ratio_reported=dev.mem_ratio,
            )
        )
    gpus.sort(key=lambda g: (g.node, g.device_index, g.device_uuid))
    return gpus


def node_verdict(idle: int, free_cores: float, free_mem: float) -> NodeVerdict:
    if idle > 0:
        return "fit-for-large-jobs"
    if free_cores > 0 or free_mem > 0:
        return "fragmented"
    return "full"


def build_nodes(gpus: Iterable[GpuSummary], pods_per_node: Mapping[str, int]) -> list[NodeSummary]:
    by_node: dict[str, list[GpuSummary]] = defaultdict(list)
    for gpu in gpus:
        by_node[gpu.node].append(gpu)
    nodes: list[NodeSummary] = []
    for name in sorted(by_node):
        members = by_node[name]
        core_limit = sum(g.core_limit for g in members)
        cores = sum(g.core_allocated for g in members)
        mem_limit = sum(g.mem_limit_mib for g in members)
        mem = sum(g.mem_allocated_mib for g in members)
        states = [g.state for g in members]
        idle = states.count("idle")
        free_cores = sum(g.free_cores for g in members)
        free_mem = sum(g.free_mem_mib for g in members)
        best = max(members, key=lambda g: (g.free_cores, g.free_mem_mib))
        nodes.append(
            NodeSummary(
                node=name,
                gpus=len(members),
                device_types=tuple(sorted({g.device_type for g in members})),
                core_limit=core_limit,
                core_allocated=cores,
                core_allocated_percent=percent(cores, core_limit),
                mem_limit_mib=mem_limit,
                mem_allocated_mib=mem,
                mem_allocated_percent=percent(mem, mem_limit),
                idle_gpus=idle,
                partial_gpus=states.count("partial"),
                full_gpus=states.count("full"),
                inconsistent_gpus=states.count("inconsistent"),
                shared_gpus=sum(1 for g in members if "shared" in g.flags),
                free_whole_gpus=idle,
                free_cores=free_cores,
                free_mem_mib=free_mem,
                largest_free_cores=best.free_cores,
                largest_free_mem_mib=best.free_mem_mib,
                verdict=node_verdict(idle, free_cores, free_mem),
                pods=pods_per_node.get(name, 0),
            )
        )
    return nodes
