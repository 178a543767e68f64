"""``hami-summary simulate``: the ``/metrics`` text of a simulated HAMi scheduler.

Writes one exposition to stdout or a file, or serves it over HTTP at ``/metrics`` (optionally
drifting over time) for demos, tests and benchmarks.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bot.demo_exporter import start_demo_exporter
from core.simulate import MAX_GPUS_PER_NODE, MAX_NODES, simulate_exposition
from core.simulate.exposition import REPLICA_STATES

EXIT_OK = 0
EXIT_USAGE = 2


class UsageProblem(Exception):
    """Something the user can fix (exit code 2); the message says what and how."""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "simulate",
        help="write or serve the /metrics text of a simulated HAMi scheduler",
        description="Write the /metrics text of a simulated HAMi scheduler (Go client "
        "formatting, current names by default), or serve it over HTTP at /metrics. The same "
        "--seed always gives the same cluster.",
    )
    parser.add_argument("--nodes", type=int, required=True, help=f"GPU nodes (1-{MAX_NODES})")
    parser.add_argument(
        "--gpus-per-node", type=int, required=True, help=f"GPUs per node (1-{MAX_GPUS_PER_NODE})"
    )
    surface = parser.add_mutually_exclusive_group()
    surface.add_argument(
        "--legacy", action="store_true", help="legacy metric names only (older HAMi schedulers)"
    )
    surface.add_argument(
        "--both",
        action="store_true",
        help="current and legacy names, as a scheduler with --legacy-metrics=true",
    )
    parser.add_argument(
        "--replica",
        choices=tuple(REPLICA_STATES),
        default=None,
        help="add the replica's own gauges as HAMi after v2.10 writes them "
        "(hami_scheduler_is_leader, hami_scheduler_cache_synced)",
    )
    parser.add_argument(
        "--outcomes",
        action="store_true",
        help="add the allocation outcome counters as HAMi after v2.10 writes them "
        "(hami_scheduler_allocations_total and the failure, rollback and reservation counters; "
        "they grow with each drift step)",
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument(
        "--step", type=int, default=0, help="drift steps after the initial state (default 0)"
    )
    parser.add_argument("--output", type=Path, default=None, help="write to FILE, not stdout")
    parser.add_argument(
        "--serve", type=int, default=None, metavar="PORT", help="serve /metrics on PORT (0: any)"
    )
    parser.add_argument("--host", default="127.0.0.1", help="with --serve (default 127.0.0.1)")
    parser.add_argument(
        "--drift-seconds",
        type=float,
        default=None,
        metavar="S",
        help="with --serve: move the cluster one drift step every S seconds",
    )
    parser.set_defaults(run=run)


def _validate(args: argparse.Namespace) -> None:
    if not 1 <= args.nodes <= MAX_NODES:
        raise UsageProblem(f"--nodes must be between 1 and {MAX_NODES}; got {args.nodes}.")
    if not 1 <= args.gpus_per_node <= MAX_GPUS_PER_NODE:
        raise UsageProblem(
            f"--gpus-per-node must be between 1 and {MAX_GPUS_PER_NODE}; got {args.gpus_per_node}."
        )
    if args.step < 0:
        raise UsageProblem(f"--step must be 0 or more; got {args.step}.")
    if args.serve is None:
        if args.drift_seconds is not None:
            raise UsageProblem("--drift-seconds only applies with --serve PORT.")
        return
    if args.output is not None:
        raise UsageProblem("choose --output FILE or --serve PORT, not both.")
    if args.step:
        raise UsageProblem("--step does not apply with --serve; use --drift-seconds instead.")
    if not 0 <= args.serve <= 65535:
        raise UsageProblem(f"--serve needs a port from 0 to 65535; got {args.serve}.")
    if args.drift_seconds is not None and not args.drift_seconds > 0:
        raise UsageProblem(f"--drift-seconds must be more than 0; got {args.drift_seconds}.")


def _write(args: argparse.Namespace) -> int:
    text = simulate_exposition(
        args.nodes,
        args.gpus_per_node,
        seed=args.seed,
        legacy=args.legacy,
        both=args.both,
        t=args.step,
        replica=args.replica,
        outcomes=args.outcomes,
    )
    if args.output is None:
        sys.stdout.write(text)
        return EXIT_OK
    try:
        args.output.write_text(text, encoding="utf-8")
    except OSError as err:
        raise UsageProblem(
            f"cannot write {args.output}: {err.strerror or err}. Check that the folder exists "
            "and is writable."
        ) from err
    samples = sum(1 for line in text.splitlines() if line and not line.startswith("#"))
    print(f"wrote {samples} samples to {args.output}", file=sys.stderr)
    return EXIT_OK


def _serve(args: argparse.Namespace) -> int:
    try:
        exporter = start_demo_exporter(
            args.host,
            args.serve,
            args.nodes,
            args.gpus_per_node,
            args.seed,
            args.drift_seconds,
            legacy=args.legacy,
            both=args.both,
            replica=args.replica,
            outcomes=args.outcomes,
        )
    except OSError as err:
        raise UsageProblem(
            f"cannot listen on {args.host}:{args.serve}: {err.strerror or err}. Pick another "
            "--serve port (0 picks a free one) or another --host."
        ) from err
    drift = f", one drift step every {args.drift_seconds:g} s" if args.drift_seconds else ", static"
    # The banner is printed inside the try: Ctrl-C may come as soon as it is read.
    try:
        print(
            f"serving a simulated HAMi scheduler ({args.nodes} nodes x {args.gpus_per_node} GPUs, "
            f"seed {args.seed}{drift}) at {exporter.url}; Ctrl-C stops it",
            file=sys.stderr,
            flush=True,
        )
        exporter.wait()
    except KeyboardInterrupt:
        pass
    finally:
        exporter.stop()
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    try:
        _validate(args)
        return _serve(args) if args.serve is not None else _write(args)
    except UsageProblem as problem:
        print(f"hami-summary simulate: {problem}", file=sys.stderr)
        return EXIT_USAGE
