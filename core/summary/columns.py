"""The GPU table as columns, for the figures that aggregate over every GPU.

Nodes, capacity shapes, findings, checks and the distribution verdict each look at every GPU; a
1,000-node cluster has 8,000 of them. Each field becomes one list (read in C by
``attrgetter``), and each pass is a comprehension over plain lists. (numpy did the same
in C, but importing it costs more than every pass together at 8,000 GPUs.) GPUs are sorted by
node, so a node's GPUs form one run: ``node_bounds`` gives each run's start and end.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate, compress, repeat
from operator import attrgetter, contains
from typing import Any

from core.model import GpuState, GpuSummary


@dataclass(frozen=True, slots=True, repr=False)
class GpuColumns:
    """The GPU rows' fields as columns, built by ``of``."""

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

    def __repr__(self) -> str:
        return f"GpuColumns({len(self)} GPUs on {len(self.node_names)} nodes)"

    @classmethod
    def of(cls, gpus: Sequence[GpuSummary]) -> GpuColumns:
        """Columns of ``gpus``, which must be sorted by node (``build_gpus`` sorts them)."""

        def column(name: str) -> list[Any]:
            return list(map(attrgetter(name), gpus))

        flags = column("flags")
        # A node's GPUs are one run: its names in order, and the runs' ends from their lengths
        # (counted in C rather than comparing each GPU's node with the one before).
        nodes = column("node")
        names = list(dict.fromkeys(nodes))
        ends = list(accumulate(map(Counter(nodes).__getitem__, names)))
        starts = [0, *ends[:-1]] if ends else []
        return cls(
            device_type=column("device_type"),
            core_limit=column("core_limit"),
            cores=column("core_allocated"),
            mem_limit_mib=column("mem_limit_mib"),
            mem_mib=column("mem_allocated_mib"),
            free_cores=column("free_cores"),
            free_mem_mib=column("free_mem_mib"),
            shared_count=column("shared_count"),
            containers=column("containers"),
            mem_ratio=column("mem_ratio_reported"),
            state=column("state"),
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
