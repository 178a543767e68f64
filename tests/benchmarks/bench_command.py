"""Benchmark: the whole ``hami-summary summarize`` process against reference processes.

Run from the repository root:

    .venv/bin/python tests/benchmarks/bench_command.py [--nodes 1000] [--gpus-per-node 8]
        [--repeat 5]

What a user feels is the whole command: interpreter start, imports, reading, parsing, the
summary and the output. On the simulator's 1,000 nodes x 8 GPUs scheduler exposition (Go client
formatting, about 77,000 samples, 15 MB) it runs, as separate processes, side by side, each
``--repeat`` times in interleaved rounds (so all see the same machine load):

- ``hami-summary summarize FILE --format json`` and ``--format text``;
- ``hami-summary summarize FILE --format json --chart PNG`` (the chart's added time);
- a Python process that only parses FILE with prometheus_client, every family consumed;
- a Python process that runs one ``re.findall`` over FILE picking out each sample's name,
  labels and value (the floor: reading the text once, nothing else).

It prints the median CPU time (user + system, from ``wait4``) and wall time of each, the largest
peak resident memory over the runs, and PASS/FAIL against the targets:

- json and text: CPU at most 1/6 of the prometheus_client process and at most 2x the floor;
- json and text: peak memory at most 150 MB;
- ``--chart``: at most 1 s of added CPU time.

Exits 1 if any target fails. Child processes may write bytecode (``PYTHONDONTWRITEBYTECODE`` is
dropped from their environment) and one warm-up round runs first, as an installed command has
its bytecode compiled at install time.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

TARGET_VS_PROMETHEUS_CLIENT = 6.0  # at least this many times less CPU
TARGET_VS_FLOOR = 2.0  # at most this many times the floor's CPU
TARGET_PEAK_MB = 150.0
TARGET_CHART_ADDED_S = 1.0

PROMETHEUS_CLIENT_PARSE = """\
import sys
from prometheus_client.parser import text_string_to_metric_families
with open(sys.argv[1], encoding="utf-8") as handle:
    text = handle.read()
print(sum(len(family.samples) for family in text_string_to_metric_families(text)))
"""

FLOOR_FINDALL = """\
import re, sys
with open(sys.argv[1], encoding="utf-8") as handle:
    text = handle.read()
