"""Why pods are pending: ``/hami-summary <cluster> pending [ns=NS]`` and ``why POD``, the same
words as thread follow-ups, and a pasted ``kubectl describe pod`` (or ``kubectl get events``).

Pods and events come from the cluster's API (``LiveSource.pending_pods`` / ``pod``) within the
registry's access rules; HAMi's reasons are checked against the summary a summary would show
(the cached scrape), or against the metrics a thread holds when the pod was pasted.
"""

from __future__ import annotations

from datetime import UTC, datetime

from bot.conversation.clusters import LiveRequest
from bot.conversation.context import Context
from bot.conversation.fit import short_name
from bot.conversation.parsing import ClusterCommand, FollowUp, PodRef
from bot.conversation.replies import Attachment, MessageReply, Reply, SummaryRef, problem_reply
from bot.conversation.rich import Aside, Fixed, Line, Rich, Strong
from bot.conversation.summary import resolve_cluster, summary_for
from bot.conversation.thread_filter import thread_filter
from bot.store.state import ClusterTarget
from core.errors import InputError
from core.model import Summary
from core.pending.describe import PodDescription, read_pod_text
from core.pending.pending_list import PendingList, pending_list
from core.pending.story import PodStory, pod_story
from core.views.pending_view import group_lines, headline, pending_text, pod_rows, pod_table_lines
from core.views.why_view import why_text

SLACK_PODS = 10  # the longest waiting shown in the message; every pod is in the file
POD_WIDTH = 34  # the pod column of the table, so a row stays within a laptop's code block
PENDING_FILE = "hami-pending.txt"

NO_PODS_FOR_PASTED = MessageReply(
    title="Pending pods come from a registered cluster",
    text=(
        "This thread has pasted metrics, which say nothing of pods waiting to be placed. Ask "
        "`/hami-summary <cluster> pending` for a registered cluster, or paste a pending pod's "
        "`kubectl describe pod` output here: I check its reasons against these metrics."
    ),
)


def pending_reply(found: PendingList) -> MessageReply:
    """One screen at any size: counts per reason, the longest waiting, the rest in a file."""
    if not found.pods:
        return MessageReply(headline(found), title="Nothing pending on HAMi")
    shown = found.pods[:SLACK_PODS]
    lines: list[Line] = [*group_lines(found)]
    lines.append(Strong(f"Longest waiting ({len(shown):,} of {len(found.pods):,}):"))
    rows = pod_rows(shown, lambda name: short_name(name, POD_WIDTH))
    lines.append(Fixed("\n".join(pod_table_lines(rows))))
    attachments: tuple[Attachment, ...] = ()
    more = len(found.pods) - len(shown)
    if more > 0:
        lines.append(f"… and {more:,} more: every pod is in `{PENDING_FILE}` below.")
        whole = pending_text(found, top=len(found.pods))
        attachments = (
            Attachment(PENDING_FILE, "Every pending pod", lambda: whole.encode("utf-8")),
        )
    lines.append(Aside("One pod's whole story: `why NAMESPACE/POD`."))
    return MessageReply(Rich(tuple(lines)), title=headline(found), attachments=attachments)


def why_reply(story: PodStory, note: str | None = None) -> MessageReply:
    """One pod's story: the first line of ``why_text`` is the title, headings stand out."""
    title, *body = why_text(story).rstrip("\n").split("\n")
    lines: list[Line] = [
        Strong(line) if line.startswith("Checked against") else line for line in body
    ]
    if note is not None:
        lines.append(Aside(note))
    return MessageReply(Rich(tuple(lines)), title=title)


def _stories(pods: tuple[PodDescription, ...]) -> list[PodStory]:
    return [pod_story(pod) for pod in pods]


def _where(cluster: str, namespace: str | None) -> str:
    return f"cluster {cluster}" + (f", namespace {namespace}" if namespace else "")


def _pending(
    ctx: Context, target: ClusterTarget, namespace: str | None, user: str | None, channel: str
) -> MessageReply:
    request = LiveRequest(target.cluster, target.context, user, channel, namespace=namespace)
    pods = ctx.live.pending_pods(request)
    # Waits are measured against the API's timestamps, so on the wall clock.
    now = datetime.now(UTC)
    found = pending_list(_stories(pods), where=_where(target.cluster, namespace), now=now)
    return pending_reply(found)


