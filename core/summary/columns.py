"""The GPU table as numpy columns, for the figures that aggregate over every GPU.

Nodes, capacity shapes, findings, checks and the distribution verdict each look at every GPU; a
1,000-node cluster has 8,000 of them. Reading the numbers once into arrays and aggregating with
numpy keeps each of those passes in C. GPUs are sorted by node, so a node's GPUs form one run
and per-node sums are ``np.add.reduceat`` over the run starts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from core.model import GpuSummary

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]

STATE_CODES = {"idle": 0, "partial": 1, "full": 2, "inconsistent": 3}


@dataclass(frozen=True, slots=True)
class GpuColumns:
    core_limit: Floats
    cores: Floats
    mem_limit_mib: Floats
    mem_mib: Floats
    free_cores: Floats
    free_mem_mib: Floats
    shared_count: Ints
    containers: Ints
    mem_ratio: Floats  # NaN where the ratio series is absent
    state: Ints  # STATE_CODES
    overcommitted: Bools
    incomplete: Bools  # a limit or allocation series is missing for the GPU
    node_names: tuple[str, ...]  # one per run, in order
    node_starts: Ints  # index of each node's first GPU

    @classmethod
    def of(cls, gpus: Sequence[GpuSummary]) -> GpuColumns:
        """Columns of ``gpus``, which must be sorted by node (``build_gpus`` sorts them)."""
        numbers = np.array(
            [
                (
                    g.core_limit,
                    g.core_allocated,
                    g.mem_limit_mib,
                    g.mem_allocated_mib,
                    g.free_cores,
                    g.free_mem_mib,
                    g.shared_count,
                    g.containers,
                    np.nan if g.mem_ratio_reported is None else g.mem_ratio_reported,
                    STATE_CODES[g.state],
                )
                for g in gpus
            ],
            dtype=np.float64,
        ).reshape(len(gpus), 10)
        names: list[str] = []
        starts: list[int] = []
        previous = None
        for position, g in enumerate(gpus):
            if g.node != previous:
                names.append(g.node)
                starts.append(position)
                previous = g.node
        core_limit, cores, mem_limit, mem = (numbers[:, i] for i in range(4))
        return cls(
            core_limit=core_limit,
            cores=cores,
            mem_limit_mib=mem_limit,
            mem_mib=mem,
            free_cores=numbers[:, 4],
            free_mem_mib=numbers[:, 5],
            shared_count=numbers[:, 6].astype(np.int64),
            containers=numbers[:, 7].astype(np.int64),
            mem_ratio=numbers[:, 8],
            state=numbers[:, 9].astype(np.int64),
            overcommitted=((core_limit > 0) & (cores > core_limit))
            | ((mem_limit > 0) & (mem > mem_limit)),
            incomplete=np.array(["incomplete" in g.flags for g in gpus], dtype=np.bool_),
            node_names=tuple(names),
            node_starts=np.array(starts, dtype=np.int64),
        )

    def __len__(self) -> int:
        return len(self.cores)

    def per_node(self, values: npt.NDArray[np.generic]) -> Floats:
        """Sum of ``values`` over each node's GPUs, in node order."""
        if not len(self.node_starts):
            return np.zeros(0)
        return np.add.reduceat(values.astype(np.float64), self.node_starts)

    def node_of(self) -> Ints:
        """For every GPU, the position of its node in ``node_names``."""
        run_lengths = np.diff(np.append(self.node_starts, len(self)))
        return np.repeat(np.arange(len(self.node_starts)), run_lengths)

    def is_state(self, state: str) -> Bools:
        result: Bools = self.state == STATE_CODES[state]
        return result