print(len(re.findall(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{[^}\\n]*\\})? (\\S+)", text, re.M)))
"""


@dataclass
class Runs:
    """Measurements of one command over the rounds."""

    label: str
    command: list[str]
    cpu: list[float] = field(default_factory=list)
    wall: list[float] = field(default_factory=list)
    peak_mb: list[float] = field(default_factory=list)

    @property
    def median_cpu(self) -> float:
        return statistics.median(self.cpu)

    @property
    def median_wall(self) -> float:
        return statistics.median(self.wall)

    @property
    def max_peak_mb(self) -> float:
        return max(self.peak_mb)


def child_environment() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.setdefault("MPLBACKEND", "Agg")
    env.setdefault("MPLCONFIGDIR", tempfile.mkdtemp(prefix="hami-bench-mpl-"))
    return env


def measure(command: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """CPU seconds (user + system), wall seconds and peak RSS (MB) of one run of ``command``."""
    started = time.perf_counter()
    with subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env
    ) as child:
        # wait4 gives this child's own rusage: ru_maxrss in KiB on Linux.
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        stderr = child.stderr.read().decode() if child.stderr else ""
    if child.returncode != 0:
        sys.exit(f"`{' '.join(command)}` failed (exit {child.returncode}):\n{stderr}")
    return usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss * 1024 / 1e6


def hami_summary() -> list[str]:
    script = Path(sys.executable).with_name("hami-summary")
    if script.exists():
        return [str(script)]
    found = shutil.which("hami-summary")
    return [found] if found else [sys.executable, "-m", "bot.cli.main"]


def commands(path: Path, chart: Path) -> dict[str, Runs]:
    tool = hami_summary()
    summarize = [*tool, "summarize", str(path)]
    return {
        "json": Runs("summarize --format json", [*summarize, "--format", "json"]),
        "text": Runs("summarize --format text", [*summarize, "--format", "text"]),
        "chart": Runs(
            "summarize --format json --chart PNG",
            [*summarize, "--format", "json", "--chart", str(chart)],
        ),
        "help": Runs("hami-summary --help", [*tool, "--help"]),
        "prometheus_client": Runs(
            "python: prometheus_client parse only",
            [sys.executable, "-c", PROMETHEUS_CLIENT_PARSE, str(path)],
        ),
        "floor": Runs(
            "python: one re.findall (floor)", [sys.executable, "-c", FLOOR_FINDALL, str(path)]
        ),
    }


def run_rounds(runs: dict[str, Runs], repeat: int) -> None:
    env = child_environment()
    for one in runs.values():  # warm-up: bytecode written, files in the page cache
        measure(one.command, env)
    for _ in range(repeat):
        for one in runs.values():  # interleaved: every command sees the same load
            cpu, wall, peak = measure(one.command, env)
            one.cpu.append(cpu)
            one.wall.append(wall)
            one.peak_mb.append(peak)


def report(runs: dict[str, Runs], repeat: int) -> bool:
    print(f"\n{'process':<40} {'CPU s':>7} {'wall s':>7} {'peak MB':>8}  (median of {repeat})")
    for one in runs.values():
        print(
            f"{one.label:<40} {one.median_cpu:7.3f} {one.median_wall:7.3f} {one.max_peak_mb:8.0f}"
        )
    print()
    reference = runs["prometheus_client"].median_cpu
    floor = runs["floor"].median_cpu
    verdicts = []
    for key in ("json", "text"):
        one = runs[key]
        faster = reference / one.median_cpu
        over_floor = one.median_cpu / floor
        verdicts += [
            verdict(
                faster >= TARGET_VS_PROMETHEUS_CLIENT,
                f"{one.label}: {faster:.1f}x less CPU than prometheus_client "
                f"(target >= {TARGET_VS_PROMETHEUS_CLIENT:g}x)",
            ),
            verdict(
                over_floor <= TARGET_VS_FLOOR,
                f"{one.label}: {over_floor:.2f}x the floor's CPU (target <= {TARGET_VS_FLOOR:g}x)",
            ),
            verdict(
                one.max_peak_mb <= TARGET_PEAK_MB,
                f"{one.label}: peak {one.max_peak_mb:.0f} MB (target <= {TARGET_PEAK_MB:g} MB)",
            ),
        ]
    added_cpu = runs["chart"].median_cpu - runs["json"].median_cpu
    added_wall = runs["chart"].median_wall - runs["json"].median_wall
    verdicts.append(
        verdict(
            added_cpu <= TARGET_CHART_ADDED_S,
            f"--chart adds {added_cpu:.2f} s CPU ({added_wall:.2f} s wall) "
            f"(target <= {TARGET_CHART_ADDED_S:g} s)",
        )
    )
    return all(verdicts)


def verdict(ok: bool, message: str) -> bool:
    print(f"{'PASS' if ok else 'FAIL'} {message}")
    return ok


def write_exposition(path: Path, nodes: int, gpus_per_node: int, seed: int) -> None:
    """The simulated exposition, written by ``hami-summary simulate`` in its own process.

    On Linux a child's peak RSS starts from its parent's at fork, so this process keeps no
    exposition text or simulator in memory: the peaks measured are the children's own.
    """
    size = [f"--nodes={nodes}", f"--gpus-per-node={gpus_per_node}", f"--seed={seed}"]
    done = subprocess.run(
        [*hami_summary(), "simulate", *size, "--output", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        sys.exit(f"hami-summary simulate failed: {done.stderr}")
    samples = done.stderr.split()[1]  # "wrote N samples to PATH"
    print(
        f"input: simulator {nodes} nodes x {gpus_per_node} GPUs, seed {seed}, Go formatting: "
        f"{samples} samples, {path.stat().st_size / 1e6:.1f} MB"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--gpus-per-node", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    print(
        f"machine: {platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}"
    )
    with tempfile.TemporaryDirectory(prefix="hami-bench-") as folder:
        path = Path(folder) / "scheduler.prom"
        write_exposition(path, args.nodes, args.gpus_per_node, args.seed)
        runs = commands(path, Path(folder) / "chart.png")
        run_rounds(runs, args.repeat)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0 if report(runs, args.repeat) else 1


if __name__ == "__main__":
    sys.exit(main())
