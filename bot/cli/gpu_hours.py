"""``hami-summary gpu-hours``: GPU-hours per namespace over a directory of exports.

Each file is one HAMi scheduler ``/metrics`` export of the same cluster; its modification time
is when it was taken (as for ``changes``). The report ends at the newest export and reaches
back ``--since`` (24h by default). Time between two exports further apart than the gap limit
(1.5x their usual spacing, or ``--max-gap``) is said, not counted.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

from bot.cli.changes import snapshot_of_file
from bot.cli.input_limit import add_max_input_option
from bot.cli.summarize import UsageProblem
from bot.config import summary_settings
from core.history.gpu_hours import GAP_FACTOR, default_max_gap, usage_report
from core.settings import SettingsError
from core.views.gpu_hours_view import render_csv, render_text

FORMATS = ("text", "csv")
_SPAN = re.compile(r"([0-9]{1,6}+)(m|min|h|d)")
_SPAN_UNITS = {"m": 60, "min": 60, "h": 3600, "d": 86_400}
MAX_SPAN_SECONDS = 400 * 86_400


def _span(raw: str) -> float:
    match = _SPAN.fullmatch(raw.strip().lower())
    seconds = int(match.group(1)) * _SPAN_UNITS[match.group(2)] if match else 0
    if not 0 < seconds <= MAX_SPAN_SECONDS:
        raise argparse.ArgumentTypeError(
            f"must be minutes, hours or days up to 400 days (e.g. 90m, 24h, 7d, 30d), got {raw!r}"
        )
    return float(seconds)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "gpu-hours",
        help="GPU-hours per namespace over a directory of /metrics exports",
        description="GPU-hours (allocated cores / 100 x hours) and GPU memory GiB-hours per "
        "namespace, and per pod for one namespace, from exports of one cluster's scheduler "
        "/metrics taken over time (each file's modification time is when it was taken).",
    )
    parser.add_argument(
        "paths", nargs="+", metavar="DIR|FILE", help="a directory of exports, or the files"
    )
    parser.add_argument(
        "--since", type=_span, default=86_400.0, metavar="SPAN", help="24h (default), 7d, 30d"
    )
    parser.add_argument("--ns", default=None, metavar="NAMESPACE", help="also per pod of this one")
    parser.add_argument("--format", choices=FORMATS, default="text")
    parser.add_argument(
        "--max-gap",
        type=_span,
        default=None,
        metavar="SPAN",
        help=f"count no time between exports further apart (default {GAP_FACTOR:g}x their "
        "usual spacing)",
    )
    parser.add_argument("--top", type=int, default=15, help="rows shown per table (default 15)")
    parser.add_argument(
        "--settings", metavar="YAML", default=None, help="settings file (or $HAMI_SUMMARY_SETTINGS)"
    )
    add_max_input_option(parser)
    parser.set_defaults(run=run)


def _files(paths: list[str]) -> list[str]:
    found: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            entries = sorted(e.path for e in os.scandir(path) if e.is_file())
            if not entries:
                raise UsageProblem(f"{path} holds no files; give a directory of /metrics exports.")
            found += entries
        elif os.path.isfile(path):
            found.append(path)
        else:
            raise UsageProblem(f"{path} is neither a file nor a directory.")
    return found


def run(args: argparse.Namespace) -> int:
    try:
        if args.top < 1:
            raise UsageProblem(f"--top must be 1 or more; got {args.top}.")
        settings = summary_settings(args.settings, max_input_mib=args.max_input_mib)
        now = time.time()
        snapshots = [snapshot_of_file(file, settings, now) for file in _files(args.paths)]
    except (UsageProblem, SettingsError) as problem:
        print(f"hami-summary gpu-hours: {problem}", file=sys.stderr)
        return 2
    if len(snapshots) < 2:
        print(
            "hami-summary gpu-hours: one export measures no time; give two or more taken "
            "at different times.",
            file=sys.stderr,
        )
        return 2
    until = max(s.taken_at for s in snapshots)
    max_gap = args.max_gap if args.max_gap is not None else default_max_gap(snapshots)
    report = usage_report(
        snapshots,
        since=until - args.since,
        until=until,
        max_gap_seconds=max_gap,
        namespace=args.ns,
    )
    subject = ", ".join(Path(p).name or p for p in args.paths)
    if args.format == "csv":
        sys.stdout.write(render_csv(report))
    else:
        sys.stdout.write(render_text(report, subject=subject, top=args.top))
    return 0