def _checked(
    ctx: Context, pod: PodDescription, ref: SummaryRef, user: str | None, channel: str, fresh: bool
) -> MessageReply:
    """``pod``'s story checked against the summary ``ref`` points at; told without the check
    (and why) when that summary cannot be had."""
    summary: Summary | None = None
    note: str | None = None
    try:
        summary = summary_for(ctx, ref, user=user, channel=channel, fresh=fresh).summary
    except InputError as error:
        note = f"Not checked against the allocation: {error.message}"
    source = summary.source.label if summary is not None else None
    return why_reply(pod_story(pod, summary, source=source), note)


def _why(
    ctx: Context, target: ClusterTarget, pod: PodRef, user: str | None, channel: str, fresh: bool
) -> MessageReply:
    request = LiveRequest(target.cluster, target.context, user, channel, namespace=pod.namespace)
    described = ctx.live.pod(request, pod.name)
    plain_target = ClusterTarget(target.cluster, target.context)
    return _checked(ctx, described, SummaryRef(cluster=plain_target), user, channel, fresh)


def cluster_pods(
    ctx: Context, command: ClusterCommand, *, user: str | None, channel: str
) -> MessageReply:
    """``/hami-summary <cluster> pending [ns=NS]`` or ``<cluster> why POD``."""
    option, context = resolve_cluster(ctx, command, user=user, channel=channel)
    target = ClusterTarget(option.name, context)
    if command.why is not None:
        return _why(ctx, target, command.why, user, channel, command.fresh)
    return _pending(ctx, target, command.namespace, user, channel)


def pods_in_thread(
    ctx: Context, asked: FollowUp, *, channel: str, thread_ts: str, user: str | None
) -> Reply:
    """``pending`` or ``why POD`` in a thread: of the thread's cluster (``pending`` within the
    namespace the thread keeps, unless ``ns`` names another)."""
    subject = ctx.state.thread_subject(channel, thread_ts)
    if not isinstance(subject, ClusterTarget):
        return NO_PODS_FOR_PASTED
    try:
        if asked.pod is not None:
            pod = asked.pod
            if pod.namespace is None and asked.namespace is not None:
                pod = PodRef(pod.name, asked.namespace)
            return _why(ctx, subject, pod, user, channel, fresh=False)
        namespace = asked.namespace or thread_filter(ctx.state, channel, thread_ts).namespace
        return _pending(ctx, subject, namespace, user, channel)
    except InputError as error:
        return problem_reply(error)


def pasted_pod(ctx: Context, text: str, *, channel: str, thread_ts: str, user: str | None) -> Reply:
    """A pasted describe output or event list: its story, checked against the thread's
    metrics or cluster when it has some."""
    pod = read_pod_text(text)
    if ctx.state.thread_subject(channel, thread_ts) is None:
        return why_reply(
            pod_story(pod),
            "Not checked against the allocation: this thread has no metrics. Paste the "
            "scheduler's /metrics here (or ask `/hami-summary <cluster>`), then the pod again.",
        )
    ref = SummaryRef(channel=channel, thread_ts=thread_ts)
    return _checked(ctx, pod, ref, user, channel, fresh=False)


def remember_pods_thread(
    ctx: Context,
    command: ClusterCommand,
    reply: Reply,
    *,
    user: str | None,
    channel: str,
    thread_ts: str,
) -> None:
    """The thread of a ``pending`` or ``why`` answer asks about that cluster from then on
    (``why POD`` after ``pending``), unless it already has a subject."""
    answered = isinstance(reply, MessageReply) and reply.tone != "problem"
    if not answered or ctx.state.thread_subject(channel, thread_ts) is not None:
        return
    try:
        option, context = resolve_cluster(ctx, command, user=user, channel=channel)
    except InputError:
        return
    ctx.state.remember_thread(channel, thread_ts, ClusterTarget(option.name, context))
