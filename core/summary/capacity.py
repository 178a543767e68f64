"""Capacity outlook: which job shapes fit now, and where (SPEC.md section 12, item 11).

A shape is (GPUs on one node, cores per GPU, memory per GPU). It fits on a node when that many of
the node's devices each have at least those free cores and free memory. Placements count how many
jobs of that shape could start at once without sharing a device slice.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.model import ShapeFit
from core.summary.columns import Floats, GpuColumns
from core.views import numbers

_TOP_NODES = 5


def _ranked(names: Sequence[str], counts: Floats) -> tuple[tuple[str, int], ...]:
    """The top nodes by placements (most first, then by name); nodes with none are left out."""
    ranked = sorted(
        ((name, int(count)) for name, count in zip(names, counts.tolist(), strict=True) if count),
        key=lambda kv: (-kv[1], kv[0]),
    )
    return tuple(ranked[:_TOP_NODES])


def _slices(cols: GpuColumns, fraction: float) -> Floats:
    """Per GPU, how many slices of ``fraction`` of its cores and memory fit in its free space."""
    usable = cols.core_limit > 0
    slice_cores = np.where(usable, cols.core_limit * fraction, 1.0)
    slice_mem = cols.mem_limit_mib * fraction
    # The 1e-9 absorbs float noise: 25 free cores hold exactly one quarter of 100.
    by_cores = np.floor(cols.free_cores / slice_cores + 1e-9)
    with np.errstate(divide="ignore", invalid="ignore"):
        by_mem = np.where(slice_mem > 0, np.floor(cols.free_mem_mib / slice_mem + 1e-9), by_cores)
    slices: Floats = np.where(usable, np.maximum(np.minimum(by_cores, by_mem), 0.0), 0.0)
    return slices


def build_capacity(cols: GpuColumns) -> list[ShapeFit]:
    names = cols.node_names
    # A whole GPU means all of its cores and all of its memory are free.
    whole = (
        (cols.core_limit > 0)
        & (cols.free_cores >= cols.core_limit)
        & (cols.free_mem_mib >= cols.mem_limit_mib)
    )
    whole_per_node = cols.per_node(whole)
    shapes: list[ShapeFit] = []
    for count in (1, 2, 4, 8):
        per_node = np.floor(whole_per_node / count)
        shapes.append(
            ShapeFit(
                name=f"{count} whole GPU" + ("s" if count > 1 else ""),
                gpus=count,
                cores_per_gpu=100.0,
                mem_per_gpu_mib=None,
                placements=int(per_node.sum()),
                nodes=_ranked(names, per_node),
                node_count=int(np.count_nonzero(per_node)),
            )
        )
    for name, fraction in (("half GPU", 0.5), ("quarter GPU", 0.25)):
        per_node = cols.per_node(_slices(cols, fraction))
        shapes.append(
            ShapeFit(
                name=name,
                gpus=1,
                cores_per_gpu=100.0 * fraction,
                mem_per_gpu_mib=None,
                placements=int(per_node.sum()),
                nodes=_ranked(names, per_node),
                node_count=int(np.count_nonzero(per_node)),
            )
        )
    largest_mem = float(cols.free_mem_mib.max()) if len(cols) else 0.0
    holding = cols.free_mem_mib >= largest_mem if largest_mem > 0 else np.zeros(len(cols), bool)
    per_node = cols.per_node(holding)
    shapes.append(
        ShapeFit(
            name=f"memory-only {numbers.mem_each(largest_mem)}",
            gpus=1,
            cores_per_gpu=0.0,
            mem_per_gpu_mib=largest_mem,
            placements=int(per_node.sum()),
            nodes=_ranked(names, per_node),
            node_count=int(np.count_nonzero(per_node)),
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
