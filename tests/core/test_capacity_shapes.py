"""The capacity outlook's shortcuts give what its per-GPU rules give, on any GPU table.

``fraction_slices`` counts slices from one ratio per GPU where that is exact and falls back to
the per-GPU rules elsewhere; ``_ranked`` sorts only the nodes that can be among the top few;
``build_models`` works on each model's runs of rows in the whole table. Each is checked here
against the plain form of its rule, on tables with the values that make the shortcuts unsafe
(0, tiny and huge limits, NaN, infinities, negative free figures) and with models alternating
on a node.
"""

from __future__ import annotations

import math
import random
from dataclasses import replace
from operator import itemgetter

import pytest

from core.model import GpuState, GpuSummary
from core.summary import capacity
from core.summary.capacity import FRACTIONS, build_capacity, fraction_slices
from core.summary.columns import GpuColumns
from core.summary.models import build_models

ORDINARY = (0.0, 1.0, 5.0, 25.0, 50.0, 75.0, 100.0, 12.5, 15360.0, 40960.0, 81559.0, 7680.5)
# (-inf is left out: the per-GPU rules themselves cannot floor it.)
UNSAFE = (-1.0, 1e-300, 5e-324, 1e300, 1.7e308, math.inf, math.nan)
POSITIVE = tuple(v for v in ORDINARY if v > 0)  # every limit positive: the ratio shortcut
STATES: tuple[GpuState, ...] = ("idle", "partial", "full", "inconsistent")


def _gpu(
    rng: random.Random, node: str, index: int, model: str, pool: tuple[float, ...]
) -> GpuSummary:
    core_limit, mem_limit = rng.choice((100.0, 200.0, *pool)), rng.choice((40960.0, *pool))
    free_cores = rng.choice((core_limit, 0.0, *pool))
    free_mem = rng.choice((mem_limit, 0.0, *pool))
    flags = ("incomplete",) if rng.random() < 0.1 else ()
    return GpuSummary(
        node, index, f"GPU-{node}-{index}", model, core_limit, 0.0, 0.0, mem_limit, 0.0, 0.0,
        0, 0, rng.choice(STATES), flags, free_cores, free_mem, (),
    )  # fmt: skip


def _table(seed: int, pool: tuple[float, ...], mixed: bool) -> list[GpuSummary]:
    rng = random.Random(seed)
    gpus = []
    for n in range(rng.randint(1, 12)):
        node_model = rng.choice("ABC")
        for index in range(rng.randint(1, 8)):
            model = rng.choice("ABC") if mixed else node_model
            gpus.append(_gpu(rng, f"node-{n:02d}", index, model, pool))
    return gpus


def _per_gpu_rules(cols: GpuColumns) -> tuple[list[tuple[float, ...]], list[bool]]:
    """Slices of each fraction per GPU, and whether each GPU is wholly free, GPU by GPU."""
    figures = zip(
        cols.core_limit, cols.mem_limit_mib, cols.free_cores, cols.free_mem_mib, strict=True
    )
    slices, whole = [], []
    for core_limit, mem_limit, free_cores, free_mem in figures:
        one = (core_limit, mem_limit, free_cores, free_mem)
        slices.append(capacity._gpu_slices(one, list(FRACTIONS.values())))
        whole.append(core_limit > 0 and free_cores >= core_limit and free_mem >= mem_limit)
    return slices, whole


@pytest.mark.parametrize(
    "pool", [POSITIVE, ORDINARY, ORDINARY + UNSAFE], ids=["positive", "ordinary", "unsafe"]
)
@pytest.mark.parametrize("seed", range(60))
def test_fraction_slices_are_those_of_the_per_gpu_rules(seed: int, pool: tuple[float, ...]) -> None:
    cols = GpuColumns.of(_table(seed, pool, mixed=False))
    fits = fraction_slices(cols)
    slices, whole = _per_gpu_rules(cols)
    # repr: NaN counts (from NaN figures) compare equal too.
    assert repr(list(zip(*fits.slices, strict=True))) == repr(slices)
    assert list(fits.whole) == whole


def test_the_ratio_shortcut_is_taken_only_where_it_is_exact() -> None:
    taken = [
        capacity._fraction_slices_by_ratio(GpuColumns.of(_table(seed, POSITIVE, mixed=False)))
        for seed in range(60)
    ]
    assert None not in taken
    for unsafe in (0.0, 1e-300, math.inf, math.nan):
        gpus = _table(1, POSITIVE, mixed=False)
        gpus[0] = replace(gpus[0], core_limit=unsafe)
        assert capacity._fraction_slices_by_ratio(GpuColumns.of(gpus)) is None
    gpus = _table(1, POSITIVE, mixed=False)
    gpus[-1] = replace(gpus[-1], free_mem_mib=1e300, mem_limit_mib=1.0, free_cores=1e300)
    assert capacity._fraction_slices_by_ratio(GpuColumns.of(gpus)) is None


def _ranked_by_full_sort(names: list[str], counts: list[float]) -> tuple[tuple[str, int], ...]:
    ranked = [(name, int(count)) for name, count in zip(names, counts, strict=True) if count]
    ranked.sort()
    ranked.sort(key=itemgetter(1), reverse=True)
    return tuple(ranked[:5])


@pytest.mark.parametrize("seed", range(200))
def test_top_nodes_are_those_of_a_full_sort(seed: int) -> None:
    rng = random.Random(seed)
    size = rng.randint(0, 40)
    names = [f"node-{i:03d}" for i in range(size)]
    counts = [float(rng.choice((0, 0, 1, 2, 2, 3, 8, rng.randint(0, 50)))) for _ in names]
    assert capacity._ranked(names, counts) == _ranked_by_full_sort(names, counts)


@pytest.mark.parametrize("mixed", [False, True], ids=["one model a node", "models alternate"])
@pytest.mark.parametrize("seed", range(40))
def test_a_model_row_is_the_figures_of_its_own_gpus(seed: int, mixed: bool) -> None:
    gpus = _table(seed, ORDINARY, mixed)
    cols = GpuColumns.of(gpus)
    for model in build_models(gpus, cols, fraction_slices(cols)):
        own = [g for g in gpus if g.device_type == model.model]
        own_cols = GpuColumns.of(own)
        assert (model.gpus, model.nodes) == (len(own), len({g.node for g in own}))
        assert model.capacity == tuple(build_capacity(own_cols, fraction_slices(own_cols)))
        free = [g.state == "idle" and "incomplete" not in g.flags for g in own]
        assert model.free_whole_gpus == sum(free)
        assert model.mem_per_gpu_mib == max(g.mem_limit_mib for g in own)
