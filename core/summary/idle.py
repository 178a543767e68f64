"""Allocations that sit idle, where runtime data says so (vGPU monitor or nvidia-smi).

Allocation is not use: HAMi hands out cores and memory whether or not the pod runs kernels.
Only a measurement tells an idle allocation apart, with the rule of the real-usage classes
(utilisation below ``idle_utilization_percent`` and memory used below ``idle_mem_percent`` of
what the pod may use), applied to the vGPU monitor's per-container figures (SM utilisation,
memory used of the container's vGPU limit) and to nvidia-smi's per-pod "idle" class. A pod is
idle when every one of its measured containers is.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.model import IdleAllocation, PodRealUsage, RuntimeSection
from core.settings import Thresholds


def idle_allocations(
    runtime: RuntimeSection | None,
    real_usage: Sequence[PodRealUsage] | None,
    t: Thresholds,
) -> tuple[IdleAllocation, ...] | None:
    """Idle pods, by namespace and pod; None when the input has no runtime data at all."""
    if runtime is None and real_usage is None:
        return None
    idle: dict[tuple[str, str], IdleAllocation] = {}
    if real_usage is not None:
        for usage in real_usage:
            if usage.usage_class == "idle":
                idle[(usage.namespace, usage.pod)] = IdleAllocation(
                    usage.namespace,
                    usage.pod,
                    "nvidia-smi",
                    usage.utilization_percent,
                    usage.mem_efficiency_percent,
                )
    if runtime is not None:
        by_pod: dict[tuple[str, str], list[bool]] = {}
        figures: dict[tuple[str, str], tuple[float | None, float | None]] = {}
        for c in runtime.containers:
            quiet = (
                c.sm_utilization_percent is not None
                and c.mem_used_percent is not None
                and c.sm_utilization_percent < t.idle_utilization_percent
                and c.mem_used_percent < t.idle_mem_percent
            )
            by_pod.setdefault((c.namespace, c.pod), []).append(quiet)
            figures[(c.namespace, c.pod)] = (c.sm_utilization_percent, c.mem_used_percent)
        for key, containers in by_pod.items():
            if all(containers) and key not in idle:
                idle[key] = IdleAllocation(key[0], key[1], "vGPU monitor", *figures[key])
    return tuple(idle[key] for key in sorted(idle))
