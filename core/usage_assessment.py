"""Each pod's real GPU use (``core.realusage`` reads it from nvidia-smi) judged against what
HAMi allocated to it: idle, low / over-allocated, normal or high."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from core.model import GpuReading, PodExecResult, PodRealUsage, UsageClass
from core.realusage import checked_reading, reading_label
from core.settings import Thresholds


def assess_real_usage(
    results: Sequence[PodExecResult],
    allocated_mem_mib: Mapping[tuple[str, str], float],
    thresholds: Thresholds,
) -> tuple[PodRealUsage, ...]:
    """Classify each pod's point-in-time use against its HAMi allocation.

    ``allocated_mem_mib`` maps (namespace, pod) to the MiB HAMi allocated to that pod over all its
    devices. Utilisation is the mean over the GPUs the pod sees; memory used is their sum.
    Memory efficiency = used / allocated x 100. Classes: **idle** when utilisation is
    below ``idle_utilization_percent`` and memory used below ``idle_mem_percent`` of the allocation
    (checked first); otherwise by memory efficiency: **high** at or above
    ``high_utilization_percent``, **normal** from ``normal_utilization_percent``, else
    **low / over-allocated**. Without an allocation figure (no efficiency), utilisation is used.
    Results are sorted by namespace and pod.
    """
    assessed = [_assess_one(r, allocated_mem_mib, thresholds) for r in results]
    return tuple(sorted(assessed, key=lambda u: (u.namespace, u.pod)))


def _assess_one(
    result: PodExecResult,
    allocated_mem_mib: Mapping[tuple[str, str], float],
    thresholds: Thresholds,
) -> PodRealUsage:
    allocated = allocated_mem_mib.get((result.namespace, result.pod), 0.0)
    notes = [result.detail] if result.detail else []
    # Readings may come from a cache written before these checks: an impossible memory figure
    # never reaches an efficiency.
    readings = tuple(checked_reading(r, notes) for r in result.readings)
    utils = [r.utilization_percent for r in readings if r.utilization_percent is not None]
    utilization = sum(utils) / len(utils) if utils else None
    mem_used = _memory_used(readings, notes)
    efficiency = mem_used / allocated * 100 if mem_used is not None and allocated > 0 else None
    usage_class: UsageClass | None = None
    if result.failure is None:
        usage_class = _classify(utilization, efficiency, thresholds)
        if not readings:
            notes.append("nvidia-smi listed no GPUs; inside a HAMi slice this can be normal")
        elif allocated <= 0:
            notes.append("no HAMi memory allocation known for this pod, so no efficiency")
    return PodRealUsage(
        namespace=result.namespace,
        pod=result.pod,
        container=result.container,
        readings=readings,
        allocated_mem_mib=allocated,
        utilization_percent=utilization,
        mem_used_mib=mem_used,
        mem_efficiency_percent=efficiency,
        usage_class=usage_class,
        failure=result.failure,
        detail="; ".join(dict.fromkeys(notes)),
    )


def _memory_used(readings: Sequence[GpuReading], notes: list[str]) -> float | None:
    """The pod's memory used over its GPUs; None unless every GPU reported a usable figure
    (a sum over some of them would understate the pod's use)."""
    used = [r.mem_used_mib for r in readings if r.mem_used_mib is not None]
    if not used:
        return None
    missing = [reading_label(r) for r in readings if r.mem_used_mib is None]
    if missing:
        notes.append(f"no usable memory figure for {', '.join(missing)}, so no memory total")
        return None
    return sum(used)


def _classify(
    utilization: float | None, efficiency: float | None, t: Thresholds
) -> UsageClass | None:
    if (
        utilization is not None
        and efficiency is not None
        and utilization < t.idle_utilization_percent
        and efficiency < t.idle_mem_percent
    ):
        return "idle"
    score = efficiency if efficiency is not None else utilization
    if score is None:
        return None
    if score >= t.high_utilization_percent:
        return "high"
    if score >= t.normal_utilization_percent:
        return "normal"
    return "low / over-allocated"
