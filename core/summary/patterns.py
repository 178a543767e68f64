"""Patterns worth calling out and the cluster distribution verdict (SPEC.md section 9)."""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Sequence
from itertools import accumulate, compress

from core.model import Distribution, Finding, GpuSummary, NamespaceSummary, Workload
from core.settings import Thresholds
from core.summary.columns import GpuColumns, where
from core.summary.workloads import is_memory_resource
from core.views import numbers

_MAX_SUBJECTS = 10


def _gpu_name(g: GpuSummary) -> str:
    return f"{g.node}/GPU {g.device_index}"


def _names(gpus: Sequence[GpuSummary], which: Sequence[int]) -> tuple[str, ...]:
    return tuple(_gpu_name(gpus[i]) for i in which[:_MAX_SUBJECTS])


def _listing(gpus: Sequence[GpuSummary], which: Sequence[int]) -> str:
    shown = ", ".join(_names(gpus, which))
    extra = len(which) - _MAX_SUBJECTS
    return shown + (f" and {extra:,} more" if extra > 0 else "")


def free_cores_on_partial_percent(cols: GpuColumns) -> float:
    free = sum(cols.free_cores)
    on_partial = sum(compress(cols.free_cores, cols.is_state("partial")))
    return on_partial / free * 100.0 if free > 0 else 0.0


def gpus_holding_half_of_cores(cols: GpuColumns) -> int:
    """The fewest GPUs that together hold at least half of all allocated cores."""
    total = sum(cols.cores)
    if total <= 0:
        return 0
    running = list(accumulate(sorted(cols.cores, reverse=True)))
    return bisect_left(running, total / 2) + 1


def distribution(
    cols: GpuColumns, namespaces: Sequence[NamespaceSummary], t: Thresholds
) -> Distribution:
    if not len(cols):
        return "unknown"
    if any(ns.size_class == "dominant" for ns in namespaces):
        return "concentrated"
    holders = gpus_holding_half_of_cores(cols)
    if holders and holders <= math.floor(len(cols) * t.concentrated_gpu_percent / 100.0):
        return "concentrated"
    partial = sum(cols.is_state("partial"))
    if (
        partial >= t.fragmented_min_partial_gpus
        and free_cores_on_partial_percent(cols) >= t.fragmented_free_on_partial_percent
    ):
        return "fragmented"
    return "even"


def build_findings(
    gpus: Sequence[GpuSummary],
    cols: GpuColumns,
    workloads: Sequence[Workload],
    namespaces: Sequence[NamespaceSummary],
    t: Thresholds,
) -> list[Finding]:
    findings: list[Finding] = []
    full = where(cols.is_state("full"))
    if full:
        exclusive = sum(1 for i in full if cols.shared_count[i] == 1)
        findings.append(
            Finding(
                "fully-occupied",
                "info",
                f"{len(full):,} GPU(s) fully occupied ({exclusive:,} exclusively by one workload): "
                f"{_listing(gpus, full)}.",
                _names(gpus, full),
            )
        )
    shared = where([count > 1 for count in cols.shared_count])
    if shared:
        findings.append(
            Finding(
                "shared",
                "info",
                f"{len(shared):,} GPU(s) shared by several workloads: {_listing(gpus, shared)}.",
                _names(gpus, shared),
            )
        )
    idle_states = cols.is_state("idle")
    idle = where([s and not i for s, i in zip(idle_states, cols.incomplete, strict=True)])
    if idle:
        findings.append(
            Finding(
                "idle",
                "info",
                f"{len(idle):,} idle GPU(s), schedulable for whole-GPU jobs: "
                f"{_listing(gpus, idle)}.",
                _names(gpus, idle),
            )
        )
    # A GPU whose limit series is missing looks idle but cannot be offered for a job.
    idle_unknown = where([s and i for s, i in zip(idle_states, cols.incomplete, strict=True)])
    if idle_unknown:
        findings.append(
            Finding(
                "idle-incomplete",
                "info",
                f"{len(idle_unknown):,} GPU(s) with nothing allocated lack a limit or allocation "
                f"series, so they are not offered for jobs: {_listing(gpus, idle_unknown)}.",
                _names(gpus, idle_unknown),
            )
        )
    partial = where(cols.is_state("partial"))
    on_partial = free_cores_on_partial_percent(cols)
    # The same condition as the "fragmented" distribution verdict, so the verdict always has a
    # finding that explains it.
    if (
        len(partial) >= t.fragmented_min_partial_gpus
        and on_partial >= t.fragmented_free_on_partial_percent
    ):
        whole_jobs = (
            "whole-GPU jobs may not"
            if not len(idle)
            else f"whole-GPU jobs fit only on the {len(idle):,} idle GPU(s)"
        )
        findings.append(
            Finding(
                "fragmentation-risk",
                "warn",
                f"Fragmentation risk: {on_partial:.1f}% of free cores lie on {len(partial):,} "
                f"partly allocated GPU(s): small jobs fit, {whole_jobs}.",
                _names(gpus, partial),
            )
        )
    for ns in namespaces:
        if ns.size_class == "dominant":
            findings.append(
                Finding(
                    "dominant-tenant",
                    "warn",
                    f"Namespace {ns.namespace} holds {ns.core_share_percent:.1f}% of allocated "
                    f"cores and {ns.mem_share_percent:.1f}% of allocated memory.",
                    (ns.namespace,),
                )
            )
    inconsistent = where(cols.is_state("inconsistent"))
    if inconsistent:
        findings.append(
            Finding(
                "inconsistent",
                "warn",
                f"Investigate {len(inconsistent):,} GPU(s) with memory but no cores (or cores but "
                f"no memory) allocated: {_listing(gpus, inconsistent)}. Memory-only allocations "
                "usually mean pods that requested no core share (nvidia.com/gpucores unset or 0).",
                _names(gpus, inconsistent),
            )
        )
    over = where(cols.overcommitted)
    if over:
        findings.append(
            Finding(
                "overcommitted",
                "warn",
                f"{len(over):,} GPU(s) allocated beyond their limit: {_listing(gpus, over)}.",
                _names(gpus, over),
            )
        )
    for ns in namespaces:
        for figure in ns.quota:
            if figure.limit is not None and figure.used > figure.limit:
                amount = numbers.mem_total if is_memory_resource(figure.resource) else numbers.cores
                findings.append(
                    Finding(
                        "quota-exceeded",
                        "warn",
                        f"Namespace {ns.namespace} uses {amount(figure.used)} of "
                        f"{figure.resource} against a quota limit of {amount(figure.limit)} "
                        f"({numbers.percent(figure.used / figure.limit * 100.0)}).",
                        (ns.namespace,),
                    )
                )
    multi = sorted({f"{w.namespace}/{w.pod}" for w in workloads if w.multi_gpu})
    if multi:
        findings.append(
            Finding(
                "multi-gpu",
                "info",
                f"{len(multi):,} pod(s) hold a multi-GPU allocation: "
                + ", ".join(multi[:_MAX_SUBJECTS])
                + (
                    f" and {len(multi) - _MAX_SUBJECTS:,} more"
                    if len(multi) > _MAX_SUBJECTS
                    else ""
                )
                + ".",
                tuple(multi[:_MAX_SUBJECTS]),
            )
        )
    return findings
