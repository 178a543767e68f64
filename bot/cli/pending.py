"""``hami-summary pending``: the pods of a live cluster pending on HAMi's resources, by reason."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime

from bot.cli.live_pods import add_cluster_options, connect, deadline
from bot.clusters.errors import CollectionError
from bot.clusters.pending_pods import read_pending_pods
from core.pending.pending_list import pending_list
from core.pending.story import pod_story
from core.views.pending_view import pending_json, pending_text
from core.visible_text import visible_lines


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "pending",
        help="pods pending on HAMi's resources, grouped by reason",
        description="List the pods that are Pending and ask for HAMi's resources "
        "(nvidia.com/gpu and the like), grouped by HAMi's reason, longest waiting first.",
    )
    add_cluster_options(parser, required=True)
    parser.add_argument(
        "--namespace", default=None, metavar="NS", help="only this namespace (default: all)"
    )
    parser.add_argument("--top", type=int, default=15, help="text: pods listed (default 15)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.timeout <= 0 or args.top < 1:
        print("hami-summary pending: --timeout and --top must be more than 0.", file=sys.stderr)
        return 2
    try:
        api, target = connect(args.kubeconfig, args.context)
        pods = read_pending_pods(api, target, args.namespace, deadline(args))
    except CollectionError as problem:
        print(visible_lines(f"hami-summary pending: {problem.message}"), file=sys.stderr)
        return 2
    where = f'context "{args.context}"' + (
        f', namespace "{args.namespace}"' if args.namespace else ""
    )
    found = pending_list([pod_story(pod) for pod in pods], where=where, now=datetime.now(UTC))
    sys.stdout.write(
        pending_json(found) if args.format == "json" else pending_text(found, args.top)
    )
    return 0
