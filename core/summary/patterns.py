"""Patterns worth calling out and the cluster distribution verdict.

The cluster is "concentrated" when a dominant tenant holds it or half of the allocated cores sit
on a small share of the GPUs, "fragmented" when enough GPUs are partly allocated and they hold
most of the free cores (whole-GPU jobs then find no room), and "even" otherwise.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Sequence
from itertools import accumulate, compress

from core import number_style
from core.model import Distribution, Finding, GpuSummary, NamespaceSummary, Severity, Workload
from core.settings import Thresholds
from core.summary.columns import GpuColumns, where
from core.summary.workloads import is_memory_resource

_MAX_SUBJECTS = 10


def _gpu_name(g: GpuSummary) -> str:
    return f"{g.node}/GPU {g.device_index}"


def _names(gpus: Sequence[GpuSummary], which: Sequence[int]) -> tuple[str, ...]:
    return tuple(_gpu_name(gpus[i]) for i in which[:_MAX_SUBJECTS])


def _listing(gpus: Sequence[GpuSummary], which: Sequence[int]) -> str:
    shown = ", ".join(_names(gpus, which))
    extra = len(which) - _MAX_SUBJECTS
    return shown + (f" and {extra:,} more" if extra > 0 else "")


def rows_by_state(cols: GpuColumns) -> defaultdict[str, list[int]]:
    """The positions of the GPUs in each state, in one pass (four passes in C, one per state,
    take longer)."""
    rows: defaultdict[str, list[int]] = defaultdict(list)
    for row, state in enumerate(cols.state):
        rows[state].append(row)
    return rows


def free_cores_on_partial_percent(cols: GpuColumns, partial: Sequence[int] | None = None) -> float:
    """``partial``: the positions of the partly allocated GPUs, when already found."""
    free = sum(cols.free_cores)
    if partial is None:
        on_partial = sum(compress(cols.free_cores, cols.is_state("partial")))
    else:
        on_partial = sum(map(cols.free_cores.__getitem__, partial))
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
    partial = cols.state.count("partial")
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
    """The findings in the order a report lists them: how GPUs are held, fragmentation,
    dominant tenants, GPUs to investigate, quotas exceeded, multi-GPU pods."""
    states = rows_by_state(cols)
    idle, idle_unknown = _idle_gpus(cols, states["idle"])
    return [
        *_occupancy_findings(gpus, cols, states["full"], idle, idle_unknown),
        *_fragmentation_findings(gpus, cols, states["partial"], len(idle), t),
        *_dominant_tenant_findings(namespaces),
        *_troubled_gpu_findings(gpus, cols, states["inconsistent"]),
        *_quota_findings(namespaces),
        *_multi_gpu_findings(workloads),
    ]


def _gpu_finding(
    kind: str,
    severity: Severity,
    gpus: Sequence[GpuSummary],
    which: list[int],
    text: str,
    after: str = "",
) -> list[Finding]:
    """One finding naming the GPUs ``which`` between ``text`` and ``after``, or none when
    there are no such GPUs."""
    if not which:
        return []
    message = f"{text}: {_listing(gpus, which)}.{after}"
    return [Finding(kind, severity, message, _names(gpus, which))]


def _idle_gpus(cols: GpuColumns, idle: list[int]) -> tuple[list[int], list[int]]:
    """Of the ``idle`` GPUs, those whose figures are all known (a whole-GPU job can be given
    them), and those that lack a limit or allocation series (they look idle but cannot be
    offered)."""
    if not any(cols.incomplete):
        return idle, []
    incomplete = cols.incomplete
    return [i for i in idle if not incomplete[i]], [i for i in idle if incomplete[i]]


def _occupancy_findings(
    gpus: Sequence[GpuSummary],
    cols: GpuColumns,
    full: list[int],
    idle: list[int],
    idle_unknown: list[int],
) -> list[Finding]:
    exclusive = list(map(cols.shared_count.__getitem__, full)).count(1)
    shared = [i for i, count in enumerate(cols.shared_count) if count > 1]
    return [
        *_gpu_finding(
            "fully-occupied",
            "info",
            gpus,
            full,
            f"{len(full):,} GPU(s) fully occupied ({exclusive:,} exclusively by one workload)",
        ),
        *_gpu_finding(
            "shared", "info", gpus, shared, f"{len(shared):,} GPU(s) shared by several workloads"
        ),
        *_gpu_finding(
            "idle",
            "info",
            gpus,
            idle,
            f"{len(idle):,} idle GPU(s), schedulable for whole-GPU jobs",
        ),
        # A GPU whose limit series is missing looks idle but cannot be offered for a job.
        *_gpu_finding(
            "idle-incomplete",
            "info",
            gpus,
            idle_unknown,
            f"{len(idle_unknown):,} GPU(s) with nothing allocated lack a limit or allocation "
            "series, so they are not offered for jobs",
        ),
    ]


def _fragmentation_findings(
    gpus: Sequence[GpuSummary], cols: GpuColumns, partial: list[int], idle: int, t: Thresholds
) -> list[Finding]:
    on_partial = free_cores_on_partial_percent(cols, partial)
    # The same condition as the "fragmented" distribution verdict, so the verdict always has a
    # finding that explains it.
    if (
        len(partial) < t.fragmented_min_partial_gpus
        or on_partial < t.fragmented_free_on_partial_percent
    ):
        return []
    whole_jobs = (
        "whole-GPU jobs may not"
        if not idle
        else f"whole-GPU jobs fit only on the {idle:,} idle GPU(s)"
    )
    return [
        Finding(
            "fragmentation-risk",
            "warn",
            f"Fragmentation risk: {on_partial:.1f}% of free cores lie on {len(partial):,} "
            f"partly allocated GPU(s): small jobs fit, {whole_jobs}.",
            _names(gpus, partial),
        )
    ]


def _dominant_tenant_findings(namespaces: Sequence[NamespaceSummary]) -> list[Finding]:
    return [
        Finding(
            "dominant-tenant",
            "warn",
            f"Namespace {ns.namespace} holds {ns.core_share_percent:.1f}% of allocated "
            f"cores and {ns.mem_share_percent:.1f}% of allocated memory.",
            (ns.namespace,),
        )
        for ns in namespaces
        if ns.size_class == "dominant"
    ]


def _troubled_gpu_findings(
    gpus: Sequence[GpuSummary], cols: GpuColumns, inconsistent: list[int]
) -> list[Finding]:
    over = where(cols.overcommitted)
    return [
        *_gpu_finding(
            "inconsistent",
            "warn",
            gpus,
            inconsistent,
            f"Investigate {len(inconsistent):,} GPU(s) with memory but no cores (or cores but "
            "no memory) allocated",
            " Memory-only allocations usually mean pods that requested no core share "
            "(nvidia.com/gpucores unset or 0).",
        ),
        *_gpu_finding(
            "overcommitted",
            "warn",
            gpus,
            over,
            f"{len(over):,} GPU(s) allocated beyond their limit",
        ),
    ]


def _quota_findings(namespaces: Sequence[NamespaceSummary]) -> list[Finding]:
    findings = []
    for ns in namespaces:
        for figure in ns.quota:
            if figure.limit is not None and figure.used > figure.limit:
                amount = (
                    number_style.mem_total
                    if is_memory_resource(figure.resource)
                    else number_style.cores
                )
                findings.append(
                    Finding(
                        "quota-exceeded",
                        "warn",
                        f"Namespace {ns.namespace} uses {amount(figure.used)} of "
                        f"{figure.resource} against a quota limit of {amount(figure.limit)} "
                        f"({number_style.percent(figure.used / figure.limit * 100.0)}).",
                        (ns.namespace,),
                    )
                )
    return findings


def _multi_gpu_findings(workloads: Sequence[Workload]) -> list[Finding]:
    multi = sorted({f"{w.namespace}/{w.pod}" for w in workloads if w.multi_gpu})
    if not multi:
        return []
    more = len(multi) - _MAX_SUBJECTS
    return [
        Finding(
            "multi-gpu",
            "info",
            f"{len(multi):,} pod(s) hold a multi-GPU allocation: "
            + ", ".join(multi[:_MAX_SUBJECTS])
            + (f" and {more:,} more" if more > 0 else "")
            + ".",
            tuple(multi[:_MAX_SUBJECTS]),
        )
    ]
