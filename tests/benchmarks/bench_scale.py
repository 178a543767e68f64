"""Benchmark: the whole ``hami-summary summarize`` process at 1,000 and at 10,000 nodes.

Run from the repository root:

    .venv/bin/python tests/benchmarks/bench_scale.py [--gpus-per-node 8] [--repeat 3]

A 10,000-node cluster's scheduler page (8 GPUs and about 9 pods a node: about 150 MB) is the
largest the default input limit is made for. The simulator writes both pages (Go client
formatting, same seed); each is summarised ``--repeat`` times as a separate process, in
interleaved rounds, with ``--format json`` (every GPU, pod and allocation is written) and
``--format blocks`` (the first Slack reply).

It prints the CPU time (user + system, from ``wait4``; the median and the lowest of the runs:
the lowest is the run least disturbed by the machine's other work), the wall time and the peak
resident memory, the 10,000-node CPU as a multiple of a reference process measured in the same
rounds (one ``re.findall`` over the page, as in ``bench_command.py``: on a slower or busier
machine both grow), and PASS/FAIL against the targets:

- 10,000 nodes, json: under 4 s CPU (lowest run) and under 1 GiB peak;
- cost no faster than linear: CPU at 10,000 nodes at most 10x the CPU at 1,000 (medians);
- the JSON documents have the same structure (keys and value types) at both sizes;
- the first Slack reply is one screen at both sizes: the same blocks, no more characters
  than 10 % over the 1,000-node reply.

Exits 1 if any target fails.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench_command import (
    FLOOR_FINDALL,
    Runs,
    child_environment,
    hami_summary,
    measure,
    verdict,
    write_exposition,
)

SIZES = (1000, 10000)
TARGET_CPU_S = 4.0
TARGET_PEAK_MB = 1024.0
LINEAR = 10.0  # the ratio of the sizes


def shape(value: Any) -> Any:
    """The structure of a JSON value: keys and value types, one element for a list."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        shapes = {json.dumps(shape(item), sort_keys=True) for item in value}
        return sorted(shapes)[:1] if len(shapes) <= 1 else ["mixed"]
    if value is None:
        return "null-or-any"
    return type(value).__name__


def same_shape(small: Any, large: Any) -> bool:
    """Whether two shapes agree, a null on one side matching anything on the other."""
    if small == "null-or-any" or large == "null-or-any":
        return True
    if isinstance(small, dict) and isinstance(large, dict):
        return small.keys() == large.keys() and all(same_shape(small[k], large[k]) for k in small)
    if isinstance(small, list) and isinstance(large, list):
        return not small or not large or same_shape(small[0], large[0])
    return bool(small == large) or {small, large} <= {"int", "float"}


def output_of(command: list[str], env: dict[str, str]) -> str:
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        sys.exit(f"`{' '.join(command)}` failed (exit {done.returncode}):\n{done.stderr}")
    return done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gpus-per-node", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(
        f"machine: {platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}"
    )
    env = child_environment()
    tool = hami_summary()
    with tempfile.TemporaryDirectory(prefix="hami-bench-scale-") as folder:
        paths = {nodes: Path(folder) / f"scheduler-{nodes}.prom" for nodes in SIZES}
        for nodes, path in paths.items():
            write_exposition(path, nodes, args.gpus_per_node, args.seed)
        runs = {
            nodes: Runs(
                f"{nodes:,} nodes: summarize --format json",
                [*tool, "summarize", str(path), "--format", "json"],
            )
            for nodes, path in paths.items()
        }
        floor = Runs(
            f"{SIZES[-1]:,} nodes: one re.findall (floor)",
            [sys.executable, "-c", FLOOR_FINDALL, str(paths[SIZES[-1]])],
        )
        for _ in range(args.repeat):
            for one in [*runs.values(), floor]:
                cpu, wall, peak = measure(one.command, env)
                one.cpu.append(cpu)
                one.wall.append(wall)
                one.peak_mb.append(peak)
        # After the runs: on Linux a child's peak RSS starts from its parent's at fork.
        shapes = {
            nodes: shape(json.loads(output_of(one.command, env))) for nodes, one in runs.items()
        }
        replies = {
            nodes: json.loads(output_of([*tool, "summarize", str(path), "--format", "blocks"], env))
            for nodes, path in paths.items()
        }
    print(f"load average after: {os.getloadavg()[0]:.2f}\n")
    header = f"{'process':<40} {'CPU s':>7} {'lowest':>7} {'wall s':>7} {'peak MB':>8}"
    print(f"{header}  (median of {args.repeat})")
    for one in [*runs.values(), floor]:
        print(
            f"{one.label:<40} {one.median_cpu:7.2f} {min(one.cpu):7.2f} {one.median_wall:7.2f} "
            f"{one.max_peak_mb:8.0f}"
        )
    small, large = runs[SIZES[0]], runs[SIZES[-1]]
    growth = large.median_cpu / small.median_cpu
    memory_growth = large.max_peak_mb / small.max_peak_mb
    print(f"\n10x the nodes: {growth:.2f}x the CPU, {memory_growth:.2f}x the peak memory")
    print(
        f"{large.label}: {min(large.cpu) / min(floor.cpu):.2f}x the floor's CPU "
        "(lowest runs; the same ratio on another machine compares with this one)\n"
    )
    reply_sizes = {nodes: len(json.dumps(reply)) for nodes, reply in replies.items()}
    block_kinds = {
        nodes: [b.get("type") for b in reply["blocks"]] for nodes, reply in replies.items()
    }
    verdicts = [
        verdict(
            min(large.cpu) < TARGET_CPU_S,
            f"{large.label}: {min(large.cpu):.2f} s CPU, lowest of {args.repeat} "
            f"(target < {TARGET_CPU_S:g} s)",
        ),
        verdict(
            large.max_peak_mb < TARGET_PEAK_MB,
            f"{large.label}: peak {large.max_peak_mb:.0f} MB (target < {TARGET_PEAK_MB:g} MB)",
        ),
        verdict(growth <= LINEAR, f"CPU grows {growth:.2f}x for 10x the nodes (target <= 10x)"),
        verdict(
            same_shape(shapes[SIZES[0]], shapes[SIZES[-1]]),
            "--format json: the same structure at 1,000 and 10,000 nodes",
        ),
        verdict(
            block_kinds[SIZES[0]] == block_kinds[SIZES[-1]]
            and reply_sizes[SIZES[-1]] <= 1.1 * reply_sizes[SIZES[0]],
            f"first Slack reply: {len(block_kinds[SIZES[-1]])} blocks, "
            f"{reply_sizes[SIZES[-1]]:,} characters at 10,000 nodes "
            f"({len(block_kinds[SIZES[0]])} blocks, {reply_sizes[SIZES[0]]:,} at 1,000)",
        ),
    ]
    return 0 if all(verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
