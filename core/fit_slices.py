"""Per-GPU rules of ``fit``: which GPUs match a model, how many slices of a shape a GPU takes
now (HAMi's device filter), how many jobs those slices allow, and which GPUs are fragmented.
See ``core.fit`` for the rules in words.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from core.fit_shape import Shape
from core.model import GpuSummary

EPS = 1e-6


def model_matches(query: str, device_type: str) -> bool:
    """``query``'s parts each appear in ``device_type``, in order, ignoring case."""
    label = device_type.lower()
    position = 0
    for part in re.split(r"[-_\s]++", query.lower()):
        if not part:
            continue
        found = label.find(part, position)
        if found < 0:
            return False
        position = found + len(part)
    return True


def usable(gpu: GpuSummary) -> bool:
    return "incomplete" not in gpu.flags and gpu.core_limit > 0 and gpu.mem_limit_mib > 0


def slices_on(gpu: GpuSummary, shape: Shape, split_count: int | None = None) -> int:
    """How many slices of ``shape`` the GPU can take now (0 when it takes none)."""
    if not usable(gpu):
        return 0
    room = math.inf if split_count is None else split_count - gpu.shared_count
    if room <= 0:
        return 0
    cores = shape.cores_per_gpu
    mem = shape.mem_needed_mib(gpu.mem_limit_mib)
    if mem <= 0 or gpu.free_mem_mib + EPS < mem:
        return 0
    by_mem = math.floor(gpu.free_mem_mib / mem + EPS)
    if cores >= 100:
        exclusive_ok = gpu.shared_count == 0 and gpu.free_cores + EPS >= cores
        return 1 if exclusive_ok else 0
    if cores == 0:
        if gpu.core_allocated >= gpu.core_limit:
            return 0
        return int(min(by_mem, room))
    by_cores = math.floor(gpu.free_cores / cores + EPS)
    return int(min(by_mem, by_cores, room))


def jobs_from_slices(slices: Sequence[int], gpus: int) -> int:
    """The most jobs of ``gpus`` distinct GPUs each that ``slices`` (per GPU) allow.

    ``k`` jobs fit exactly when ``sum(min(s, k)) >= k * gpus``: a GPU serves each job at most
    once. Feasibility falls with ``k``, so a binary search finds the largest.
    """
    low, high = 0, sum(slices) // gpus
    while low < high:
        k = (low + high + 1) // 2
        if sum(min(s, k) for s in slices) >= k * gpus:
            low = k
        else:
            high = k - 1
    return low


def fragmented(gpu: GpuSummary, cores: float = 0.0, mem: float = 0.0) -> bool:
    """Partly allocated, partly free (after adding ``cores`` and ``mem``)."""
    if not usable(gpu):
        return False
    allocated = gpu.core_allocated + cores > EPS or gpu.mem_allocated_mib + mem > EPS
    free = gpu.free_cores - cores > EPS or gpu.free_mem_mib - mem > EPS
    return allocated and free
