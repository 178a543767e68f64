"""Patterns worth calling out and the cluster distribution verdict (SPEC.md section 9)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from core.model import Distribution, Finding, GpuSummary, NamespaceSummary, Workload
from core.settings import Thresholds

_MAX_SUBJECTS = 10


def _gpu_name(g: GpuSummary) -> str:
    return f"{g.node}/GPU {g.device_index}"


def _names(gpus: Sequence[GpuSummary]) -> tuple[str, ...]:
    return tuple(_gpu_name(g) for g in gpus[:_MAX_SUBJECTS])


def _listing(gpus: Sequence[GpuSummary]) -> str:
    shown = ", ".join(_names(gpus))
    extra = len(gpus) - _MAX_SUBJECTS
    return shown + (f" and {extra} more" if extra > 0 else "")


def free_cores_on_partial_percent(gpus: Sequence[GpuSummary]) -> float:
    free = sum(g.free_cores for g in gpus)
    on_partial = sum(g.free_cores for g in gpus if g.state == "partial")
    return on_partial / free * 100.0 if free > 0 else 0.0


def gpus_holding_half_of_cores(gpus: Sequence[GpuSummary]) -> int:
    """The fewest GPUs that together hold at least half of all allocated cores."""
    total = sum(g.core_allocated for g in gpus)
    if total <= 0:
        return 0
    running = 0.0
    for count, cores in enumerate(sorted((g.core_allocated for g in gpus), reverse=True), 1):
        running += cores
        if running >= total / 2:
            return count
    return len(gpus)


def distribution(
    gpus: Sequence[GpuSummary], namespaces: Sequence[NamespaceSummary], t: Thresholds
) -> Distribution:
    if any(ns.usage_class == "dominant tenant" for ns in namespaces):
        return "concentrated"
    holders = gpus_holding_half_of_cores(gpus)
    if holders and holders <= math.floor(len(gpus) * t.concentrated_gpu_percent / 100.0):
        return "concentrated"
    partial = sum(1 for g in gpus if g.state == "partial")
    if (
        partial >= t.fragmented_min_partial_gpus
        and free_cores_on_partial_percent(gpus) >= t.fragmented_free_on_partial_percent
    ):
        return "fragmented"
    return "even"


def build_findings(
    gpus: Sequence[GpuSummary],
    workloads: Sequence[Workload],
    namespaces: Sequence[NamespaceSummary],
    t: Thresholds,
) -> list[Finding]:
    findings: list[Finding] = []
    full = [g for g in gpus if g.state == "full"]
    if full:
        exclusive = sum(1 for g in full if g.shared_count == 1)
        findings.append(
            Finding(
                "fully-occupied",
                "info",
                f"{len(full)} GPU(s) fully occupied ({exclusive} exclusively by one workload): "
                f"{_listing(full)}.",
                _names(full),
            )
        )
    shared = [g for g in gpus if "shared" in g.flags]
    if shared:
        findings.append(
            Finding(
                "shared",
                "info",
                f"{len(shared)} GPU(s) shared by several workloads: {_listing(shared)}.",
                _names(shared),
            )
        )
    idle = [g for g in gpus if g.state == "idle"]
    if idle:
        findings.append(
            Finding(
                "idle",
                "info",
                f"{len(idle)} idle GPU(s), schedulable for whole-GPU jobs: {_listing(idle)}.",
                _names(idle),
            )
        )
    partial = [g for g in gpus if g.state == "partial"]
    on_partial = free_cores_on_partial_percent(gpus)
    if (
        partial
        and on_partial >= t.fragmented_free_on_partial_percent
        and len(idle) <= max(1, len(gpus) // 10)
    ):
        findings.append(
            Finding(
                "fragmentation-risk",
                "warn",
                f"Fragmentation risk: {on_partial:.0f}% of free cores lie on {len(partial)} partly "
                f"allocated GPU(s) and only {len(idle)} GPU(s) are idle: small jobs fit, whole-GPU "
                "jobs may not.",
                _names(partial),
            )
        )
    for ns in namespaces:
        if ns.usage_class == "dominant tenant":
            findings.append(
                Finding(
                    "dominant-tenant",
                    "warn",
                    f"Namespace {ns.namespace} holds {ns.core_share_percent:.0f}% of allocated "
                    f"cores and {ns.mem_share_percent:.0f}% of allocated memory.",
                    (ns.namespace,),
                )
            )
    inconsistent = [g for g in gpus if g.state == "inconsistent"]
    if inconsistent:
        findings.append(
            Finding(
                "inconsistent",
                "warn",
                f"Investigate {len(inconsistent)} GPU(s) with memory but no cores (or cores but "
                f"no memory) allocated: {_listing(inconsistent)}. Memory-only allocations usually "
                "mean pods that requested no core share (nvidia.com/gpucores unset or 0).",
                _names(inconsistent),
            )
        )
    over = [g for g in gpus if "overcommitted" in g.flags]
    if over:
        findings.append(
            Finding(
                "overcommitted",
                "warn",
                f"{len(over)} GPU(s) allocated beyond their limit: {_listing(over)}.",
                _names(over),
            )
        )
    for ns in namespaces:
        for figure in ns.quota:
            if figure.limit is not None and figure.used > figure.limit:
                findings.append(
                    Finding(
                        "quota-exceeded",
                        "warn",
                        f"Namespace {ns.namespace} uses {figure.used:.0f} of {figure.resource} "
                        f"against a quota limit of {figure.limit:.0f}.",
                        (ns.namespace,),
                    )
                )
    multi = sorted({f"{w.namespace}/{w.pod}" for w in workloads if w.multi_gpu})
    if multi:
        findings.append(
            Finding(
                "multi-gpu",
                "info",
                f"{len(multi)} pod(s) hold a multi-GPU allocation: "
                + ", ".join(multi[:_MAX_SUBJECTS])
                + (f" and {len(multi) - _MAX_SUBJECTS} more" if len(multi) > _MAX_SUBJECTS else "")
                + ".",
                tuple(multi[:_MAX_SUBJECTS]),
            )
        )
    return findings
