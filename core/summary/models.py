"""Capacity by GPU model (``device_type``): allocation, free whole GPUs and job shapes per model.

Every capacity question is asked per model: a job names the model it wants (HAMi's
``nvidia.com/use-gputype``), and a free T4 does not hold an H100 job. The figures are the same
as the cluster's (states, free whole GPUs, the capacity outlook's shapes) restricted to the GPUs
of one model, computed on the columns of the GPU table.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import itemgetter
from typing import Protocol, TypeVar

from core.model import GpuSummary, ModelSummary, NodeSummary, WholeJob
from core.summary.capacity import FractionSlices, build_capacity
from core.summary.columns import GpuColumns
from core.summary.devices import percent

T = TypeVar("T")


def _node_of(cols: GpuColumns) -> list[int]:
    """For every GPU, the position of its node in ``cols.node_names``."""
    node_of = [0] * len(cols)
    for number, (start, end) in enumerate(cols.node_bounds):
        node_of[start:end] = [number] * (end - start)
    return node_of


class _Pick(Protocol):
    """Picks the values of some rows (in order) out of any column of a GPU table."""

    def __call__(self, column: Sequence[T]) -> tuple[T, ...]: ...


def _picker(rows: Sequence[int]) -> _Pick:
    """Picks the values at ``rows`` (in order) out of a column."""
    pick = itemgetter(*rows) if len(rows) > 1 else (lambda column: (column[rows[0]],))

    def take(column: Sequence[T]) -> tuple[T, ...]:
        return tuple(pick(column))

    return take


def _subset(
    cols: GpuColumns,
    rows: Sequence[int],
    take: _Pick,
    node_of: Sequence[int],
) -> GpuColumns:
    """The columns of the GPUs at ``rows`` (``take`` picks them, in order); still sorted by
    node, so runs stay runs."""
    names: list[str] = []
    bounds: list[tuple[int, int]] = []
    previous = None
    for position, row in enumerate(rows):
        if node_of[row] != previous:
            if bounds:
                bounds[-1] = (bounds[-1][0], position)
            names.append(cols.node_names[node_of[row]])
            bounds.append((position, position))
            previous = node_of[row]
    if bounds:
        bounds[-1] = (bounds[-1][0], len(rows))
    return GpuColumns(
        device_type=take(cols.device_type),
        core_limit=take(cols.core_limit),
        cores=take(cols.cores),
        mem_limit_mib=take(cols.mem_limit_mib),
        mem_mib=take(cols.mem_mib),
        free_cores=take(cols.free_cores),
        free_mem_mib=take(cols.free_mem_mib),
        shared_count=take(cols.shared_count),
        containers=take(cols.containers),
        mem_ratio=take(cols.mem_ratio),
        state=take(cols.state),
        overcommitted=take(cols.overcommitted),
        incomplete=take(cols.incomplete),
        node_names=tuple(names),
        node_bounds=tuple(bounds),
    )


def _model(name: str, cols: GpuColumns, slices: FractionSlices) -> ModelSummary:
    free_whole = [
        s == "idle" and not gone for s, gone in zip(cols.state, cols.incomplete, strict=True)
    ]
    per_node = cols.per_node(free_whole)
    largest = int(max(per_node, default=0))
    core_limit = float(sum(cols.core_limit))
    cores = float(sum(cols.cores))
    mem_limit = float(sum(cols.mem_limit_mib))
    mem = float(sum(cols.mem_mib))
    states = list(cols.state)
    return ModelSummary(
        model=name,
        nodes=len(cols.node_names),
        gpus=len(cols),
        idle_gpus=states.count("idle"),
        partial_gpus=states.count("partial"),
        full_gpus=states.count("full"),
        inconsistent_gpus=states.count("inconsistent"),
        incomplete_gpus=sum(cols.incomplete),
        core_limit=core_limit,
        core_allocated=cores,
        core_allocated_percent=percent(cores, core_limit),
        mem_limit_mib=mem_limit,
        mem_allocated_mib=mem,
        mem_allocated_percent=percent(mem, mem_limit),
        mem_per_gpu_mib=float(max(cols.mem_limit_mib, default=0.0)),
        free_whole_gpus=sum(free_whole),
        largest_whole_job=largest,
        largest_whole_job_nodes=sum(1 for n in per_node if n == largest) if largest else 0,
        capacity=tuple(build_capacity(cols, slices)),
    )


def build_models(
    gpus: Sequence[GpuSummary], cols: GpuColumns, slices: FractionSlices
) -> list[ModelSummary]:
    """One row per GPU model, the most GPUs first (then by name); ``slices`` are the
    ``fraction_slices`` of ``cols``."""
    rows_of: dict[str, list[int]] = {}
    for row, device_type in enumerate(cols.device_type):
        rows_of.setdefault(device_type, []).append(row)
    node_of = _node_of(cols)
    models = []
    for name, rows in rows_of.items():
        take = _picker(rows)
        model_slices = tuple(map(take, slices))
        models.append(_model(name, _subset(cols, rows, take, node_of), model_slices))
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
