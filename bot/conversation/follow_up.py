"""Follow-ups: words typed in a thread about its summary (``ns team-a``, ``gpus``, ``csv``,
``changes``, ``usage``, ``help`` ...; ``parsing.parse_follow_up`` reads them).

A thread keeps its filter (``thread_filter``): ``ns team-a`` then ``gpus`` shows team-a's GPUs.
Words that are neither metrics nor a follow-up are told what the thread has and what to ask.
"""

from __future__ import annotations

from dataclasses import replace

from bot.conversation.changes import thread_changes
from bot.conversation.context import Context
from bot.conversation.gpu_hours import thread_gpu_hours
from bot.conversation.help import follow_up_help_reply, no_metrics_reply, not_understood_reply
from bot.conversation.parsing import ADMIN_USAGE, FollowUp, FollowUpAction
from bot.conversation.pending import pods_in_thread
from bot.conversation.replies import MessageReply, Reply, SummaryRef, problem_reply
from bot.conversation.summary import NO_USAGE_FOR_PASTED, answer
from bot.conversation.thread_filter import (
    ThreadFilter,
    filter_for_follow_up,
    remember_thread_filter,
    thread_filter,
    whole_cluster_note,
)
from bot.store.state import ClusterTarget
from core.command_errors import failed_fetch_error
from core.summary.input_notes import HOW_TO_GET_METRICS


def follow_up(
    ctx: Context, asked: FollowUp, *, channel: str, thread_ts: str, user: str | None
) -> Reply:
    """The answer to ``asked`` in the thread; a filter it names is kept once it answered."""
    if asked.action == "help":
        return follow_up_help_reply()
    if asked.action in ("pending", "why"):
        return pods_in_thread(ctx, asked, channel=channel, thread_ts=thread_ts, user=user)
    kept = thread_filter(ctx.state, channel, thread_ts)
    if asked.action == "changes":
        changes = thread_changes(ctx, asked, channel=channel, thread_ts=thread_ts, user=user)
        return whole_cluster_note(changes, kept)
    if asked.action == "gpu-hours":
        return thread_gpu_hours(ctx, asked, channel=channel, thread_ts=thread_ts, user=user)
    chosen = filter_for_follow_up(kept, asked.namespace, asked.node, asked.clear)
    reply = _filtered(ctx, asked, chosen, channel=channel, thread_ts=thread_ts, user=user)
    if chosen != kept and not isinstance(reply, MessageReply):
        # Kept once it answered: a mistyped name (or a thread without metrics) leaves the
        # filter as it was.
        remember_thread_filter(ctx.state, channel, thread_ts, chosen)
    return reply


def _filtered(
    ctx: Context,
    asked: FollowUp,
    chosen: ThreadFilter,
    *,
    channel: str,
    thread_ts: str,
    user: str | None,
) -> Reply:
    subject = ctx.state.thread_subject(channel, thread_ts)
    if subject is None:
        return no_metrics_reply()
    cluster: ClusterTarget | None = None
    if isinstance(subject, ClusterTarget):
        # A thread about a real-usage summary keeps it in every follow-up (from the cached
        # nvidia-smi readings; ``refresh`` reads again); ``usage`` adds it from now on.
        cluster = replace(subject, usage=True) if asked.action == "usage" else subject
    elif asked.action == "usage":
        return NO_USAGE_FOR_PASTED
    ref = SummaryRef(
        channel=channel,
        thread_ts=thread_ts,
        cluster=cluster,
        namespace=chosen.namespace,
        node=chosen.node,
    )
    action: FollowUpAction = "summary" if asked.action == "usage" else asked.action
    return answer(ctx, ref, action, user=user, channel=channel)


def not_understood(
    ctx: Context, body: str, *, channel: str, thread_ts: str, user: str | None
) -> MessageReply:
    """Words that are neither metrics nor a follow-up. Only a thread without metrics gets
    "none I remember"; one with metrics is told what it has and what to ask."""
    if body.split()[0].lower() == "admin":
        # A thread is seen by everyone in it; the admin report is shown only to its reader.
        return MessageReply(
            "The admin report is shown only to the person who asks: use "
            f"`{ADMIN_USAGE}` outside a thread (Slack does not run slash commands in "
            "threads). It is for the Slack users listed in HAMI_SUMMARY_ADMINS.",
            title="Ask for the admin report with the slash command",
        )
    # A failed kubectl or curl pasted instead of its output: say what failed.
    failed = failed_fetch_error(body, HOW_TO_GET_METRICS)
    if failed is not None:
        return problem_reply(failed)
    subject = ctx.state.thread_subject(channel, thread_ts)
    if subject is None:
        return no_metrics_reply()
    if isinstance(subject, ClusterTarget):
        option = next(
            (o for o in ctx.live.clusters_for(user, channel) if o.name == subject.cluster),
            None,
        )
        return not_understood_reply(
            body,
            subject,
            age_seconds=None,
            usage_allowed=option is not None and option.nvidia_smi_allowed,
        )
    return not_understood_reply(
        body, subject, age_seconds=max(0.0, ctx.state.now() - subject.given_at)
    )
