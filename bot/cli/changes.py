"""``hami-summary changes OLD NEW``: what changed between two exports of a cluster's metrics.

Both files are read like ``summarize`` reads its input (size limit, gzip, encodings), each
summary is reduced to a snapshot taken at the file's modification time, and the differences are
printed on one screen (``--format text``) or in full (``--format json``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from bot.cli.input_limit import add_max_input_option
from bot.cli.summarize import UsageProblem, read_input
from bot.config import summary_settings
from core.api import summarize_text
from core.errors import InputError
from core.history.changes import compare
from core.history.snapshot import Snapshot, snapshot_of, summary_time
from core.settings import Settings, SettingsError
from core.views.changes_view import TOP_ROWS, changes_to_json, render_text

FORMATS = ("text", "json")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "changes",
        help="what changed between two HAMi /metrics exports of one cluster",
        description="Compare two HAMi scheduler /metrics exports of one cluster (older first): "
        "namespaces that grew or shrank, pods that started or stopped holding GPUs, nodes that "
        "appeared or disappeared, free whole GPUs per model, GPUs that became inconsistent and "
        "quota thresholds crossed. Each file's time is its modification time.",
    )
    parser.add_argument("old", metavar="OLD_FILE", help="the earlier metrics file")
    parser.add_argument("new", metavar="NEW_FILE", help="the later metrics file (or - for stdin)")
    parser.add_argument("--format", choices=FORMATS, default="text")
    parser.add_argument(
        "--top",
        type=int,
        default=TOP_ROWS,
        help=f"rows shown per list in the text format (default {TOP_ROWS})",
    )
    parser.add_argument(
        "--settings",
        metavar="YAML",
        default=None,
        help="thresholds and limits to use instead of the defaults (or $HAMI_SUMMARY_SETTINGS)",
    )
    add_max_input_option(parser)
    parser.set_defaults(run=run)


def snapshot_of_file(file: str, settings: Settings, now: float) -> Snapshot:
    """The snapshot of one export, taken when the file was last modified (``now`` for stdin);
    ``UsageProblem`` naming the file when it cannot be summarised."""
    try:
        text, source = read_input(file, False, settings.limits.max_input_bytes)
        summary = summarize_text(text, source, settings=settings)
    except (InputError, UsageProblem) as problem:
        message = problem.message if isinstance(problem, InputError) else str(problem)
        where = "standard input" if file == "-" else file
        raise UsageProblem(message if where in message else f"{where}: {message}") from None
    taken_at = summary_time(summary)
    return snapshot_of(summary, taken_at if taken_at is not None else now)


def run(args: argparse.Namespace) -> int:
    try:
        if args.top < 1:
            raise UsageProblem(f"--top must be 1 or more; got {args.top}.")
        if args.old == "-":
            raise UsageProblem("OLD_FILE must be a file; only NEW_FILE may be - (stdin).")
        settings = summary_settings(args.settings, max_input_mib=args.max_input_mib)
        now = time.time()
        before = snapshot_of_file(args.old, settings, now)
        after = snapshot_of_file(args.new, settings, now)
    except (UsageProblem, SettingsError) as problem:
        print(f"hami-summary changes: {problem}", file=sys.stderr)
        return 2
    changes = compare(before, after)
    if args.format == "json":
        sys.stdout.write(json.dumps(changes_to_json(changes), indent=2, allow_nan=False) + "\n")
    else:
        subject = f"{_name(args.old)} -> {_name(args.new)}"
        sys.stdout.write(render_text(changes, top=args.top, subject=subject))
    return 0


def _name(file: str) -> str:
    return "standard input" if file == "-" else Path(file).name
