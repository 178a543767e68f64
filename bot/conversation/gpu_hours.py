"""``gpu-hours``: GPU-hours per namespace of a registered cluster over its kept history.

The kept snapshots (``bot.store.history``, or Prometheus range queries for a Prometheus source)
are integrated by ``core.history.gpu_hours``: each holds until the next, and time between two
kept snapshots further apart than 1.5x their usual spacing is a gap, said and not counted.
The reply is one screen; the CSV of every row (with the method) comes with it.
"""

from __future__ import annotations

import time

from bot.conversation.clusters import LiveRequest
from bot.conversation.context import Context
from bot.conversation.formatting import CODE_BLOCK_WIDTH
from bot.conversation.help import no_metrics_reply
from bot.conversation.parsing import ClusterCommand, FollowUp
from bot.conversation.replies import (
    Attachment,
    GpuHoursSection,
    MessageReply,
    Reply,
    TableReply,
    problem_reply,
)
from bot.conversation.summary import resolve_cluster
from bot.store.state import ClusterTarget
from core.errors import InputError
from core.history.gpu_hours import GAP_FACTOR, default_max_gap, typical_spacing, usage_report
from core.views.gpu_hours_view import WIDTH, render_csv, title

DEFAULT_SINCE_SECONDS = 86_400.0
CSV_FILE = "hami-gpu-hours.csv"
TEXT_FILE = "hami-gpu-hours.txt"


def command_gpu_hours(
    ctx: Context, command: ClusterCommand, *, user: str | None, channel: str | None
) -> TableReply | MessageReply:
    """``/hami-summary <cluster> gpu-hours [since=..] [ns=..]``; ``InputError`` when the asker
    may not query the cluster here."""
    option, context = resolve_cluster(ctx, command, user=user, channel=channel)
    request = LiveRequest(option.name, context, user=user, channel=channel)
    until = time.time()
    since = until - (command.since_seconds or DEFAULT_SINCE_SECONDS)
    history = ctx.live.usage_history(request, since, until)
    snapshots = history.snapshots
    if typical_spacing(snapshots) is None:
        return MessageReply(
            no_history_text(option.name, history.step_seconds is not None),
            title="No history to count yet",
        )
    step = history.step_seconds
    report = usage_report(
        snapshots,
        since=since,
        until=until,
        max_gap_seconds=GAP_FACTOR * step if step is not None else default_max_gap(snapshots),
        namespace=command.namespace,
        prices=ctx.settings.prices,
        pod_snapshots=history.pod_snapshots,
    )
    csv_text = render_csv(report)
    csv_file = Attachment(
        CSV_FILE,
        f"GPU-hours of every namespace{' and pod' if command.namespace else ''}, "
        f"cluster {option.name} (CSV)",
        lambda: csv_text.encode("utf-8"),
    )
    rows = len(report.namespaces) + len(report.pods)
    return TableReply(
        title(f"cluster {option.name}"),
        (GpuHoursSection(report, option.name),),
        TEXT_FILE,
        rows,
        WIDTH,
        attachments=(csv_file,),
        screen_width=CODE_BLOCK_WIDTH,
    )


def no_history_text(cluster: str, from_prometheus: bool) -> str:
    """Why nothing can be counted: fewer than two states in the period."""
    if from_prometheus:
        return (
            f"Prometheus holds fewer than two states of cluster {cluster} in this period, so "
            "no time can be counted. It may not have scraped the HAMi scheduler then, or its "
            "retention is shorter: ask for a shorter span (since=1h)."
        )
    return (
        f"I keep fewer than two snapshots of cluster {cluster}, so no time can be "
        "counted yet. A snapshot is kept each time the cluster is asked about (by anyone, "
        "or by a digest or an alert), at most every 10 minutes; ask again later."
    )


def thread_gpu_hours(
    ctx: Context, asked: FollowUp, *, channel: str, thread_ts: str, user: str | None
) -> Reply:
    """``gpu-hours [since=..] [ns=..]`` in the thread of a cluster summary."""
    subject = ctx.state.thread_subject(channel, thread_ts)
    if subject is None:
        return no_metrics_reply()
    if not isinstance(subject, ClusterTarget):
        return MessageReply(
            "`gpu-hours` counts the history the bot keeps of a registered cluster; this thread "
            "holds pasted metrics, one moment. For exports taken over time, run `hami-summary "
            "gpu-hours DIR` in a terminal.",
            title="No history in a thread of pasted metrics",
            tone="problem",
        )
    command = ClusterCommand(
        subject.cluster,
        subject.context,
        namespace=asked.namespace,
        since_seconds=asked.since_seconds,
        gpu_hours=True,
    )
    try:
        return command_gpu_hours(ctx, command, user=user, channel=channel)
    except InputError as error:
        return problem_reply(error)
