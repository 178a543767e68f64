"""Consistency checks between series that should agree (SPEC.md section 10).

Each check passes, warns with the numbers on both sides, or is skipped when its input is missing.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from core.model import Check, GpuSummary, NamespaceSummary, Workload
from core.settings import Thresholds
from core.summary.workloads import is_core_resource, is_memory_resource

LIKELY_CAUSES = (
    "likely causes: scrape timing skew between families, a stale scheduler cache (deleted pods "
    "still counted), unit confusion (bytes vs MiB), a partial sample (truncated paste), or pods "
    "completed but not yet reconciled"
)
_MAX_LISTED = 5


def _fmt(value: float) -> str:
    return f"{value:.0f}" if abs(value - round(value)) < 1e-9 else f"{value:.2f}"


def _warn_or_pass(name: str, problems: list[str], total: int, what: str) -> Check:
    if not problems:
        return Check(name, "pass", f"{what} agree on all {total}.")
    listed = "; ".join(problems[:_MAX_LISTED])
    more = f" (and {len(problems) - _MAX_LISTED} more)" if len(problems) > _MAX_LISTED else ""
    return Check(
        name, "warn", f"{len(problems)} of {total} disagree: {listed}{more}. {LIKELY_CAUSES}."
    )


def check_memory_ratio(gpus: Sequence[GpuSummary], t: Thresholds) -> Check:
    name = "device memory ratio"
    with_ratio = [g for g in gpus if g.mem_ratio_reported is not None and g.mem_limit_mib > 0]
    if not with_ratio:
        return Check(name, "skip", "no hami_node_gpu_memory_allocated_ratio series in the input.")
    problems = []
    for g in with_ratio:
        computed = g.mem_allocated_mib / g.mem_limit_mib
        reported = g.mem_ratio_reported or 0.0
        if abs(computed - reported) > t.check_ratio:
            problems.append(
                f"{g.node}/GPU {g.device_index}: allocated/limit = {computed:.4f}, "
                f"ratio series = {reported:.4f}"
            )
    return _warn_or_pass(name, problems, len(with_ratio), "memory allocated/limit and ratio series")


def check_device_sums(
    gpus: Sequence[GpuSummary], workloads: Sequence[Workload], t: Thresholds
) -> Check:
    name = "device vs container sums"
    if not workloads:
        return Check(name, "skip", "no per-pod allocation series (hami_vgpu_*) in the input.")
    sums: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for w in workloads:
        sums[w.device_uuid][0] += w.cores
        sums[w.device_uuid][1] += w.mem_mib
    problems = []
    known = {g.device_uuid for g in gpus}
    for g in gpus:
        cores, mem = sums.get(g.device_uuid, (0.0, 0.0))
        if abs(cores - g.core_allocated) > t.check_cores or abs(mem - g.mem_allocated_mib) > (
            t.check_mem_mib
        ):
            problems.append(
                f"{g.node}/GPU {g.device_index}: device {_fmt(g.core_allocated)} cores / "
                f"{_fmt(g.mem_allocated_mib)} MiB, containers {_fmt(cores)} cores / "
                f"{_fmt(mem)} MiB"
            )
    for uuid in sorted(set(sums) - known):
        cores, mem = sums[uuid]
        problems.append(
            f"{uuid}: containers hold {_fmt(cores)} cores / {_fmt(mem)} MiB on a device the "
            "device series do not list"
        )
    return _warn_or_pass(name, problems, len(gpus), "device and container sums")


def check_shared_counts(gpus: Sequence[GpuSummary], workloads: Sequence[Workload]) -> Check:
    name = "shared count vs allocations"
    if not workloads:
        return Check(name, "skip", "no per-pod allocation series (hami_vgpu_*) in the input.")
    problems = [
        f"{g.node}/GPU {g.device_index}: shared count {g.shared_count}, "
        f"{g.containers} distinct allocations"
        for g in gpus
        if g.shared_count != g.containers
    ]
    return _warn_or_pass(name, problems, len(gpus), "shared counts and distinct allocations")


def check_quota_sums(namespaces: Sequence[NamespaceSummary], t: Thresholds) -> Check:
    name = "namespace sums vs quota used"
    rows = [ns for ns in namespaces if ns.quota and ns.totals_from == "workloads"]
    if not rows:
        if any(ns.quota for ns in namespaces):
            return Check(name, "skip", "no per-pod series to compare quota figures with.")
        return Check(name, "skip", "no hami_resource_quota_used series in the input.")
    problems = []
    for ns in rows:
        for figure in ns.quota:
            if is_core_resource(figure.resource):
                ours, tol, unit = ns.cores, t.check_cores, "cores"
            elif is_memory_resource(figure.resource):
                ours, tol, unit = ns.mem_mib, t.check_mem_mib, "MiB"
            else:
                continue
            if abs(ours - figure.used) > tol:
                problems.append(
                    f"{ns.namespace} {figure.resource}: pods {_fmt(ours)} {unit}, "
                    f"quota used {_fmt(figure.used)} {unit}"
                )
    # Quota series are never deleted by HAMi and can be stale (reference 2.6).
    return _warn_or_pass(name, problems, len(rows), "namespace pod sums and quota used")


def build_checks(
    gpus: Sequence[GpuSummary],
    workloads: Sequence[Workload],
    namespaces: Sequence[NamespaceSummary],
    t: Thresholds,
) -> list[Check]:
    return [
        check_memory_ratio(gpus, t),
        check_device_sums(gpus, workloads, t),
        check_shared_counts(gpus, workloads),
        check_quota_sums(namespaces, t),
    ]
