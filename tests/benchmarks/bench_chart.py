"""Benchmark: the allocation chart at 6, 160, 1,600 and 8,000 GPUs.

Run from the repository root:

    .venv/bin/python tests/benchmarks/bench_chart.py [--repeat 5]

Summaries of the simulator's clusters (several GPU models, seed 1) are built first and not
timed. Then, in interleaved rounds (so every size sees the same machine load), it times
``render_chart(summary)`` in this process, matplotlib already loaded: CPU (``process_time``)
and wall, median of ``--repeat``, and the PNG's size. The reference, measured in the same
rounds, is matplotlib drawing and saving a blank figure of the chart's size: the least any
chart of that size costs. Separately, a fresh process times its first chart of 8,000 GPUs,
matplotlib's import and font loading included (what ``summarize --chart`` adds to a command),
and prints the part of it that importing matplotlib and numpy took.

Targets (PASS/FAIL, exit 1 on FAIL): every PNG under 1 MB; 8,000 GPUs rendered in under 1 s
of CPU, both warm and in the fresh process. Wall time is printed too; on a loaded machine it
counts the other processes' turns, so the targets are on CPU time, as in ``bench_command.py``.
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial

from core.api import summarize_text
from core.model import SourceInfo, Summary
from core.simulate import simulate_exposition
from core.views.chart import choose_layout, render_chart
from core.views.chart_style import DPI, FIG_HEIGHT_IN, FIG_WIDTH_IN

SIZES = ((2, 3), (20, 8), (200, 8), (1000, 8))  # 6, 160, 1,600 and 8,000 GPUs
SEED = 1
TARGET_SECONDS = 1.0
TARGET_PNG_BYTES = 1_000_000

FIRST_CHART = """\
import sys, time
from core.api import summarize_text
from core.model import SourceInfo
from core.simulate import simulate_exposition
summary = summarize_text(simulate_exposition(1000, 8, seed=int(sys.argv[1])),
                         SourceInfo(kind="paste", label="bench"))
assert "matplotlib" not in sys.modules
cpu, wall = time.process_time(), time.perf_counter()
from core.views.chart import render_chart
from core.views.chart_style import load_matplotlib
load_matplotlib()
imported = time.process_time() - cpu
data = render_chart(summary)
print(time.process_time() - cpu, time.perf_counter() - wall, len(data), imported)
"""


@dataclass
class Timings:
    label: str
    cpu: list[float] = field(default_factory=list)
    wall: list[float] = field(default_factory=list)
    png_bytes: int = 0

    def add(self, run: Callable[[], bytes]) -> None:
        cpu, wall = time.process_time(), time.perf_counter()
        self.png_bytes = len(run())
        self.cpu.append(time.process_time() - cpu)
        self.wall.append(time.perf_counter() - wall)

    @property
    def median_cpu(self) -> float:
        return statistics.median(self.cpu)

    @property
    def median_wall(self) -> float:
        return statistics.median(self.wall)


def summary_of(nodes: int, gpus_per_node: int) -> Summary:
    source = SourceInfo(kind="paste", label="bench", fetched_at=datetime(2026, 8, 21, tzinfo=UTC))
    return summarize_text(simulate_exposition(nodes, gpus_per_node, seed=SEED), source)


def blank_figure() -> bytes:
    """matplotlib drawing and saving an empty figure of the chart's size: the floor."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(FIG_WIDTH_IN, FIG_HEIGHT_IN), dpi=DPI)
    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI)
    return buffer.getvalue()


def first_chart_in_a_new_process() -> tuple[float, float, int, float]:
    """CPU and wall seconds of the first chart in a fresh process, its PNG's size, and the CPU
    seconds of that taken by importing matplotlib (and numpy)."""
    done = subprocess.run(
        [sys.executable, "-c", FIRST_CHART, str(SEED)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "MPLBACKEND": "Agg"},
    )
    cpu, wall, size, imported = done.stdout.split()
    return float(cpu), float(wall), int(size), float(imported)


def verdict(ok: bool, message: str) -> bool:
    print(f"{'PASS' if ok else 'FAIL'} {message}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(
        f"machine: {platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}"
    )
    summaries = {n * g: summary_of(n, g) for n, g in SIZES}
    runs = {gpus: Timings(f"{gpus:,} GPUs ({choose_layout(s)})") for gpus, s in summaries.items()}
    floor = Timings("blank figure (reference)")
    blank_figure()  # warm-up: matplotlib imported, fonts loaded
    for summary in summaries.values():
        render_chart(summary)
    for _ in range(args.repeat):
        floor.add(blank_figure)
        for gpus, summary in summaries.items():
            runs[gpus].add(partial(render_chart, summary))
    cold_cpu, cold_wall, cold_bytes, cold_import = first_chart_in_a_new_process()
    print(f"load average after: {os.getloadavg()[0]:.2f}\n")
    print(f"{'chart':<28} {'CPU s':>7} {'wall s':>7} {'x blank':>8} {'PNG KB':>8}")
    for one in (floor, *runs.values()):
        ratio = one.median_cpu / floor.median_cpu
        print(
            f"{one.label:<28} {one.median_cpu:7.3f} {one.median_wall:7.3f} {ratio:8.1f} "
            f"{one.png_bytes / 1000:8.1f}"
        )
    print(
        f"{'8,000 GPUs, first in a process':<28} {cold_cpu:7.3f} {cold_wall:7.3f} {'':>8} "
        f"{cold_bytes / 1000:8.1f}"
    )
    print(f"{'  of which importing':<28} {cold_import:7.3f}\n")
    largest = runs[8000]
    checks = [
        verdict(
            all(one.png_bytes < TARGET_PNG_BYTES for one in runs.values()),
            f"every PNG under 1 MB (largest {max(r.png_bytes for r in runs.values()):,} bytes)",
        ),
        verdict(
            largest.median_cpu < TARGET_SECONDS,
            f"8,000 GPUs: {largest.median_cpu:.2f} s CPU ({largest.median_wall:.2f} s wall) "
            f"(target < {TARGET_SECONDS:g} s CPU)",
        ),
        verdict(
            cold_cpu < TARGET_SECONDS,
            f"8,000 GPUs in a new process, matplotlib's import included: {cold_cpu:.2f} s CPU "
            f"({cold_wall:.2f} s wall) (target < {TARGET_SECONDS:g} s CPU)",
        ),
    ]
    return 0 if all(checks) else 1


if __name__ == "__main__":
    sys.exit(main())
