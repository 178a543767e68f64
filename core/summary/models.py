"""Capacity by GPU model (``device_type``): allocation, free whole GPUs and job shapes per model.

Every capacity question is asked per model: a job names the model it wants (HAMi's
``nvidia.com/use-gputype``), and a free T4 does not hold an H100 job. The figures are the same
as the cluster's (states, free whole GPUs, the capacity outlook's shapes) restricted to the GPUs
of one model, computed on the numpy columns of the GPU table.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.model import GpuSummary, ModelSummary, NodeSummary, WholeJob
from core.summary.capacity import build_capacity
from core.summary.columns import Bools, GpuColumns
from core.summary.devices import percent


def _subset(cols: GpuColumns, mask: Bools) -> GpuColumns:
    """The columns of the GPUs ``mask`` selects; still sorted by node, so runs stay runs."""
    node_of = cols.node_of()[mask]
    starts = np.flatnonzero(np.diff(node_of, prepend=-1)) if len(node_of) else node_of
    return GpuColumns(
        core_limit=cols.core_limit[mask],
        cores=cols.cores[mask],
        mem_limit_mib=cols.mem_limit_mib[mask],
        mem_mib=cols.mem_mib[mask],
        free_cores=cols.free_cores[mask],
        free_mem_mib=cols.free_mem_mib[mask],
        shared_count=cols.shared_count[mask],
        containers=cols.containers[mask],
        mem_ratio=cols.mem_ratio[mask],
        state=cols.state[mask],
        overcommitted=cols.overcommitted[mask],
        incomplete=cols.incomplete[mask],
        node_names=tuple(cols.node_names[i] for i in node_of[starts].tolist()),
        node_starts=starts.astype(np.int64),
    )


def _model(name: str, cols: GpuColumns) -> ModelSummary:
    free_whole = cols.is_state("idle") & ~cols.incomplete
    per_node = cols.per_node(free_whole)
    largest = int(per_node.max()) if len(per_node) else 0
    core_limit = float(cols.core_limit.sum())
    cores = float(cols.cores.sum())
    mem_limit = float(cols.mem_limit_mib.sum())
    mem = float(cols.mem_mib.sum())
    return ModelSummary(
        model=name,
        nodes=len(cols.node_names),
        gpus=len(cols),
        idle_gpus=int(cols.is_state("idle").sum()),
        partial_gpus=int(cols.is_state("partial").sum()),
        full_gpus=int(cols.is_state("full").sum()),
        inconsistent_gpus=int(cols.is_state("inconsistent").sum()),
        incomplete_gpus=int(cols.incomplete.sum()),
        core_limit=core_limit,
        core_allocated=cores,
        core_allocated_percent=percent(cores, core_limit),
        mem_limit_mib=mem_limit,
        mem_allocated_mib=mem,
        mem_allocated_percent=percent(mem, mem_limit),
        mem_per_gpu_mib=float(cols.mem_limit_mib.max()) if len(cols) else 0.0,
        free_whole_gpus=int(free_whole.sum()),
        largest_whole_job=largest,
        largest_whole_job_nodes=int((per_node == largest).sum()) if largest else 0,
        capacity=tuple(build_capacity(cols)),
    )


def build_models(gpus: Sequence[GpuSummary], cols: GpuColumns) -> list[ModelSummary]:
    """One row per GPU model, the most GPUs first (then by name)."""
    if not gpus:
        return []
    names, model_of = np.unique([g.device_type for g in gpus], return_inverse=True)
    models = [_model(str(name), _subset(cols, model_of == i)) for i, name in enumerate(names)]
    return sorted(models, key=lambda m: (-m.gpus, m.model))


def largest_whole_job(nodes: Sequence[NodeSummary]) -> WholeJob:
    """The most whole GPUs free on one node, how many nodes have that many, and their model
    when they all have one and the same."""
    largest = max((n.free_whole_gpus for n in nodes), default=0)
    if largest == 0:
        return WholeJob()
    where = [n for n in nodes if n.free_whole_gpus == largest]
    types = {t for n in where for t in n.device_types}
    return WholeJob(largest, len(where), types.pop() if len(types) == 1 else None)
