"""Capacity outlook: which job shapes fit now, and where.

A shape is (GPUs on one node, cores per GPU, memory per GPU). It fits on a node when that many of
the node's devices each have at least those free cores and free memory. Placements count how many
jobs of that shape could start at once without sharing a device slice.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from operator import itemgetter

from core.model import ShapeFit
from core.summary.columns import GpuColumns
from core.views import numbers

_TOP_NODES = 5


def _ranked(names: Sequence[str], counts: Sequence[float]) -> tuple[tuple[str, int], ...]:
    """The top nodes by placements (most first, then by name); nodes with none are left out."""
    ranked = [(name, int(count)) for name, count in zip(names, counts, strict=True) if count]
    # By name, then (stably) by placements: two sorts on C-compared keys, no key function per
    # node. The names come sorted, so the first sort only checks that.
    ranked.sort()
    ranked.sort(key=itemgetter(1), reverse=True)
    return tuple(ranked[:_TOP_NODES])


def _whole_slices(free: float, size: float) -> float:
    """How many slices of ``size`` fit in ``free``; the 1e-9 absorbs float noise (25 free cores
    hold exactly one quarter of 100)."""
    if size <= 0:  # a slice too small for a float: as many as there are
        return math.inf if free > 0 else 0.0
    fitting = free / size + 1e-9
    return float(math.floor(fitting)) if fitting < math.inf else fitting


# (core limit, memory limit, free cores, free memory) of one GPU.
_Figures = tuple[float, float, float, float]


def _gpu_slices(figures: _Figures, fractions: Sequence[float]) -> tuple[float, ...]:
    """How many slices of each of ``fractions`` of its cores and memory fit in one GPU's free
    space."""
    core_limit, mem_limit, free_cores, free_mem = figures
    if core_limit <= 0 or free_cores <= 0:
        return (0.0,) * len(fractions)
    counts = []
    for fraction in fractions:
        by_cores = _whole_slices(free_cores, core_limit * fraction)
        slice_mem = mem_limit * fraction
        by_mem = _whole_slices(free_mem, slice_mem) if slice_mem > 0 else by_cores
        counts.append(max(min(by_cores, by_mem), 0.0))
    return tuple(counts)


# The fractions of a GPU the outlook offers as slices, by shape name.
FRACTIONS = {"half GPU": 0.5, "quarter GPU": 0.25}
# Per fraction of ``FRACTIONS``, how many slices fit on each GPU of a GPU table.
FractionSlices = tuple[Sequence[float], ...]


def fraction_slices(cols: GpuColumns) -> FractionSlices:
    """Per fraction of ``FRACTIONS``, how many slices fit on each GPU of ``cols``; worked out
    once per distinct set of figures (a cluster has a few models, and many GPUs idle or full).

    Computed once for the whole table: a subset of its GPUs (one model's) picks its rows.
    """
    figures = list(
        zip(cols.core_limit, cols.mem_limit_mib, cols.free_cores, cols.free_mem_mib, strict=True)
    )
    if not figures:
        return tuple(() for _ in FRACTIONS)
    fractions = list(FRACTIONS.values())
    counts = {one: _gpu_slices(one, fractions) for one in set(figures)}
    return tuple(zip(*map(counts.__getitem__, figures), strict=True))


def _shape(
    name: str,
    gpus: int,
    cores_per_gpu: float,
    mem_per_gpu_mib: float | None,
    names: Sequence[str],
    per_node: Sequence[float],
) -> ShapeFit:
    return ShapeFit(
        name=name,
        gpus=gpus,
        cores_per_gpu=cores_per_gpu,
        mem_per_gpu_mib=mem_per_gpu_mib,
        placements=int(sum(per_node)),
        nodes=_ranked(names, per_node),
        node_count=len(per_node) - per_node.count(0),
    )


def build_capacity(cols: GpuColumns, slices: FractionSlices) -> list[ShapeFit]:
    """The outlook's shapes on the GPUs of ``cols``; ``slices`` are their
    ``fraction_slices``."""
    names = cols.node_names
    figures = zip(
        cols.core_limit, cols.mem_limit_mib, cols.free_cores, cols.free_mem_mib, strict=True
    )
    # A whole GPU means all of its cores and all of its memory are free.
    whole = [
        core_limit > 0 and free_cores >= core_limit and free_mem >= mem_limit
        for core_limit, mem_limit, free_cores, free_mem in figures
    ]
    whole_per_node = cols.per_node(whole)
    shapes: list[ShapeFit] = []
    for count in (1, 2, 4, 8):
        shapes.append(
            _shape(
                f"{count} whole GPU" + ("s" if count > 1 else ""),
                count,
                100.0,
                None,
                names,
                [whole // count for whole in whole_per_node],
            )
        )
    for (name, fraction), fitting in zip(FRACTIONS.items(), slices, strict=True):
        shapes.append(_shape(name, 1, 100.0 * fraction, None, names, cols.per_node(fitting)))
    largest_mem = max(cols.free_mem_mib) if len(cols) else 0.0
    holding = [free >= largest_mem if largest_mem > 0 else False for free in cols.free_mem_mib]
    shapes.append(
        _shape(
            f"memory-only {numbers.mem_each(largest_mem)}",
            1,
            0.0,
            largest_mem,
            names,
            cols.per_node(holding),
        )
    )
    return shapes


def capacity_answer(
    shapes: Sequence[ShapeFit],
    free_cores: float,
    free_mem_mib: float,
    *,
    gpus: int = 0,
    incomplete_gpus: int = 0,
) -> str:
    """One line answering "is there free capacity, and for what size of job".

    GPUs with a missing series offer no free capacity, so when nothing is free among the others
    the answer is "not known" for them rather than "every GPU is fully allocated".
    """
    whole = [s for s in shapes if s.mem_per_gpu_mib is None and s.cores_per_gpu == 100.0]
    fitting = [s for s in whole if s.placements > 0]
    half = next((s for s in shapes if s.name == "half GPU"), None)
    quarter = next((s for s in shapes if s.name == "quarter GPU"), None)
    if free_cores <= 0 and free_mem_mib <= 0:
        if incomplete_gpus and incomplete_gpus >= gpus:
            return (
                "Not known: every GPU lacks a limit or allocation series, so no free capacity "
                "can be judged."
            )
        if incomplete_gpus:
            return (
                f"Not known for {incomplete_gpus} GPU(s) that lack a limit or allocation series; "
                f"the other {gpus - incomplete_gpus} are fully allocated."
            )
        return "No: every GPU is fully allocated; no new GPU job can start until something ends."
    free = f"{numbers.cores(free_cores)} and {numbers.mem_total(free_mem_mib)} free in all"
    if fitting:
        biggest = max(fitting, key=lambda s: s.gpus)
        where = ", ".join(f"{n} ({c:,})" for n, c in biggest.nodes[:3])
        return (
            f"Yes: {numbers.counted(whole[0].placements, 'whole GPU')} free; the largest job "
            f"that fits on one node is {biggest.name} (on {where}); {free}."
        )
    if half is not None and half.placements > 0:
        return (
            f"Only fractional jobs: no whole GPU is free, but "
            f"{numbers.counted(half.placements, 'half-GPU slice')} fit ({free})."
        )
    if quarter is not None and quarter.placements > 0:
        return (
            f"Only small jobs: no whole or half GPU is free, but "
            f"{numbers.counted(quarter.placements, 'quarter-GPU slice')} fit ({free})."
        )
    mem_only = shapes[-1]
    return (
        f"Barely: only slivers are free ({free}); the largest memory-only request that fits is "
        f"{numbers.mem_each(mem_only.mem_per_gpu_mib or 0)}."
    )
