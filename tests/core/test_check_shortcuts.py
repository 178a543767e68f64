"""The consistency checks' shortcuts report what a comparison of every GPU reports.

``check_memory_ratio`` and ``check_device_sums`` compare whole columns first and look at single
GPUs only where the columns differ; the memory ratio check takes its ratios in C when every GPU
has a ratio series and a memory limit. Each is checked against the plain GPU-by-GPU rule, on
tables where figures agree, differ slightly, differ beyond the tolerance or are missing, and
with tolerances of 0, negative and NaN.
"""

from __future__ import annotations

import math
import random
from dataclasses import replace

import pytest

from core.model import Check, GpuState, GpuSummary, Workload
from core.settings import DEFAULT_SETTINGS, Thresholds
from core.summary import checks
from core.summary.columns import GpuColumns

STATES: tuple[GpuState, ...] = ("idle", "partial", "full", "inconsistent")
TOLERANCES = (None, 0.0, -1.0, math.nan)


def _thresholds(tolerance: float | None) -> Thresholds:
    t = DEFAULT_SETTINGS.thresholds
    if tolerance is None:
        return t
    return replace(t, check_ratio=tolerance, check_cores=tolerance, check_mem_mib=tolerance)


def _table(seed: int) -> tuple[list[GpuSummary], list[Workload], list[int]]:
    rng = random.Random(seed)
    gpus, workloads, devices = [], [], []
    missing_ratio = rng.random() < 0.3
    zero_limit = rng.random() < 0.3
    for index in range(rng.randint(1, 30)):
        limit = rng.choice((40960.0, 15360.0, 0.0 if zero_limit else 81920.0))
        mem = rng.choice((0.0, limit / 2, limit / 3, 1234.5))
        cores = rng.choice((0.0, 25.0, 50.0, 100.0))
        ratio: float | None = mem / limit if limit > 0 else 0.0
        if rng.random() < 0.2 and ratio is not None:
            ratio += rng.choice((1e-12, 0.005, 0.2))
        if missing_ratio and rng.random() < 0.3:
            ratio = None
        gpu = GpuSummary(
            "node-1", index, f"GPU-{index}", "A100", 100.0, cores, 0.0, limit, mem, 0.0,
            0, 0, rng.choice(STATES), (), 0.0, 0.0, (), ratio,
        )  # fmt: skip
        gpus.append(gpu)
        parts = rng.randint(0, 3)
        for part in range(parts):
            share_cores = cores / parts + rng.choice((0.0, 0.0, 1e-9, 5.0))
            share_mem = mem / parts + rng.choice((0.0, 0.0, 1e-6, 300.0))
            workload = Workload(
                "ns", f"pod-{index}", str(part), "node-1", f"GPU-{index}", share_cores,
                share_mem, False, False, False,
            )  # fmt: skip
            workloads.append(workload)
            devices.append(index if rng.random() > 0.05 else len(gpus) + 7)
    return gpus, workloads, devices


def _memory_ratio_gpu_by_gpu(gpus: list[GpuSummary], t: Thresholds) -> Check:
    checked, off = 0, []
    for g in gpus:
        ratio = g.mem_ratio_reported
        if ratio is None or g.mem_limit_mib <= 0:
            continue
        checked += 1
        computed = g.mem_allocated_mib / g.mem_limit_mib
        if abs(computed - ratio) > t.check_ratio:
            off.append(
                f"{g.node}/GPU {g.device_index}: allocated/limit = {computed:.4f}, "
                f"ratio series = {ratio:.4f}"
            )
    if not checked:
        return Check("device memory ratio", "skip", "no ratio series")
    what = "memory allocated/limit and ratio series"
    return checks._report("device memory ratio", off[:5], len(off), checked, what)


def _device_sums_gpu_by_gpu(
    gpus: list[GpuSummary], workloads: list[Workload], devices: list[int], t: Thresholds
) -> Check:
    cores, mem = [0.0] * len(gpus), [0.0] * len(gpus)
    unlisted: dict[str, list[float]] = {}
    for w, device in zip(workloads, devices, strict=True):
        if device < len(gpus):
            cores[device] += w.cores
            mem[device] += w.mem_mib
        else:
            totals = unlisted.setdefault(w.device_uuid, [0.0, 0.0])
            totals[0] += w.cores
            totals[1] += w.mem_mib
    fmt = checks._fmt
    off = [
        f"{g.node}/GPU {g.device_index}: device {fmt(g.core_allocated)} cores / "
        f"{fmt(g.mem_allocated_mib)} MiB, containers {fmt(ours)} cores / {fmt(ours_mem)} MiB"
        for g, ours, ours_mem in zip(gpus, cores, mem, strict=True)
        if abs(ours - g.core_allocated) > t.check_cores
        or abs(ours_mem - g.mem_allocated_mib) > t.check_mem_mib
    ]
    problems = off[:5] + [
        f"{uuid}: containers hold {fmt(c)} cores / {fmt(m)} MiB on a device the device series "
        "do not list"
        for uuid, (c, m) in sorted(unlisted.items())
    ]
    count = len(off) + len(unlisted)
    what = "device and container sums"
    return checks._report("device vs container sums", problems, count, len(gpus), what)


@pytest.mark.parametrize("tolerance", TOLERANCES, ids=["default", "0", "negative", "NaN"])
@pytest.mark.parametrize("seed", range(80))
def test_memory_ratio_is_judged_gpu_by_gpu(seed: int, tolerance: float | None) -> None:
    gpus, _, _ = _table(seed)
    t = _thresholds(tolerance)
    check = checks.check_memory_ratio(gpus, GpuColumns.of(gpus), t)
    expected = _memory_ratio_gpu_by_gpu(gpus, t)
    assert check.status == expected.status
    if expected.status != "skip":
        assert check == expected


@pytest.mark.parametrize("tolerance", TOLERANCES, ids=["default", "0", "negative", "NaN"])
@pytest.mark.parametrize("seed", range(80))
def test_device_sums_are_judged_gpu_by_gpu(seed: int, tolerance: float | None) -> None:
    gpus, workloads, devices = _table(seed)
    t = _thresholds(tolerance)
    check = checks.check_device_sums(gpus, GpuColumns.of(gpus), workloads, devices, t)
    if workloads:
        assert check == _device_sums_gpu_by_gpu(gpus, workloads, devices, t)
    else:
        assert check.status == "skip"
