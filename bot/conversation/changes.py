"""``changes``: what changed in a cluster since a kept snapshot, or since a thread's last paste.

For a registered cluster the current (cached or fresh) collection is compared with the kept
snapshot of ``since`` ago (``bot.store.history``). In a thread of pasted metrics, a newer paste
keeps the snapshot of the one it replaced, so ``changes`` there compares the two pastes and the
summary of the newer paste says in one line what changed.
"""

from __future__ import annotations

from collections.abc import Callable

from bot.conversation.clusters import LiveRequest, LiveSource
from bot.conversation.context import Context
from bot.conversation.formatting import CODE_BLOCK_WIDTH
from bot.conversation.help import no_metrics_reply
from bot.conversation.parsing import DEFAULT_SINCE_SECONDS, ClusterCommand, FollowUp
from bot.conversation.replies import (
    Attachment,
    ChangesSection,
    MessageReply,
    Reply,
    TableReply,
    problem_reply,
)
from bot.conversation.summary import resolve_cluster
from bot.store.state import BotState, ClusterTarget, PastedMetrics
from core.errors import InputError
from core.history.changes import Changes, compare
from core.history.snapshot import (
    Snapshot,
    SnapshotFormatError,
    decode_snapshot,
    encode_snapshot,
    snapshot_of,
    summary_time,
)
from core.model import Summary
from core.views.changes_view import TOP_ROWS, WIDTH, pods_csv, signed, span_text, stamp

CHANGES_FILE = "hami-changes.txt"
TREND_FILE = "hami-trend.png"
PODS_FILE = "hami-changes-pods.csv"
# A kept snapshot this close to the asked moment is "that long ago" (snapshots are 10 min apart).
SNAPSHOT_SLACK_SECONDS = 600.0


def _rows(changes: Changes) -> int:
    return (
        len(changes.namespaces)
        + len(changes.pods_started)
        + len(changes.pods_stopped)
        + len(changes.models)
    )


def cluster_changes(
    live: LiveSource,
    target: ClusterTarget,
    since_seconds: float | None,
    *,
    user: str | None,
    channel: str | None,
) -> TableReply | MessageReply:
    """The cluster now (through the scrape cache) against its snapshot of ``since`` ago.

    Raises ``InputError`` when the cluster may not be queried or cannot be collected.
    """
    request = LiveRequest(target.cluster, target.context, user=user, channel=channel)
    result = live.summarize(request)
    taken_at = summary_time(result.summary)
    if taken_at is None:  # a live collection always has its time; never guess one
        raise ValueError("a live collection without its time")
    current = snapshot_of(result.summary, taken_at)
    since = since_seconds if since_seconds is not None else DEFAULT_SINCE_SECONDS
    wanted = taken_at - since
    before = live.snapshot_before(request, wanted)
    if before is None or before.taken_at >= current.taken_at:
        return MessageReply(
            f"I keep no earlier snapshot of cluster {target.cluster} yet. A snapshot is kept "
            "each time the cluster is asked about, at most every 10 minutes; ask for "
            "`changes` again later.",
            title="No history to compare with yet",
        )
    changes = compare(before, current)
    title = _cluster_title(target.cluster, before.taken_at, current.taken_at, wanted, since)
    series = sum(count for _, count in result.summary.input.families)
    chart = trend_attachment(target.cluster, lambda: live.kept_snapshots(request, series))
    return TableReply(
        title,
        (ChangesSection(changes),),
        CHANGES_FILE,
        _rows(changes),
        WIDTH,
        attachments=(*pods_attachment(changes), chart),
        screen_width=CODE_BLOCK_WIDTH,
    )


def pods_attachment(changes: Changes) -> tuple[Attachment, ...]:
    """Every pod that started or stopped holding GPUs as CSV, when the text shows only some."""
    if max(len(changes.pods_started), len(changes.pods_stopped)) <= TOP_ROWS:
        return ()
    total = len(changes.pods_started) + len(changes.pods_stopped)
    text = pods_csv(changes)
    return (
        Attachment(
            PODS_FILE,
            f"All {total:,} pods that started or stopped holding GPUs (CSV)",
            lambda: text.encode("utf-8"),
        ),
    )


def _cluster_title(
    cluster: str, before_at: float, now_at: float, wanted: float, since: float
) -> str:
    """Says when the compared snapshot was taken, and why when that is not ``since`` ago:
    the history is shorter, or nobody asked about the cluster around that time."""
    title = (
        f"Changes in cluster {cluster} since {stamp(before_at)} "
        f"({span_text(now_at - before_at)} ago"
    )
    if before_at > wanted + SNAPSHOT_SLACK_SECONDS:
        return title + f"; the oldest snapshot kept, you asked for {span_text(since)})"
    if before_at < wanted - SNAPSHOT_SLACK_SECONDS:
        return title + f"; the newest snapshot kept from before {span_text(since)} ago)"
    return title + ")"


