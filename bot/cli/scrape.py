"""``hami-summary scrape``: a live summary of one cluster through the Kubernetes API.

The kubeconfig file and context are always given explicitly; nothing is guessed. Every cluster
problem (unreachable, TLS, expired credentials, RBAC, HAMi missing, no endpoints, a body that
is not HAMi metrics) is one message on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bot.cli.input_limit import add_max_input_option
from bot.cli.summarize import UsageProblem, format_summary, left_out_warnings, write_chart
from bot.clusters.collect import collect_from_kubeconfig
from bot.clusters.errors import CollectionError
from bot.config import summary_settings
from core.api import summarize_text
from core.errors import InputError
from core.settings import SettingsError
from core.visible_text import visible_lines

FORMATS = ("text", "markdown", "json", "csv")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "scrape",
        help="summarise a live cluster through the Kubernetes API",
        description="Find HAMi by label, read the scheduler's /metrics through the API "
        "server's proxy (no port-forward) and print the summary.",
    )
    parser.add_argument(
        "--kubeconfig",
        type=Path,
        required=True,
        metavar="FILE",
        help="kubeconfig file (see: hami-summary clusters)",
    )
    parser.add_argument("--context", required=True, metavar="NAME", help="context to use")
    parser.add_argument(
        "--namespace",
        default=None,
        metavar="HAMI_NS",
        help="namespace HAMi runs in (default: search every namespace)",
    )
    parser.add_argument(
        "--runtime", action="store_true", help="also scrape each vGPU monitor (runtime usage)"
    )
    parser.add_argument(
        "--nvidia-smi",
        action="store_true",
        help="also exec nvidia-smi in pods with allocations (needs pods/exec)",
    )
    parser.add_argument("--format", choices=FORMATS, default="text")
    parser.add_argument(
        "--chart",
        default=None,
        metavar="PNG",
        help="also write the allocation chart to this PNG file",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="time budget of the scheduler scrape (default 10)",
    )
    add_max_input_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.timeout <= 0:
        print("hami-summary scrape: --timeout must be more than 0 seconds.", file=sys.stderr)
        return 2
    try:
        settings = summary_settings(max_input_mib=args.max_input_mib)
    except SettingsError as problem:
        print(f"hami-summary scrape: {problem}", file=sys.stderr)
        return 2
    try:
        collected = collect_from_kubeconfig(
            args.kubeconfig,
            args.context,
            namespace=args.namespace,
            runtime=args.runtime,
            nvidia_smi=args.nvidia_smi,
            timeout_seconds=args.timeout,
            max_bytes=settings.limits.max_input_bytes,
        )
        summary = summarize_text(
            collected.text,
            collected.source,
            monitor_texts=collected.monitor_texts,
            missing_monitors=collected.missing_monitors,
            real_usage=collected.real_usage,
            settings=settings,
        )
        sys.stdout.write(format_summary(summary, args.format, None, settings.limits.top_rows))
        if args.chart is not None:
            write_chart(summary, args.chart)
    except CollectionError as problem:
        print(visible_lines(f"hami-summary scrape: {problem.message}"), file=sys.stderr)
        return 2
    except InputError as problem:
        print(
            visible_lines(
                f'hami-summary scrape (context "{args.context}"): the scraped metrics cannot '
                f"be summarised: {problem.message}"
            ),
            file=sys.stderr,
        )
        return 2
    except UsageProblem as problem:
        print(visible_lines(f"hami-summary scrape: {problem}"), file=sys.stderr)
        return 2
    for note in collected.notes:
        print(visible_lines(f"note: {note}"), file=sys.stderr)
    for warning in left_out_warnings(summary):
        where = f'hami-summary scrape (context "{args.context}")'
        print(visible_lines(f"{where}: warning: {warning}"), file=sys.stderr)
    return 0
