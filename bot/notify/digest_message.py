"""A digest's messages: the summary the bot answers with, then what changed and the charts.

The summary is whatever ``/hami-summary <cluster>`` answers (``Conversation.run``
and ``bot.slack.messages.slack_message``), with one line on top naming the digest (and saying
when it is late). Its thread gets the changes since the previous digest of the same
declaration (kept with it, so "since the previous digest" is exact whatever the history kept)
and the files: the allocation chart, the trend chart over the kept history, and any table the
message could not hold.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from bot.conversation.changes import pods_attachment, trend_attachment
from bot.conversation.clusters import LiveRequest, LiveSource
from bot.conversation.intents import Plan
from bot.conversation.parsing import ClusterCommand
from bot.conversation.replies import (
    Attachment,
    ChangesSection,
    MessageReply,
    SummaryReply,
    TableReply,
)
from bot.conversation.service import Conversation
from bot.slack.messages import SlackMessage, slack_message
from core.history.changes import compare
from core.history.snapshot import Snapshot, snapshot_of, summary_time
from core.notify.schedule import Digest, Slot, local_clock
from core.views.changes_view import WIDTH, span_text, stamp

MAX_BLOCKS = 50
CHANGES_FILE = "hami-digest-changes.txt"


@dataclass(frozen=True, slots=True)
class DigestPost:
    top: SlackMessage
    thread: tuple[SlackMessage, ...]
    files: tuple[Attachment, ...]
    snapshot: Snapshot | None  # kept for the next digest's changes


def digest_line(cluster: str, digest: Digest, slot: Slot, late_at: float | None) -> str:
    """The line on top of a digest; a late one says when it was due and when it is posted."""
    kind = "GPU-hours digest" if digest.report == "gpu-hours" else "Digest"
    line = f":calendar: *{kind}* of *{cluster}* ({digest.describe()})"
    if late_at is not None:
        line += (
            f"\n:warning: *Late*: due at {local_clock(digest.schedule, slot.due_at)}, posted at "
            f"{local_clock(digest.schedule, late_at)}, when the bot could post it."
        )
    return line


def _with_line(line: str, message: SlackMessage, fallback: str) -> SlackMessage:
    """``message`` with ``line`` on top. Both are encoded once, each by its own
    ``SlackMessage``; joining them must not encode ``message`` again (``&lt;`` would show as
    such), so the joined blocks are set the way ``SlackMessage`` sets its own."""
    head = SlackMessage([{"type": "section", "text": {"type": "mrkdwn", "text": line}}], fallback)
    body = message.blocks
    if len(body) >= MAX_BLOCKS:  # keep the last block (the buttons) within Slack's 50
        body = [*body[: MAX_BLOCKS - 2], body[-1]]
    object.__setattr__(head, "blocks", [*head.blocks, *body])
    object.__setattr__(head, "text", f"{head.text}: {message.text}")
    return head


def _changes(
    cluster: str, previous: Snapshot | None, current: Snapshot
) -> MessageReply | TableReply:
    if previous is None or previous.taken_at >= current.taken_at:
        return MessageReply(
            "This is the first digest of this declaration I have kept: the next one says what "
            "changed since this one.",
            title=f"Changes in cluster {cluster}",
        )
    changes = compare(previous, current)
    span = span_text(current.taken_at - previous.taken_at)
    title = (
        f"Changes in cluster {cluster} since the previous digest "
        f"({stamp(previous.taken_at)}, {span} earlier)"
    )
    # Shown in a code block as wide as the terminal's; its rows are the lines laid out.
    return TableReply(
        title,
        (ChangesSection(changes),),
        CHANGES_FILE,
        None,
        WIDTH,
        attachments=pods_attachment(changes),
    )


def compose_digest(
    conversation: Conversation,
    live: LiveSource,
    cluster: str,
    digest: Digest,
    slot: Slot,
    *,
    previous: Snapshot | None,
    late_at: float | None,
) -> DigestPost:
    """Collect the cluster (through the shared cache) and lay out its digest; a GPU-hours
    digest is the ``gpu-hours`` report over its span instead (nothing is collected)."""
    line = digest_line(cluster, digest, slot, late_at)
    fallback = f"Digest of {cluster}" + (" (late)" if late_at is not None else "")
    if digest.report == "gpu-hours":
        return _gpu_hours_digest(conversation, cluster, digest, line, fallback)
    command = ClusterCommand(cluster=cluster, context=digest.context)
    # The bot itself asks (user None): no rate limit, and the registry names the channel.
    reply = conversation.run(Plan(command, None, digest.channel))
    if not isinstance(reply, SummaryReply):
        return DigestPost(_with_line(line, slack_message(reply), fallback), (), (), None)
    taken_at = summary_time(reply.summary)
    if taken_at is None:  # a live collection always has its time
        raise ValueError("a live collection without its time")
    current = snapshot_of(reply.summary, taken_at)
    top = slack_message(replace(reply, attachments=()))
    changes = slack_message(_changes(cluster, previous, current))
    request = LiveRequest(cluster, digest.context, user=None, channel=digest.channel)
    trend = trend_attachment(cluster, lambda: live.kept_snapshots(request))
    files = (*reply.attachments, *top.attachments, *changes.attachments, trend)
    return DigestPost(_with_line(line, top, fallback), (changes,), files, current)


def _gpu_hours_digest(
    conversation: Conversation, cluster: str, digest: Digest, line: str, fallback: str
) -> DigestPost:
    """The GPU-hours report of the digest's span, with its CSV and text files."""
    command = ClusterCommand(
        cluster=cluster,
        context=digest.context,
        gpu_hours=True,
        since_seconds=digest.span_seconds,
    )
    reply = conversation.run(Plan(command, None, digest.channel))
    if not isinstance(reply, TableReply):
        return DigestPost(_with_line(line, slack_message(reply), fallback), (), (), None)
    top = slack_message(replace(reply, attachments=()))
    files = (*reply.attachments, *top.attachments)
    return DigestPost(_with_line(line, top, fallback), (), files, None)
