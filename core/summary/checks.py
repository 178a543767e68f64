"""Consistency checks between series that should agree (device totals and the pods on them,
namespace sums and quota used, the memory ratio and its bytes).

Each check passes, warns with the numbers on both sides, or is skipped when its input is missing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from operator import truediv
from typing import cast

from core.model import Check, GpuSummary, NamespaceSummary, Workload
from core.settings import Thresholds
from core.summary.columns import GpuColumns
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
    return _report(name, problems, len(problems), total, what)


def _report(name: str, listed_problems: list[str], count: int, total: int, what: str) -> Check:
    """Pass, or warn with the first few problems (each with both numbers) and their count."""
    if not count:
        return Check(name, "pass", f"{what} agree on all {total:,}.")
    listed = "; ".join(listed_problems[:_MAX_LISTED])
    more = f" (and {count - _MAX_LISTED:,} more)" if count > _MAX_LISTED else ""
    return Check(name, "warn", f"{count:,} of {total:,} disagree: {listed}{more}. {LIKELY_CAUSES}.")


def _gpu(g: GpuSummary) -> str:
    return f"{g.node}/GPU {g.device_index}"


def _differing(tolerance: float, *pairs: tuple[Sequence[float], Sequence[float]]) -> Iterable[int]:
    """Positions where the two columns of some pair (ours, theirs) differ: with a tolerance of
    0 or more only those can be off by more. The figures usually agree to the last bit, which
    one comparison of whole tuples tells in C. Every position with any other tolerance."""
    size = len(pairs[0][0])
    if not tolerance >= 0:
        return range(size)
    differ = [pair for pair in pairs if tuple(pair[0]) != tuple(pair[1])]
    if not differ:
        return ()
    if len(differ) == 1:
        ours, theirs = differ[0]
        return [i for i, (a, b) in enumerate(zip(ours, theirs, strict=True)) if a != b]
    (ours, theirs), (ours_2, theirs_2) = differ
    return [
        i
        for i, (a, b, a_2, b_2) in enumerate(zip(ours, theirs, ours_2, theirs_2, strict=True))
        if a != b or a_2 != b_2
    ]


def check_memory_ratio(gpus: Sequence[GpuSummary], cols: GpuColumns, t: Thresholds) -> Check:
    name = "device memory ratio"
    ratios, mems, limits = cols.mem_ratio, cols.mem_mib, cols.mem_limit_mib
    off: list[tuple[int, float, float]]  # (GPU, allocated/limit, ratio series)
    if len(cols) and None not in ratios and min(limits) > 0:
        # Every GPU has a ratio series and a memory limit (the usual case): each is checked,
        # in C. (A NaN limit compares as the loop below compares it.)
        checked = len(cols)
        series = cast(Sequence[float], ratios)
        computed = list(map(truediv, mems, limits))
        wrong = [
            i
            for i in _differing(t.check_ratio, (computed, series))
            if abs(computed[i] - series[i]) > t.check_ratio
        ]
        off_count = len(wrong)
        off = [(i, computed[i], series[i]) for i in wrong[:_MAX_LISTED]]
    else:
        checked = 0
        off = []
        for i, (ratio, mem, limit) in enumerate(zip(ratios, mems, limits, strict=True)):
            if ratio is None or limit <= 0:
                continue
            checked += 1
            computed_one = mem / limit
            if abs(computed_one - ratio) > t.check_ratio:
                off.append((i, computed_one, ratio))
        off_count = len(off)
    if not checked:
        return Check(name, "skip", "no hami_node_gpu_memory_allocated_ratio series in the input.")
    problems = [
        f"{_gpu(gpus[i])}: allocated/limit = {computed:.4f}, ratio series = {ratio:.4f}"
        for i, computed, ratio in off[:_MAX_LISTED]
    ]
    return _report(name, problems, off_count, checked, "memory allocated/limit and ratio series")


def check_device_sums(
    gpus: Sequence[GpuSummary],
    cols: GpuColumns,
    workloads: Sequence[Workload],
    device_ids: Sequence[int],
    t: Thresholds,
) -> Check:
    """``device_ids[i]`` is the device number of ``workloads[i]``: its GPU's position in ``gpus``,
    or a number past the end for a device the device series do not list."""
    name = "device vs container sums"
    if not workloads:
        return Check(name, "skip", "no per-pod allocation series (hami_vgpu_*) in the input.")
    known = len(gpus)
    sum_cores = [0.0] * known
    sum_mem = [0.0] * known
    unknown: dict[str, list[float]] = {}
    for w, device in zip(workloads, device_ids, strict=True):
        if device < known:
            sum_cores[device] += w.cores
            sum_mem[device] += w.mem_mib
        else:
            totals = unknown.setdefault(w.device_uuid, [0.0, 0.0])
            totals[0] += w.cores
            totals[1] += w.mem_mib
    tolerance = min(t.check_cores, t.check_mem_mib)
    off = [
        i
        for i in _differing(tolerance, (sum_cores, cols.cores), (sum_mem, cols.mem_mib))
        if abs(sum_cores[i] - cols.cores[i]) > t.check_cores
        or abs(sum_mem[i] - cols.mem_mib[i]) > t.check_mem_mib
    ]
    problems = [
        f"{_gpu(gpus[i])}: device {_fmt(cols.cores[i])} cores / {_fmt(cols.mem_mib[i])} MiB, "
        f"containers {_fmt(sum_cores[i])} cores / {_fmt(sum_mem[i])} MiB"
        for i in off[:_MAX_LISTED]
    ]
    problems += [
        f"{uuid}: containers hold {_fmt(c)} cores / {_fmt(m)} MiB on a device the device series "
        "do not list"
        for uuid, (c, m) in sorted(unknown.items())
    ]
    return _report(name, problems, len(off) + len(unknown), len(gpus), "device and container sums")


def check_shared_counts(
    gpus: Sequence[GpuSummary], cols: GpuColumns, workloads: Sequence[Workload]
) -> Check:
    name = "shared count vs allocations"
    if not workloads:
        return Check(name, "skip", "no per-pod allocation series (hami_vgpu_*) in the input.")
    off = [
        i
        for i, (shared, containers) in enumerate(
            zip(cols.shared_count, cols.containers, strict=True)
        )
        if shared != containers
    ]
    problems = [
        f"{_gpu(gpus[i])}: shared count {cols.shared_count[i]}, "
        f"{cols.containers[i]} distinct allocations"
        for i in off[:_MAX_LISTED]
    ]
    return _report(name, problems, len(off), len(gpus), "shared counts and distinct allocations")


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
    # HAMi never deletes quota series, so a namespace's quota used can be stale.
    return _warn_or_pass(name, problems, len(rows), "namespace pod sums and quota used")


# What each device figure is read from, in current and legacy names.
DEVICE_SERIES = (
    ("core limit", "hami_gpu_core_limit_ratio / GPUDeviceCoreLimit"),
    ("memory limit", "hami_gpu_memory_limit_bytes / GPUDeviceMemoryLimit"),
    ("cores allocated", "hami_gpu_core_allocated_ratio / GPUDeviceCoreAllocated"),
    ("memory allocated", "hami_gpu_memory_allocated_bytes / GPUDeviceMemoryAllocated"),
)


def check_device_series(missing: Mapping[str, int], gpus: int, values_left_out: bool) -> Check:
    """Every GPU needs its four figures; a missing one is read as 0, which this check says.
    ``values_left_out``: some device values were set aside as input problems."""
    name = "device series complete"
    if not gpus:
        return Check(name, "skip", "no GPU device series in the input.")
    absent = "missing or unusable" if values_left_out else "missing"
    gaps = [
        f"{families} {absent} for {missing[figure]} GPU(s)"
        for figure, families in DEVICE_SERIES
        if missing.get(figure)
    ]
    if not gaps:
        return Check(name, "pass", f"limit and allocation series present for all {gpus:,} GPUs.")
    return Check(
        name,
        "warn",
        "; ".join(gaps)
        + ". Those figures count as 0 here: limits, percentages and free capacity of those GPUs "
        "are understated. Likely causes: "
        + ("values left out as input problems (see the notes), " if values_left_out else "")
        + "a partial sample (truncated paste or export), or a scrape cut off mid-way; send the "
        "whole /metrics output.",
    )


def build_checks(
    gpus: Sequence[GpuSummary],
    cols: GpuColumns,
    workloads: Sequence[Workload],
    device_ids: Sequence[int],
    namespaces: Sequence[NamespaceSummary],
    missing_series: Mapping[str, int],
    t: Thresholds,
    *,
    values_left_out: bool = False,
) -> list[Check]:
    return [
        check_device_series(missing_series, len(gpus), values_left_out),
        check_memory_ratio(gpus, cols, t),
        check_device_sums(gpus, cols, workloads, device_ids, t),
        check_shared_counts(gpus, cols, workloads),
        check_quota_sums(namespaces, t),
    ]
