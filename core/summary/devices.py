"""Per-GPU and per-node figures.

A GPU is idle with nothing allocated, full when its cores are all allocated and its memory is
at least the saturation share of its limit, inconsistent when one dimension is allocated and
the other, which the device has, is not, and partial otherwise. A node is fit for large jobs
with a whole GPU free, fragmented with free slices only, full with nothing free.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import repeat
from operator import attrgetter

from core.model import GpuState, GpuSummary, NodeSummary, NodeVerdict
from core.readings import BYTES_PER_MIB, DeviceReading
from core.settings import Thresholds
from core.summary.columns import GpuColumns


def percent(part: float, whole: float) -> float:
    return part / whole * 100.0 if whole > 0 else 0.0


def _index(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        return -1


# A GPU's flags, in the order a row lists them, as bits: ``_FLAG_SETS[bits]`` is the tuple.
# (One shared tuple per combination: each GPU row costs a lookup instead of a list built flag
# by flag.)
_FLAG_NAMES = (
    "shared",
    "exclusive",
    "core-saturated",
    "memory-saturated",
    "overcommitted",
    "investigate",
)
_SHARED, _EXCLUSIVE, _CORE_SATURATED, _MEM_SATURATED, _OVERCOMMITTED, _INVESTIGATE = (
    1 << bit for bit in range(len(_FLAG_NAMES))
)
_FLAG_SETS = tuple(
    tuple(name for bit, name in enumerate(_FLAG_NAMES) if bits >> bit & 1)
    for bits in range(1 << len(_FLAG_NAMES))
)


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
    cores: float,
    core_limit: float,
    mem_mib: float,
    mem_limit_mib: float,
    shared: int,
    t: Thresholds,
) -> tuple[str, ...]:
    """The flags of a GPU in ``state`` (by ``gpu_state``) with ``shared`` allocations."""
    if state == "idle" and shared == 0:
        return ()
    bits = _SHARED if shared > 1 else _EXCLUSIVE if shared == 1 else 0
    saturation = t.saturation_percent
    if core_limit > 0 and cores / core_limit * 100.0 >= saturation:
        bits |= _CORE_SATURATED
    if mem_limit_mib > 0 and mem_mib / mem_limit_mib * 100.0 >= saturation:
        bits |= _MEM_SATURATED
    # A limit of 0 is unknown (series missing) or a dimension the device lacks: never "over" it.
    if (core_limit > 0 and cores > core_limit) or (mem_limit_mib > 0 and mem_mib > mem_limit_mib):
        bits |= _OVERCOMMITTED
    if state == "inconsistent":
        bits |= _INVESTIGATE
    return _FLAG_SETS[bits]


_NODE = attrgetter("node")
_UUID = attrgetter("device_uuid")
_DEVICE_INDEX = attrgetter("device_index")
_MAX_CODE = 0x10FFFF  # chr's largest code point


def gpu_order(devices: Iterable[DeviceReading]) -> tuple[list[DeviceReading], list[int]]:
    """The devices in the order of the GPU rows (node, index, UUID), and their indexes.

    A GPU's number is its position in this order: the rows, the allocations' device numbers and
    the per-device tallies all use it. The sort key is one string per device where that sorts as
    the (node, index, UUID) tuple does (``_string_keys``): strings compare several times faster
    than tuples.
    """
    listed = list(devices)
    written = list(map(_DEVICE_INDEX, listed))
    number = {text: _index(text) for text in set(written)}  # a cluster has a few indexes
    nodes = list(map(_NODE, listed))
    uuids = list(map(_UUID, listed))
    keys = _string_keys(nodes, written, number, uuids)
    if keys is not None:
        order = sorted(range(len(listed)), key=keys.__getitem__)
    else:
        tuples = list(zip(nodes, map(number.__getitem__, written), uuids, strict=True))
        order = sorted(range(len(listed)), key=tuples.__getitem__)
    indexes = map(number.__getitem__, map(written.__getitem__, order))
    return list(map(listed.__getitem__, order)), list(indexes)


def _string_keys(
    nodes: list[str], written: list[str], number: Mapping[str, int], uuids: list[str]
) -> list[str] | None:
    """``node NUL chr(index + 1) UUID`` for each device, or None where that would not sort as
    the tuple does: a node with a NUL of its own, or an index out of ``chr``'s range.

    NUL sorts below every other character, so a node sorts before a longer one that begins
    with it; one character per index compares as the numbers do; the UUID comes last.
    """
    if "\0" in "".join(nodes) or not all(-1 <= n < _MAX_CODE for n in number.values()):
        return None
    char = {text: chr(n + 1) for text, n in number.items()}
    parts = zip(nodes, repeat("\0"), map(char.__getitem__, written), uuids, strict=False)
    return list(map("".join, parts))


def build_gpus(
    devices: Sequence[DeviceReading],
    indexes: Sequence[int],
    containers: Sequence[int],
    namespaces: Sequence[tuple[str, ...]],
    t: Thresholds,
) -> tuple[list[GpuSummary], dict[str, int]]:
    """The GPU rows and how many GPUs lack each figure's series.

    ``devices`` and their ``indexes`` are in row order (``gpu_order``); ``containers`` and
    ``namespaces`` hold each device's distinct allocations and their namespaces, sorted.
    """
    gpus: list[GpuSummary] = []
    append = gpus.append
    missing = dict.fromkeys(_FIGURES, 0)
    rows = zip(devices, indexes, containers, namespaces, strict=True)
    for dev, index, held, names in rows:
        core_limit = dev.core_limit
        cores = dev.core_allocated
        mem_limit = dev.mem_limit_bytes
        mem_limit = (
            mem_limit / BYTES_PER_MIB if mem_limit is not None else dev.overview_mem_limit_mib
        )
        mem = dev.mem_allocated_bytes
        if mem is None:
            mem = dev.overview_mem_allocated_bytes
        if mem is not None:
            mem = mem / BYTES_PER_MIB
        if core_limit is None or mem_limit is None or cores is None or mem is None:
            incomplete = True
            core_limit, mem_limit, cores, mem = _count_missing(
                (core_limit, mem_limit, cores, mem), missing
            )
        else:
            incomplete = False
        shared = dev.shared_count
        if shared is None:
            shared = dev.overview_shared_count
        shared = int(shared) if shared is not None else held
        state = gpu_state(cores, core_limit, mem, mem_limit, t)
        flags = gpu_flags(state, cores, core_limit, mem, mem_limit, shared, t)
        free_cores = core_limit - cores if core_limit > cores else 0.0
        free_mem = mem_limit - mem if mem_limit > mem else 0.0
        if incomplete:
            # A figure without its series is unknown, not 0: never "full", never free capacity.
            flags = (*flags, "incomplete")
            free_cores = free_mem = 0.0
            if state == "full":
                state = "partial"
        append(
            GpuSummary(
                node=dev.node,
                device_index=index,
                device_uuid=dev.device_uuid,
                device_type=dev.device_type or "unknown",
                core_limit=core_limit,
                core_allocated=cores,
                core_allocated_percent=cores / core_limit * 100.0 if core_limit > 0 else 0.0,
                mem_limit_mib=mem_limit,
                mem_allocated_mib=mem,
                mem_allocated_percent=mem / mem_limit * 100.0 if mem_limit > 0 else 0.0,
                shared_count=shared,
                containers=held,
                state=state,
                flags=flags,
                free_cores=free_cores,
                free_mem_mib=free_mem,
                namespaces=names,
                mem_ratio_reported=dev.mem_ratio,
            )
        )
    return gpus, missing


# A GPU's four figures, in the order ``build_gpus`` reads them, as the device series check names
# them.
_FIGURES = ("core limit", "memory limit", "cores allocated", "memory allocated")


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
            NodeSummary(
                node=name,
                gpus=end - start,
                device_types=tuple(sorted(set(cols.device_type[start:end]))),
                core_limit=float(core_limit),
                core_allocated=float(cores),
                core_allocated_percent=percent(cores, core_limit),
                mem_limit_mib=float(mem_limit),
                mem_allocated_mib=float(mem),
                mem_allocated_percent=percent(mem, mem_limit),
                idle_gpus=idle,
                partial_gpus=node_states.count("partial"),
                full_gpus=node_states.count("full"),
                inconsistent_gpus=node_states.count("inconsistent"),
                shared_gpus=sum(1 for count in cols.shared_count[start:end] if count > 1),
                free_whole_gpus=free_whole,
                free_cores=float(free_cores),
                free_mem_mib=float(free_mem),
                largest_free_cores=float(best_cores),
                largest_free_mem_mib=float(best_mem),
                verdict=node_verdict(free_whole, free_cores, free_mem),
                pods=pods_per_node.get(name, 0),
            )
        )
    return nodes