def trend_attachment(cluster: str, snapshots: Callable[[], list[Snapshot]]) -> Attachment:
    """The trend chart over the kept history, read and drawn only when the file is sent."""

    def render() -> bytes:
        from core.views.trend_chart import render_trend_chart

        return render_trend_chart(snapshots())

    return Attachment(
        TREND_FILE,
        f"Allocation per namespace and free whole GPUs per model, cluster {cluster}",
        render,
    )


def keep_previous_paste(
    state: BotState,
    channel: str,
    thread_ts: str,
    previous: PastedMetrics,
    summarize: Callable[[PastedMetrics], Summary],
) -> Snapshot:
    """Keep the snapshot of the paste a newer one replaces (dated when it was given) for
    ``changes`` in the thread; ``InputError`` when that paste cannot be summarised."""
    snapshot = snapshot_of(summarize(previous), previous.given_at)
    state.remember_previous_snapshot(channel, thread_ts, encode_snapshot(snapshot))
    return snapshot


def previous_paste(state: BotState, channel: str, thread_ts: str) -> Snapshot | None:
    data = state.previous_snapshot(channel, thread_ts)
    if data is None:
        return None
    try:
        return decode_snapshot(data)
    except SnapshotFormatError:
        return None  # written by another release: as if there were none


def paste_changes(before: Snapshot, current: Snapshot) -> TableReply:
    changes = compare(before, current)
    title = f"Changes since the previous paste (given {stamp(before.taken_at)})"
    subject = "the previous paste -> this one"
    return TableReply(
        title,
        (ChangesSection(changes, subject),),
        CHANGES_FILE,
        _rows(changes),
        WIDTH,
        attachments=pods_attachment(changes),
        screen_width=CODE_BLOCK_WIDTH,
    )


NO_PREVIOUS_PASTE = MessageReply(
    "This thread has had one paste of metrics so far. Paste or attach newer metrics of the same "
    "cluster here, then ask `changes` for what changed between the two.",
    title="Nothing to compare with yet",
    tone="problem",
)


def changes_headline(before: Snapshot, current: Snapshot) -> str:
    """One line for the summary of a newer paste: what changed since the previous one."""
    changes = compare(before, current)
    a, b = changes.totals_before, changes.totals_after
    span = span_text(current.taken_at - before.taken_at)
    if not changes.allocation_changed:
        return f"Since the previous paste ({span} earlier) nothing changed in the allocation."
    return (
        f"Since the previous paste ({span} earlier): cores allocated "
        f"{signed(b.core_allocated - a.core_allocated)}, "
        f"{len(changes.pods_started):,} pod(s) started and {len(changes.pods_stopped):,} "
        f"stopped holding GPUs, free whole GPUs {a.free_whole_gpus} -> {b.free_whole_gpus}. "
        "Ask `changes` here for the details."
    )


def command_changes(
    ctx: Context, command: ClusterCommand, *, user: str | None, channel: str | None
) -> TableReply | MessageReply:
    """``/hami-summary <cluster> changes [since=..]``; ``InputError`` when it cannot be asked."""
    option, context = resolve_cluster(ctx, command, user=user, channel=channel)
    target = ClusterTarget(option.name, context)
    return cluster_changes(ctx.live, target, command.since_seconds, user=user, channel=channel)


def thread_changes(
    ctx: Context, follow_up: FollowUp, *, channel: str, thread_ts: str, user: str | None
) -> Reply:
    """``changes`` in a thread: since ``since`` for a cluster, else since the last paste."""
    subject = ctx.state.thread_subject(channel, thread_ts)
    if subject is None:
        return no_metrics_reply()
    try:
        if isinstance(subject, ClusterTarget):
            return cluster_changes(
                ctx.live, subject, follow_up.since_seconds, user=user, channel=channel
            )
        if follow_up.since_seconds is not None:
            raise InputError(
                "since= is for threads of a registered cluster; here `changes` compares "
                "the last two pastes."
            )
        before = previous_paste(ctx.state, channel, thread_ts)
        if before is None:
            return NO_PREVIOUS_PASTE
        summary = ctx.summarize_pasted(subject)
        return paste_changes(before, snapshot_of(summary, subject.given_at))
    except InputError as error:
        return problem_reply(error)
