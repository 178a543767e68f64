"""Why a shape does not fit now, and what comes closest: the words of a ``fit`` refusal."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby
from operator import attrgetter

from core.fit_shape import Shape
from core.fit_slices import EPS, slices_on, usable
from core.model import GpuSummary


def memory_text(mib: float) -> str:
    """GiB with one decimal; MiB below 1 GiB."""
    return f"{mib / 1024:,.1f} GiB" if mib >= 1024 else f"{mib:,.0f} MiB"


def _model_list(models: Sequence[tuple[str, int]]) -> str:
    return ", ".join(f"{name} ({count:,} GPU{'s' if count != 1 else ''})" for name, count in models)


def explain(
    gpus: Sequence[GpuSummary],
    candidates: Sequence[GpuSummary],
    models: Sequence[tuple[str, int]],
    shape: Shape,
    split_count: int | None,
) -> tuple[str, str | None]:
    """(reason, closest) for a shape that fits on no node."""
    if not gpus:
        return (
            "the input has no GPUs from HAMi's scheduler (its device series); fit needs "
            "the scheduler's /metrics.",
            None,
        )
    if not candidates:
        return (f"no GPU model matches '{shape.model}'. Models here: {_model_list(models)}.", None)
    known = [g for g in candidates if usable(g)]
    kind = f"{shape.model} GPU" if shape.model else "GPU"
    if not known:
        return (
            f"no {kind} has known limits and allocations (their series are missing), so "
            "no free capacity can be judged.",
            None,
        )
    per_node = _fitting_per_node(known, shape, split_count)
    best_node, best_count = min(per_node, key=lambda nc: (-nc[1], nc[0]))
    if best_count > 0:
        spread = sum(count for _, count in per_node)
        nodes_with = sum(1 for _, count in per_node if count)
        reason = (
            f"the most {kind}s that can each take one slice on one node is {best_count:,} (on "
            f"{best_node}); the job needs {shape.gpus:,} on one node (HAMi places all GPUs of "
            f"a container on one node). Cluster-wide {spread:,} such GPU(s) are free, over "
            f"{nodes_with:,} node(s)."
        )
        closest = f"{shape.compact(best_count)} fits on {best_node} now."
        return reason, closest
    return _per_gpu_reason(known, shape, split_count, kind)


def _fitting_per_node(
    gpus: Sequence[GpuSummary], shape: Shape, split_count: int | None
) -> list[tuple[str, int]]:
    ordered = sorted(gpus, key=attrgetter("node"))
    return [
        (node, sum(1 for g in group if slices_on(g, shape, split_count)))
        for node, group in groupby(ordered, key=attrgetter("node"))
    ]


def _per_gpu_reason(
    gpus: Sequence[GpuSummary], shape: Shape, split_count: int | None, kind: str
) -> tuple[str, str | None]:
    """No single GPU takes a slice: say which dimension falls short, with the best GPU."""
    most_mem = max(gpus, key=lambda g: (g.free_mem_mib, g.free_cores))
    most_cores = max(gpus, key=lambda g: (g.free_cores, g.free_mem_mib))
    closest = (
        f"GPU {most_mem.device_index} of {most_mem.node} ({most_mem.device_type}), with "
        f"{memory_text(most_mem.free_mem_mib)} and {most_mem.free_cores:,.0f} cores free."
    )
    parts: list[str] = []
    if split_count is not None and all(g.shared_count >= split_count for g in gpus):
        parts.append(f"every {kind} already holds the maximum of {split_count} tasks")
    if shape.whole_gpu:
        idle = [g for g in gpus if g.shared_count == 0 and g.free_cores + EPS >= 100]
        whole_free = [g for g in idle if g.free_mem_mib + EPS >= int(g.mem_limit_mib)]
        if not whole_free:
            parts.append(
                f"no {kind} is free as a whole (100 cores, all of its memory, no task on it)"
            )
        return "; ".join(parts or [f"no {kind} can take one slice"]) + ".", closest
    if shape.mem_mib is not None and most_mem.free_mem_mib + EPS < shape.mem_mib:
        short = shape.mem_mib - most_mem.free_mem_mib
        parts.append(
            f"memory per GPU short by {memory_text(short)} (largest free memory on one {kind}: "
            f"{memory_text(most_mem.free_mem_mib)}, on {most_mem.node})"
        )
    if shape.mem_mib is None:
        ok_mem = [g for g in gpus if g.free_mem_mib + EPS >= shape.mem_needed_mib(g.mem_limit_mib)]
        if not ok_mem:
            parts.append(f"no {kind} has {shape.mem_percent or 100}% of its memory free")
    cores = shape.cores_per_gpu
    if cores > 0 and most_cores.free_cores + EPS < cores:
        parts.append(
            f"cores per GPU short by {cores - most_cores.free_cores:,.0f} (most free cores on "
            f"one {kind}: {most_cores.free_cores:,.0f}, on {most_cores.node})"
        )
    if cores >= 100 and not any(g.shared_count == 0 for g in gpus):
        parts.append(f"a 100-core slice needs a {kind} with no task on it, and every one has")
    if cores == 0 and all(g.core_allocated >= g.core_limit for g in gpus):
        parts.append(
            f"a 0-core slice cannot go to a {kind} whose cores are all allocated, "
            "and every one's are"
        )
    if not parts:
        parts.append(f"no single {kind} has both the cores and the memory free")
    return "; ".join(parts) + ".", closest
