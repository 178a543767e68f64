"""Capacity by GPU model (``device_type``): allocation, free whole GPUs and job shapes per model.

Every capacity question is asked per model: a job names the model it wants (HAMi's
``nvidia.com/use-gputype``), and a free T4 does not hold an H100 job. The figures are the same
as the cluster's (states, free whole GPUs, the capacity outlook's shapes) restricted to the GPUs
of one model, computed on the columns of the GPU table.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from operator import itemgetter

from core.model import GpuSummary, ModelSummary, NodeSummary, WholeJob
from core.summary.capacity import FractionSlices, NodeGroups, shapes_on
from core.summary.columns import GpuColumns
from core.summary.devices import percent

# Per node number, the (first, past the last) rows of each run of one model's GPUs there.
_ModelNodes = dict[int, list[tuple[int, int]]]


def _runs_by_model(cols: GpuColumns) -> dict[str, _ModelNodes]:
    """Per model, in the order of the table: the nodes with GPUs of that model, and the runs
    of consecutive rows they take there. A node usually has one model: one run, found without
    looking at its GPUs one by one."""
    device_type = cols.device_type
    by_model: dict[str, _ModelNodes] = {}
    for node, (start, end) in enumerate(cols.node_bounds):
        model = device_type[start]
        if device_type[start:end].count(model) == end - start:
            by_model.setdefault(model, {})[node] = [(start, end)]
            continue
        run_start = start
        for row in range(start + 1, end + 1):
            if row == end or device_type[row] != device_type[run_start]:
                runs = by_model.setdefault(device_type[run_start], {}).setdefault(node, [])
                runs.append((run_start, row))
                run_start = row
    return by_model


def _model(
    name: str,
    nodes: _ModelNodes,
    cols: GpuColumns,
    fits: FractionSlices,
    free_whole: Sequence[bool] | None,
) -> ModelSummary:
    """One model's row; ``free_whole`` marks the GPUs a whole-GPU job can be given (None: the
    idle ones, when no GPU is incomplete)."""
    runs = list(nodes.values())
    single = all(len(node_runs) == 1 for node_runs in runs)
    groups = NodeGroups([node_runs[0] for node_runs in runs] if single else None, runs)
    rows = list(
        chain.from_iterable(range(start, end) for node_runs in runs for start, end in node_runs)
    )
    pick = itemgetter(*rows) if len(rows) > 1 else lambda column: (column[rows[0]],)
    per_node = groups.counts(cols.state, "idle") if free_whole is None else groups.trues(free_whole)
    largest = int(max(per_node, default=0))
    # Summed in row order, as the model's own column would be.
    core_limit = float(sum(pick(cols.core_limit)))
    cores = float(sum(pick(cols.cores)))
    mem_limit_per_gpu = pick(cols.mem_limit_mib)
    mem_limit = float(sum(mem_limit_per_gpu))
    mem = float(sum(pick(cols.mem_mib)))
    states = pick(cols.state)
    names = (
        itemgetter(*nodes)(cols.node_names)
        if len(nodes) > 1
        else (cols.node_names[next(iter(nodes))],)
    )
    free_mem = pick(cols.free_mem_mib)
    return ModelSummary(
        model=name,
        nodes=len(nodes),
        gpus=len(rows),
        idle_gpus=states.count("idle"),
        partial_gpus=states.count("partial"),
        full_gpus=states.count("full"),
        inconsistent_gpus=states.count("inconsistent"),
        incomplete_gpus=sum(pick(cols.incomplete)),
        core_limit=core_limit,
        core_allocated=cores,
        core_allocated_percent=percent(cores, core_limit),
        mem_limit_mib=mem_limit,
        mem_allocated_mib=mem,
        mem_allocated_percent=percent(mem, mem_limit),
        mem_per_gpu_mib=float(max(mem_limit_per_gpu)),
        free_whole_gpus=sum(per_node),
        largest_whole_job=largest,
        largest_whole_job_nodes=per_node.count(largest) if largest else 0,
        capacity=tuple(shapes_on(names, groups, fits, cols.free_mem_mib, max(free_mem))),
    )


def build_models(
    gpus: Sequence[GpuSummary], cols: GpuColumns, fits: FractionSlices
) -> list[ModelSummary]:
    """One row per GPU model, the most GPUs first (then by name); ``fits`` are the
    ``fraction_slices`` of ``cols``.

    Each model's figures are taken over its runs of rows in the whole table's columns (and
    what ``fits`` worked out once for the table), not over columns picked for it."""
    free_whole = None
    if any(cols.incomplete):
        free_whole = [
            s == "idle" and not gone for s, gone in zip(cols.state, cols.incomplete, strict=True)
        ]
    models = [
        _model(name, nodes, cols, fits, free_whole) for name, nodes in _runs_by_model(cols).items()
    ]
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
