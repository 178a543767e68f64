"""Capacity outlook: which job shapes fit now, and where (SPEC.md section 12, item 11).

A shape is (GPUs on one node, cores per GPU, memory per GPU). It fits on a node when that many of
the node's devices each have at least those free cores and free memory. Placements count how many
jobs of that shape could start at once without sharing a device slice.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from core.model import GpuSummary, ShapeFit

_TOP_NODES = 5


def _fits_whole(g: GpuSummary) -> bool:
    # A whole GPU means all of its cores and all of its memory are free.
    return g.core_limit > 0 and g.free_cores >= g.core_limit and g.free_mem_mib >= g.mem_limit_mib


def _slices(g: GpuSummary, fraction: float) -> int:
    """How many slices of ``fraction`` of this device's cores and memory fit in its free space."""
    if g.core_limit <= 0:
        return 0
    cores = g.core_limit * fraction
    mem = g.mem_limit_mib * fraction
    by_cores = int(g.free_cores // cores + 1e-9)
    by_mem = int(g.free_mem_mib // mem + 1e-9) if mem > 0 else by_cores
    return max(min(by_cores, by_mem), 0)


def _ranked(per_node: dict[str, int]) -> tuple[tuple[str, int], ...]:
    ranked = sorted(((n, c) for n, c in per_node.items() if c > 0), key=lambda kv: (-kv[1], kv[0]))
    return tuple(ranked[:_TOP_NODES])


def build_capacity(gpus: Sequence[GpuSummary]) -> list[ShapeFit]:
    whole_per_node: dict[str, int] = defaultdict(int)
    half_per_node: dict[str, int] = defaultdict(int)
    quarter_per_node: dict[str, int] = defaultdict(int)
    largest_mem = 0.0
    # One pass over the GPUs for every shape (a large cluster has thousands of them).
    for g in gpus:
        if g.free_cores <= 0:
            largest_mem = max(largest_mem, g.free_mem_mib)
            continue
        if _fits_whole(g):
            whole_per_node[g.node] += 1
        half = _slices(g, 0.5)
        if half:
            half_per_node[g.node] += half
        quarter = _slices(g, 0.25)
        if quarter:
            quarter_per_node[g.node] += quarter
        largest_mem = max(largest_mem, g.free_mem_mib)
    shapes: list[ShapeFit] = []
    for count in (1, 2, 4, 8):
        per_node = {node: free // count for node, free in whole_per_node.items()}
        shapes.append(
            ShapeFit(
                name=f"{count} whole GPU" + ("s" if count > 1 else ""),
                gpus=count,
                cores_per_gpu=100.0,
                mem_per_gpu_mib=None,
                placements=sum(per_node.values()),
                nodes=_ranked(per_node),
            )
        )
    for name, fraction, per_node_slices in (
        ("half GPU", 0.5, half_per_node),
        ("quarter GPU", 0.25, quarter_per_node),
    ):
        shapes.append(
            ShapeFit(
                name=name,
                gpus=1,
                cores_per_gpu=100.0 * fraction,
                mem_per_gpu_mib=None,
                placements=sum(per_node_slices.values()),
                nodes=_ranked(per_node_slices),
            )
        )
    per_node_mem: dict[str, int] = defaultdict(int)
    if largest_mem > 0:
        for g in gpus:
            if g.free_mem_mib >= largest_mem:
                per_node_mem[g.node] += 1
    shapes.append(
        ShapeFit(
            name=f"memory-only {largest_mem:.0f} MiB",
            gpus=1,
            cores_per_gpu=0.0,
            mem_per_gpu_mib=largest_mem,
            placements=sum(per_node_mem.values()),
            nodes=_ranked(per_node_mem),
        )
    )
    return shapes


def capacity_answer(shapes: Sequence[ShapeFit], free_cores: float, free_mem_mib: float) -> str:
    """One line answering "is there free capacity, and for what size of job"."""
    whole = [s for s in shapes if s.mem_per_gpu_mib is None and s.cores_per_gpu == 100.0]
    fitting = [s for s in whole if s.placements > 0]
    half = next((s for s in shapes if s.name == "half GPU"), None)
    quarter = next((s for s in shapes if s.name == "quarter GPU"), None)
    if free_cores <= 0 and free_mem_mib <= 0:
        return "No: every GPU is fully allocated; no new GPU job can start until something ends."
    if fitting:
        biggest = max(fitting, key=lambda s: s.gpus)
        where = ", ".join(f"{n} ({c})" for n, c in biggest.nodes[:3])
        return (
            f"Yes: {whole[0].placements} whole GPU(s) free; the largest job that fits on one "
            f"node is {biggest.name} (on {where}); {free_cores:.0f} cores and "
            f"{free_mem_mib:.0f} MiB free in all."
        )
    if half is not None and half.placements > 0:
        return (
            f"Only fractional jobs: no whole GPU is free, but {half.placements} half-GPU slice(s) "
            f"fit ({free_cores:.0f} cores, {free_mem_mib:.0f} MiB free in all)."
        )
    if quarter is not None and quarter.placements > 0:
        return (
            f"Only small jobs: no whole or half GPU is free, but {quarter.placements} quarter-GPU "
            f"slice(s) fit ({free_cores:.0f} cores, {free_mem_mib:.0f} MiB free in all)."
        )
    mem_only = shapes[-1]
    return (
        f"Barely: only slivers are free ({free_cores:.0f} cores, {free_mem_mib:.0f} MiB in all); "
        f"the largest memory-only request that fits is {mem_only.mem_per_gpu_mib or 0:.0f} MiB."
    )
