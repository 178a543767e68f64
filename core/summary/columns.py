"""The GPU table as columns, for the figures that aggregate over every GPU.

Nodes, capacity shapes, findings, checks and the distribution verdict each look at every GPU; a
1,000-node cluster has 8,000 of them. The rows are NamedTuples, so one ``zip(*gpus)`` turns
them into columns in C, and each pass is a comprehension over plain lists. (numpy did the same
in C, but importing it costs more than every pass together at 8,000 GPUs.) GPUs are sorted by
node, so a node's GPUs form one run: ``node_bounds`` gives each run's start and end.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import accumulate, compress, repeat
from operator import contains

from core.model import FrozenRecord, GpuState, GpuSummary

# Positions of the fields in a GpuSummary row (asserted against its field names below).
_DEVICE_TYPE, _CORE_LIMIT, _CORES, _MEM_LIMIT, _MEM = 3, 4, 5, 7, 8
_SHARED, _CONTAINERS, _STATE, _FLAGS, _FREE_CORES, _FREE_MEM, _MEM_RATIO = (
    10,
    11,
    12,
    13,
    14,
    15,
    17,
)
assert [GpuSummary._fields[i] for i in (_DEVICE_TYPE, _CORE_LIMIT, _CORES, _MEM_LIMIT, _MEM)] == [
    "device_type",
    "core_limit",
    "core_allocated",
    "mem_limit_mib",
    "mem_allocated_mib",
]
assert [
    GpuSummary._fields[i]
    for i in (_SHARED, _CONTAINERS, _STATE, _FLAGS, _FREE_CORES, _FREE_MEM, _MEM_RATIO)
] == [
    "shared_count",
    "containers",
    "state",
    "flags",
    "free_cores",
    "free_mem_mib",
    "mem_ratio_reported",
]


class GpuColumns(FrozenRecord):
    """The GPU rows' fields as columns, built by ``of``: immutable, and equal by its columns
    (a ``FrozenRecord``: a dataclass would import ``dataclasses`` and ``inspect`` into every
    command that summarises)."""

    __slots__ = (
        "containers",
        "core_limit",
        "cores",
        "device_type",
        "free_cores",
        "free_mem_mib",
        "incomplete",
        "mem_limit_mib",
        "mem_mib",
        "mem_ratio",
        "node_bounds",
        "node_names",
        "overcommitted",
        "shared_count",
        "state",
    )
    _FIELDS = (
        "device_type",
        "core_limit",
        "cores",
        "mem_limit_mib",
        "mem_mib",
        "free_cores",
        "free_mem_mib",
        "shared_count",
        "containers",
        "mem_ratio",
        "state",
        "overcommitted",
        "incomplete",
        "node_names",
        "node_bounds",
    )

    device_type: Sequence[str]
    core_limit: Sequence[float]
    cores: Sequence[float]
    mem_limit_mib: Sequence[float]
    mem_mib: Sequence[float]
    free_cores: Sequence[float]
    free_mem_mib: Sequence[float]
    shared_count: Sequence[int]
    containers: Sequence[int]
    mem_ratio: Sequence[float | None]  # None where the ratio series is absent
    state: Sequence[GpuState]
    overcommitted: Sequence[bool]
    incomplete: Sequence[bool]  # a limit or allocation series is missing for the GPU
    node_names: tuple[str, ...]  # one per run, in order
    node_bounds: tuple[tuple[int, int], ...]  # (first, past the last) GPU of each run

    def __init__(
        self,
        device_type: Sequence[str],
        core_limit: Sequence[float],
        cores: Sequence[float],
        mem_limit_mib: Sequence[float],
        mem_mib: Sequence[float],
        free_cores: Sequence[float],
        free_mem_mib: Sequence[float],
        shared_count: Sequence[int],
        containers: Sequence[int],
        mem_ratio: Sequence[float | None],
        state: Sequence[GpuState],
        overcommitted: Sequence[bool],
        incomplete: Sequence[bool],
        node_names: tuple[str, ...],
        node_bounds: tuple[tuple[int, int], ...],
    ) -> None:
        self._store(
            device_type,
            core_limit,
            cores,
            mem_limit_mib,
            mem_mib,
            free_cores,
            free_mem_mib,
            shared_count,
            containers,
            mem_ratio,
            state,
            overcommitted,
            incomplete,
            node_names,
            node_bounds,
        )

    def __repr__(self) -> str:
        return f"GpuColumns({len(self)} GPUs on {len(self.node_names)} nodes)"

    @classmethod
    def of(cls, gpus: Sequence[GpuSummary]) -> GpuColumns:
        """Columns of ``gpus``, which must be sorted by node (``build_gpus`` sorts them)."""
        if not gpus:
            return cls((), (), (), (), (), (), (), (), (), (), (), (), (), (), ())
        columns = list(zip(*gpus, strict=True))
        flags = columns[_FLAGS]
        # A node's GPUs are one run: its names in order, and the runs' ends from their lengths
        # (counted in C rather than comparing each GPU's node with the one before).
        nodes = columns[0]
        names = list(dict.fromkeys(nodes))
        ends = list(accumulate(map(Counter(nodes).__getitem__, names)))
        starts = [0, *ends[:-1]]
        return cls(
            device_type=columns[_DEVICE_TYPE],
            core_limit=columns[_CORE_LIMIT],
            cores=columns[_CORES],
            mem_limit_mib=columns[_MEM_LIMIT],
            mem_mib=columns[_MEM],
            free_cores=columns[_FREE_CORES],
            free_mem_mib=columns[_FREE_MEM],
            shared_count=columns[_SHARED],
            containers=columns[_CONTAINERS],
            mem_ratio=columns[_MEM_RATIO],
            state=columns[_STATE],
            # build_gpus flags a GPU "overcommitted" or "incomplete" on exactly these terms.
            overcommitted=list(map(contains, flags, repeat("overcommitted"))),
            incomplete=list(map(contains, flags, repeat("incomplete"))),
            node_names=tuple(names),
            node_bounds=tuple(zip(starts, ends, strict=True)),
        )

    def __len__(self) -> int:
        return len(self.cores)

    def per_node(self, values: Sequence[float]) -> list[float]:
        """Sum of ``values`` (one per GPU) over each node's GPUs, in node order."""
        return [sum(values[start:end]) for start, end in self.node_bounds]

    def is_state(self, state: GpuState) -> list[bool]:
        return [s == state for s in self.state]


def where(mask: Sequence[bool]) -> list[int]:
    """Positions of the true values of ``mask``."""
    return list(compress(range(len(mask)), mask))
