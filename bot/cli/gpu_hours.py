"""``hami-summary gpu-hours``: GPU-hours per namespace over a directory of exports, or over
what a Prometheus holds.

Each file is one HAMi scheduler ``/metrics`` export of the same cluster; its modification time
is when it was taken (as for ``changes``). The report ends at the newest export and reaches
back ``--since`` (24h by default). Time between two exports further apart than the gap limit
(1.5x their usual spacing, or ``--max-gap``) is said, not counted.

With ``--prometheus URL`` the report ends now and its states come from range queries at a step
chosen from the span (``bot.clusters.prometheus_history.usage_step``); the gap limit is 1.5
steps (a step with no scheduler series in Prometheus leaves a gap).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

from bot.cli.changes import snapshot_of_file
from bot.cli.input_limit import add_max_input_option
from bot.cli.summarize import UsageProblem
from bot.clusters.errors import ClusterError
from bot.clusters.prometheus_history import PrometheusHistory
from bot.clusters.registry import ClusterEntry, selector_problem
from bot.clusters.url_display import display_url
from bot.config import summary_settings
from core.history.gpu_hours import GAP_FACTOR, default_max_gap, usage_report
from core.history.snapshot import Snapshot
from core.settings import Settings, SettingsError
from core.views.gpu_hours_view import render_csv, render_text

FORMATS = ("text", "csv")
_SPAN = re.compile(r"([0-9]{1,6}+)(m|min|h|d)")
_SPAN_UNITS = {"m": 60, "min": 60, "h": 3600, "d": 86_400}
MAX_SPAN_SECONDS = 400 * 86_400
# A report reads up to 200 states, each summarised: more than one live scrape's budget.
PROMETHEUS_TIMEOUT_SECONDS = 60.0


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
        "paths", nargs="*", metavar="DIR|FILE", help="a directory of exports, or the files"
    )
    parser.add_argument(
        "--prometheus",
        metavar="URL",
        default=None,
        help="read the history from this Prometheus (range queries) instead of files",
    )
    parser.add_argument(
        "--selector",
        metavar="MATCHERS",
        default=None,
        help='with --prometheus: label matchers of the cluster\'s series, e.g. cluster="prod"',
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=PROMETHEUS_TIMEOUT_SECONDS,
        metavar="SECONDS",
        help="with --prometheus: time budget of all its queries (default "
        f"{PROMETHEUS_TIMEOUT_SECONDS:g})",
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


def _source_problem(args: argparse.Namespace) -> str | None:
    """Why the arguments name no single source, or None."""
    if args.prometheus is None:
        if args.selector is not None:
            return "--selector needs --prometheus URL."
        return None if args.paths else "give a directory of exports, or --prometheus URL."
    if args.paths:
        return "give either exports or --prometheus URL, not both."
    parsed = urlparse(args.prometheus)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        return "--prometheus must be an http(s) URL, e.g. http://prometheus.monitoring:9090"
    if args.selector is not None:
        problem = selector_problem(args.selector)
        if problem is not None:
            return f"--selector: {problem}"
    if not args.timeout > 0:
        return f"--timeout must be more than 0 seconds; got {args.timeout:g}."
    return None


def _from_prometheus(
    args: argparse.Namespace, settings: Settings, now: float
) -> tuple[list[Snapshot], float]:
    """The states of the span and the gap limit (1.5 steps); ``CollectionError``."""
    entry = ClusterEntry(
        name="prometheus",
        display_name=display_url(args.prometheus),
        source_kind="prometheus",
        prometheus_url=args.prometheus,
        prometheus_selector=args.selector,
    )
    history = PrometheusHistory(
        entry, settings=settings, timeout_seconds=args.timeout, label="the --prometheus URL"
    )
    states, step = history.usage_snapshots(now - args.since, now)
    return states, GAP_FACTOR * step


def run(args: argparse.Namespace) -> int:
    try:
        if args.top < 1:
            raise UsageProblem(f"--top must be 1 or more; got {args.top}.")
        problem = _source_problem(args)
        if problem is not None:
            raise UsageProblem(problem)
        settings = summary_settings(args.settings, max_input_mib=args.max_input_mib)
        now = time.time()
        if args.prometheus is not None:
            snapshots, default_gap = _from_prometheus(args, settings, now)
            until = now
        else:
            snapshots = [snapshot_of_file(file, settings, now) for file in _files(args.paths)]
            default_gap = default_max_gap(snapshots)
            until = max((s.taken_at for s in snapshots), default=now)
    except (UsageProblem, SettingsError) as problem:
        print(f"hami-summary gpu-hours: {problem}", file=sys.stderr)
        return 2
    except ClusterError as error:
        print(f"hami-summary gpu-hours: {error.message}", file=sys.stderr)
        return 1
    if len(snapshots) < 2:
        where = (
            "Prometheus holds fewer than two states of the scheduler in this span; ask for a "
            "longer one, or check --selector."
            if args.prometheus is not None
            else "one export measures no time; give two or more taken at different times."
        )
        print(f"hami-summary gpu-hours: {where}", file=sys.stderr)
        return 2
    report = usage_report(
        snapshots,
        since=until - args.since,
        until=until,
        max_gap_seconds=args.max_gap if args.max_gap is not None else default_gap,
        namespace=args.ns,
        prices=settings.prices,
    )
    if args.prometheus is not None:
        subject = display_url(args.prometheus) + (f" {{{args.selector}}}" if args.selector else "")
    else:
        subject = ", ".join(Path(p).name or p for p in args.paths)
    if args.format == "csv":
        sys.stdout.write(render_csv(report))
    else:
        sys.stdout.write(render_text(report, subject=subject, top=args.top))
    return 0
