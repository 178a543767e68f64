"""``hami-summary why FILE|-`` or ``why NAMESPACE/POD --kubeconfig F --context C``: why is this
pod pending? From a saved ``kubectl describe pod``, or from the cluster (the pod, its events and
the scheduler's metrics for the check against the allocation)."""

from __future__ import annotations

import argparse
import sys

from bot.cli.input_limit import add_max_input_option
from bot.cli.live_pods import add_cluster_options, connect, deadline, live_summary
from bot.cli.summarize import UsageProblem, read_input
from bot.clusters.errors import CollectionError
from bot.clusters.pending_pods import read_pod_story_input
from bot.config import summary_settings
from core.api import summarize_text
from core.errors import InputError
from core.model import Summary
from core.pending.describe import PodDescription, looks_like_pod_text, read_pod_text
from core.pending.story import pod_story
from core.settings import SettingsError
from core.text_decoding import decode_metrics_bytes
from core.views.why_view import why_json, why_text
from core.visible_text import visible_lines

# A describe output is a few KiB; a namespace's event list can reach a few MiB.
MAX_POD_TEXT_BYTES = 8 * 1024 * 1024

EPILOG = """\
examples:
  kubectl describe pod -n ml trainer-0 > trainer.txt
  hami-summary why trainer.txt
  kubectl describe pod -n ml trainer-0 | hami-summary why - --metrics metrics.prom
  kubectl get events -n ml --field-selector involvedObject.name=trainer-0 | hami-summary why -
  hami-summary why ml/trainer-0 --kubeconfig ~/.kube/config --context prod
With --metrics (or --example), each of HAMi's reasons is checked against that allocation; from a
cluster, against the scheduler's metrics read now.
"""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "why",
        help="why a pod is pending: its HAMi reasons checked against now",
        description="Why is this pod pending? Reads a `kubectl describe pod` output (or `kubectl "
        "get events`), names HAMi's reasons in plain words and, given the metrics, checks each "
        "against the allocation now.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "file",
        metavar="FILE|-|NAMESPACE/POD",
        help="describe output, - for stdin, or a pod with --kubeconfig and --context",
    )
    parser.add_argument("--metrics", metavar="FILE", default=None, help="HAMi /metrics text")
    parser.add_argument(
        "--example", action="store_true", help="check against the bundled example cluster"
    )
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument(
        "--split-count",
        type=int,
        default=None,
        metavar="N",
        help="HAMi's deviceSplitCount (not in the metrics; HAMi's default 10 is assumed)",
    )
    parser.add_argument(
        "--settings", metavar="YAML", default=None, help="settings file (or $HAMI_SUMMARY_SETTINGS)"
    )
    add_cluster_options(parser, required=False)
    parser.add_argument(
        "--namespace", default=None, metavar="NS", help="the pod's namespace (or NAMESPACE/POD)"
    )
    add_max_input_option(parser)
    parser.set_defaults(run=run)


def _pod_text(file: str) -> str:
    try:
        if file == "-":
            data = sys.stdin.buffer.read(MAX_POD_TEXT_BYTES + 1)
        else:
            with open(file, "rb") as handle:
                data = handle.read(MAX_POD_TEXT_BYTES + 1)
    except OSError as err:
        raise UsageProblem(f"cannot read {file}: {err.strerror or err}.") from err
    if len(data) > MAX_POD_TEXT_BYTES:
        raise UsageProblem(
            f"{file} is over {MAX_POD_TEXT_BYTES // (1024 * 1024)} MiB: give one pod's "
            "`kubectl describe pod` output."
        )
    text = decode_metrics_bytes(data)
    if not looks_like_pod_text(text):
        raise UsageProblem(
            f"{file} is not a `kubectl describe pod` output nor an event list (no Name: line "
            "with an Events: section, no FilteringFailed or FailedScheduling event)."
        )
    return text


def _pod_ref(args: argparse.Namespace) -> tuple[str, str]:
    namespace, slash, name = args.file.rpartition("/")
    namespace = namespace if slash else (args.namespace or "")
    if not namespace or not name or "/" in namespace:
        raise UsageProblem(
            f"give the pod as NAMESPACE/POD, or POD with --namespace (got {args.file!r})."
        )
    return namespace, name


def _live(args: argparse.Namespace) -> tuple[PodDescription, Summary | None, str | None]:
    if args.kubeconfig is None or args.context is None:
        raise UsageProblem("a pod from a cluster needs both --kubeconfig and --context.")
    if args.metrics is not None or args.example:
        raise UsageProblem("--metrics and --example are for a saved describe output.")
    namespace, name = _pod_ref(args)
    api, target = connect(args.kubeconfig, args.context)
    pod = read_pod_story_input(api, target, namespace, name, deadline(args))
    summary, why_not = live_summary(args)
    return pod, summary, why_not


def run(args: argparse.Namespace) -> int:
    why_not: str | None = None
    try:
        if args.split_count is not None and args.split_count < 1:
            raise UsageProblem(f"--split-count must be 1 or more (got {args.split_count}).")
        summary: Summary | None = None
        if args.kubeconfig is not None or args.context is not None:
            pod, summary, why_not = _live(args)
        else:
            pod = read_pod_text(_pod_text(args.file))
        if args.metrics is not None or args.example:
            settings = summary_settings(args.settings, max_input_mib=args.max_input_mib)
            text, source = read_input(args.metrics, args.example, settings.limits.max_input_bytes)
            summary = summarize_text(text, source, settings=settings)
    except (InputError, UsageProblem, SettingsError, CollectionError) as problem:
        message = (
            problem.message if isinstance(problem, InputError | CollectionError) else str(problem)
        )
        print(visible_lines(f"hami-summary why: {message}"), file=sys.stderr)
        return 2
    story = pod_story(
        pod,
        summary,
        source=summary.source.label if summary is not None else None,
        split_count=args.split_count,
    )
    sys.stdout.write(why_json(story) if args.format == "json" else why_text(story))
    if why_not is not None:
        print(
            visible_lines(f"note: not checked against the allocation: {why_not}"), file=sys.stderr
        )
    return 0
