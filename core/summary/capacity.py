"""Capacity outlook: which job shapes fit now, and where.

A shape is (GPUs on one node, cores per GPU, memory per GPU). It fits on a node when that many of
the node's devices each have at least those free cores and free memory. Placements count how many
jobs of that shape could start at once without sharing a device slice.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain, compress, islice, repeat
from operator import eq, lt, truediv

from core import number_style
from core.model import ShapeFit
from core.summary.columns import GpuColumns

_TOP_NODES = 5


def _ranked(names: Sequence[str], counts: Sequence[float]) -> tuple[tuple[str, int], ...]:
    """The top nodes by placements (most first, then by name); nodes with none are left out.

    ``names`` come sorted, so "then by name" is "then by position". Only nodes with at least
    the placements of the fifth best can be among them: found in C, so the Python sort is left
    to those few out of a thousand nodes.
    """
    placed = list(compress(range(len(counts)), counts))
    if len(placed) > _TOP_NODES:
        cut = sorted(map(counts.__getitem__, placed), reverse=True)[_TOP_NODES - 1]
        above = list(compress(placed, map(lt, repeat(cut), map(counts.__getitem__, placed))))
        at_cut = compress(placed, map(eq, repeat(cut), map(counts.__getitem__, placed)))
        placed = [*above, *islice(at_cut, _TOP_NODES - len(above))]
    # A stable sort, most first: equal placements keep the order of the names.
    placed.sort(key=counts.__getitem__, reverse=True)
    return tuple((names[i], int(counts[i])) for i in placed)


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


@dataclass(frozen=True, slots=True)
class FractionSlices:
    """What the capacity outlook counts on each GPU of a table, worked out once for the whole
    table (a model's shapes pick its rows): per fraction of ``FRACTIONS``, how many slices
    fit (``slices``), and whether all of its cores and memory are free (``whole``)."""

    slices: tuple[Sequence[float], ...]
    whole: Sequence[bool]


def fraction_slices(cols: GpuColumns) -> FractionSlices:
    """What the capacity outlook counts on each GPU of ``cols`` (see ``FractionSlices``);
    worked out once per distinct set of figures (a cluster has a few models, and many GPUs
    idle or full)."""
    if not len(cols):
        return FractionSlices(tuple(() for _ in FRACTIONS), ())
    fast = _fraction_slices_by_ratio(cols)
    if fast is not None:
        return fast
    figures = list(
        zip(cols.core_limit, cols.mem_limit_mib, cols.free_cores, cols.free_mem_mib, strict=True)
    )
    fractions = list(FRACTIONS.values())
    counts = {one: _gpu_slices(one, fractions) for one in set(figures)}
    # A whole GPU means all of its cores and all of its memory are free.
    whole = [
        core_limit > 0 and free_cores >= core_limit and free_mem >= mem_limit
        for core_limit, mem_limit, free_cores, free_mem in figures
    ]
    return FractionSlices(tuple(zip(*map(counts.__getitem__, figures), strict=True)), whole)


# The figures within which ``_fraction_slices_by_ratio`` is exact (see there).
_SMALLEST_LIMIT = 2.0**-500
_LARGEST_RATIO = 2.0**500
# Fractions 2**-k: dividing by one only moves the exponent, so it commutes with rounding.
_FRACTIONS_ARE_POWERS_OF_TWO = all(math.frexp(f)[0] == 0.5 for f in FRACTIONS.values())


def _fraction_slices_by_ratio(cols: GpuColumns) -> FractionSlices | None:
    """``fraction_slices`` from one ratio per GPU, or None where that would not be exact.

    A slice of fraction ``f`` takes ``f`` of the cores and of the memory, so the slices that
    fit are ``floor(min(free cores / core limit, free memory / memory limit) / f + 1e-9)``
    (none below 0): ``_gpu_slices`` takes the smaller of the two floors, and dividing,
    adding, rounding and flooring all keep order. With ``f`` a power of two and limits far
    from a float's smallest, ``free / (limit * f)`` is ``(free / limit) / f`` to the last
    bit, so the counts are ``_gpu_slices``'s. A cluster's GPUs have a few hundred distinct
    ratios against thousands of distinct figure sets (tuples of floats, slow to hash), and
    the ratios are taken in C.

    Every limit must be positive: a GPU with a 0 limit (one missing a series) goes by
    ``_gpu_slices``'s rules. ``min()`` of a column is at least ``_SMALLEST_LIMIT`` only when
    every value is, or is NaN: a NaN memory limit makes ``m < c`` false and the memory count
    that of the cores, as in ``_gpu_slices``; any other NaN or infinity leaves a ratio that
    is not finite, and the general rules apply.
    """
    if not _FRACTIONS_ARE_POWERS_OF_TWO:
        return None
    core_limit, mem_limit = cols.core_limit, cols.mem_limit_mib
    free_cores, free_mem = cols.free_cores, cols.free_mem_mib
    # Finite sums rule out NaN and infinities (sum() is fast, min() is not), and then min()
    # is exact.
    if not all(
        math.isfinite(sum(column)) for column in (core_limit, mem_limit, free_cores, free_mem)
    ):
        return None
    if min(core_limit) < _SMALLEST_LIMIT or min(mem_limit) < _SMALLEST_LIMIT:
        return None
    by_cores = map(truediv, free_cores, core_limit)
    by_mem = map(truediv, free_mem, mem_limit)
    # min(c, m) as _gpu_slices takes it (c unless m is smaller), without a call per GPU.
    ratios = [c if not m < c else m for c, m in zip(by_cores, by_mem, strict=True)]
    distinct = set(ratios)
    if max(distinct) > _LARGEST_RATIO:  # a free figure so large that a ratio could overflow
        return None
    fractions = FRACTIONS.values()
    # Per ratio: the slices of each fraction, and whether the GPU is wholly free (a ratio of
    # free to limit rounds to 1 or more exactly when free >= limit).
    counts = {
        r: (*(max(float(math.floor(r / f + 1e-9)), 0.0) for f in fractions), r >= 1.0)
        for r in distinct
    }
    *slices, whole = zip(*map(counts.__getitem__, ratios), strict=True)
    return FractionSlices(tuple(slices), whole)


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


@dataclass(frozen=True, slots=True)
class NodeGroups:
    """GPUs of a table grouped by node, each group given by its runs of consecutive rows.

    The table's own nodes are one run each; the GPUs of one model on a node are one run too,
    unless models alternate on the node. Sums over a group add its values in row order, as a
    sum over the group's own column would.
    """

    # (first, past the last) row of each group, when each is one run; otherwise None and the
    # runs of each group in ``runs``.
    bounds: Sequence[tuple[int, int]] | None
    runs: Sequence[Sequence[tuple[int, int]]] = ()

    def sums(self, column: Sequence[float]) -> list[float]:
        if self.bounds is not None:
            return [sum(column[start:end]) for start, end in self.bounds]
        return [
            sum(chain.from_iterable(column[start:end] for start, end in runs)) for runs in self.runs
        ]

    def trues(self, column: Sequence[bool]) -> list[int]:
        """How many values of each group are true."""
        return self.sums(column)  # type: ignore[return-value]  # bools sum to ints

    def counts(self, column: Sequence[object], value: object) -> list[int]:
        """How many values of each group are ``value`` (compared as ``list.count`` does)."""
        if self.bounds is not None:
            return [column[start:end].count(value) for start, end in self.bounds]
        return [sum(column[start:end].count(value) for start, end in runs) for runs in self.runs]


def build_capacity(cols: GpuColumns, fits: FractionSlices) -> list[ShapeFit]:
    """The outlook's shapes on the GPUs of ``cols``; ``fits`` are their ``fraction_slices``."""
    largest_mem = max(cols.free_mem_mib) if len(cols) else 0.0
    return shapes_on(
        cols.node_names, NodeGroups(cols.node_bounds), fits, cols.free_mem_mib, largest_mem
    )


def shapes_on(
    names: Sequence[str],
    groups: NodeGroups,
    fits: FractionSlices,
    free_mem: Sequence[float],
    largest_mem: float,
) -> list[ShapeFit]:
    """The outlook's shapes on the GPUs of ``groups`` (one per node, ``names`` in order): a
    table's, or one model's; ``largest_mem`` is the most free memory on one of them."""
    whole_per_node = groups.trues(fits.whole)
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
    for (name, fraction), fitting in zip(FRACTIONS.items(), fits.slices, strict=True):
        shapes.append(_shape(name, 1, 100.0 * fraction, None, names, groups.sums(fitting)))
    # The GPUs holding the most free memory of all: those whose free memory is that most (a
    # count in C; no other value is larger, and a NaN equals nothing).
    holding = groups.counts(free_mem, largest_mem) if largest_mem > 0 else [0] * len(names)
    shapes.append(
        _shape(
            f"memory-only {number_style.mem_each(largest_mem)}", 1, 0.0, largest_mem, names, holding
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
    free = (
        f"{number_style.cores(free_cores)} and {number_style.mem_total(free_mem_mib)} free in all"
    )
    if fitting:
        biggest = max(fitting, key=lambda s: s.gpus)
        where = ", ".join(f"{n} ({c:,})" for n, c in biggest.nodes[:3])
        return (
            f"Yes: {number_style.counted(whole[0].placements, 'whole GPU')} free; the largest job "
            f"that fits on one node is {biggest.name} (on {where}); {free}."
        )
    if half is not None and half.placements > 0:
        return (
            f"Only fractional jobs: no whole GPU is free, but "
            f"{number_style.counted(half.placements, 'half-GPU slice')} fit ({free})."
        )
    if quarter is not None and quarter.placements > 0:
        return (
            f"Only small jobs: no whole or half GPU is free, but "
            f"{number_style.counted(quarter.placements, 'quarter-GPU slice')} fit ({free})."
        )
    mem_only = shapes[-1]
    return (
        f"Barely: only slivers are free ({free}); the largest memory-only request that fits is "
        f"{number_style.mem_each(mem_only.mem_per_gpu_mib or 0)}."
    )
