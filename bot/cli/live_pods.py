"""What ``pending`` and ``why`` share when they ask a live cluster: the options and the calls."""

from __future__ import annotations

import argparse
from pathlib import Path

from kubernetes import client as k8s

from bot.clusters.collect import collect_from_kubeconfig
from bot.clusters.deadline import Deadline
from bot.clusters.errors import CollectionError, KubeconfigError
from bot.clusters.kube_client import api_client_for_context
from bot.clusters.kube_errors import Target
from core.api import summarize_text
from core.errors import InputError
from core.model import Summary


def add_cluster_options(parser: argparse.ArgumentParser, *, required: bool) -> None:
    parser.add_argument(
        "--kubeconfig",
        type=Path,
        required=required,
        default=None,
        metavar="FILE",
        help="kubeconfig file (see: hami-summary clusters)",
    )
    parser.add_argument(
        "--context", required=required, default=None, metavar="NAME", help="context to use"
    )
    parser.add_argument(
        "--hami-namespace",
        default=None,
        metavar="NS",
        help="namespace HAMi runs in, for the allocation check (default: search every namespace)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="time budget of each cluster call (default 10)",
    )


def connect(kubeconfig: Path, context: str) -> tuple[k8s.ApiClient, Target]:
    try:
        return api_client_for_context(kubeconfig.expanduser(), context)
    except KubeconfigError as exc:
        raise CollectionError(exc.message) from exc


def live_summary(args: argparse.Namespace) -> tuple[Summary | None, str | None]:
    """The allocation now, for the cross-check; (None, why not) when it cannot be read."""
    try:
        collected = collect_from_kubeconfig(
            args.kubeconfig,
            args.context,
            namespace=args.hami_namespace,
            timeout_seconds=args.timeout,
        )
        return summarize_text(collected.text, collected.source), None
    except CollectionError as problem:
        return None, problem.message
    except InputError as problem:
        return None, f"the scraped metrics cannot be summarised: {problem.message}"


def deadline(args: argparse.Namespace) -> Deadline:
    return Deadline(args.timeout)
