"""Messages: a mention or DM (metrics pasted or attached, ``fit SHAPE``, a follow-up, or
other words), and the message shortcut "Summarize HAMi metrics" on a message.

New metrics become the thread's subject: ``run`` summarises them within the sender's
allowance, and a newer paste in the same thread keeps the previous one for ``changes``.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.conversation.attachments import chart_attachment
from bot.conversation.changes import changes_headline, keep_previous_paste
from bot.conversation.context import Context
from bot.conversation.fit_words import fit_follow_up
from bot.conversation.follow_up import not_understood
from bot.conversation.intents import Ack, GivenFile, MessageIntent, Plan, ShortcutIntent, ThreadWork
from bot.conversation.parsing import (
    FollowUp,
    looks_like_metrics,
    parse_follow_up,
    strip_code_fences,
)
from bot.conversation.replies import MessageReply, Reply, SummaryRef, SummaryReply, problem_reply
from bot.conversation.thread_filter import NO_FILTER, remember_thread_filter
from bot.store.ratelimit import rate_limit_message
from bot.store.state import PastedKind, PastedMetrics
from core.errors import InputError
from core.history.snapshot import snapshot_of
from core.model import Summary
from core.pending.describe import looks_like_pod_text

NO_METRICS_IN_MESSAGE = MessageReply(
    title="No metrics in that message",
    text=(
        "The message you picked has no HAMi metrics text or .prom/.txt file. Use the "
        "shortcut on a message that contains the scheduler's `/metrics` output."
    ),
    tone="problem",
)


def pasted(
    ctx: Context, body: str, files: Sequence[GivenFile]
) -> PastedMetrics | MessageReply | None:
    """The metrics a message brings (its text, its readable files), why its files could not
    be read, or None: no metrics."""
    texts = [f.text for f in files if f.text is not None]
    names = [f.name for f in files if f.text is not None]
    if body and looks_like_metrics(body):
        texts.append(body)
    if not texts:
        problems = [f"{f.name}: {f.problem}" for f in files if f.problem]
        if problems:
            return MessageReply(
                title="I could not read the attached file",
                text="\n".join(problems),
                tone="problem",
            )
        return None
    label = ", ".join(names) if names else "pasted metrics"
    kind: PastedKind = "file" if names else "paste"
    return PastedMetrics(text="\n".join(texts), label=label, kind=kind, given_at=ctx.state.now())


def handle_message(ctx: Context, intent: MessageIntent) -> Ack:
    """A mention or DM: new metrics, a fit, a follow-up, or words answered at once. An
    acknowledgement without reply or plan: stay silent (another bot without metrics)."""
    body = intent.text.strip()
    pod_text = _pod_text(body, intent.files)
    if pod_text is not None and not intent.from_bot:
        return _thread_ack(ThreadWork(intent.thread_ts, pod_text=pod_text), intent)
    given = pasted(ctx, body, intent.files)
    if isinstance(given, PastedMetrics):
        return _metrics_ack(ctx, given, intent)
    if intent.from_bot:
        # Other bots are answered only when they bring metrics: two bots must not keep
        # each other talking.
        return Ack()
    if given is not None:
        return Ack(given)
    try:
        shape = fit_follow_up(body)
        follow_up = parse_follow_up(body) if shape is None else None
    except InputError as error:
        return Ack(problem_reply(error))
    thread = intent.thread_ts
    if shape is not None:
        return _thread_ack(ThreadWork(thread, fit=shape), intent)
    if follow_up is None:
        if body:
            return Ack(
                not_understood(
                    ctx, body, channel=intent.channel, thread_ts=thread, user=intent.user
                )
            )
        follow_up = FollowUp()
    return _thread_ack(ThreadWork(thread, follow_up=follow_up), intent)


def _pod_text(body: str, files: Sequence[GivenFile]) -> str | None:
    """A pasted or attached ``kubectl describe pod`` / ``kubectl get events``, checked before
    metrics: its ``Priority:  0`` lines have the shape of samples."""
    for text in (strip_code_fences(body), *(f.text for f in files if f.text is not None)):
        if looks_like_pod_text(text):
            return text
    return None


def handle_shortcut(ctx: Context, intent: ShortcutIntent) -> Ack:
    """The message shortcut "Summarize HAMi metrics" on a message."""
    given = pasted(ctx, intent.text.strip(), intent.files)
    if given is None:
        return Ack(NO_METRICS_IN_MESSAGE)
    if isinstance(given, MessageReply):
        return Ack(given)
    return _metrics_ack(ctx, given, intent)


def _metrics_ack(ctx: Context, given: PastedMetrics, intent: MessageIntent | ShortcutIntent) -> Ack:
    """New metrics: summarised by ``run`` within the sender's allowance."""
    if ctx.paste_limit is not None and intent.user is not None:
        decision = ctx.paste_limit.check(intent.user)
        if not decision.allowed:
            return Ack(problem_reply(InputError(rate_limit_message(decision))))
    return _thread_ack(ThreadWork(intent.thread_ts, metrics=given), intent)


def _thread_ack(work: ThreadWork, intent: MessageIntent | ShortcutIntent) -> Ack:
    shown_in = intent.shown_in if isinstance(intent, MessageIntent) else None
    return Ack(plan=Plan(work, intent.user, intent.channel, also_in=shown_in))


def new_metrics(ctx: Context, given: PastedMetrics, *, channel: str, thread_ts: str) -> Reply:
    """The summary of metrics just given, which the thread's follow-ups then ask about."""
    ref = SummaryRef(channel=channel, thread_ts=thread_ts)
    try:
        summary = ctx.summarize_pasted(given)
    except InputError as error:
        return problem_reply(error)
    notes: tuple[str, ...] = ()
    previous = ctx.state.thread_subject(channel, thread_ts)
    if isinstance(previous, PastedMetrics):
        notes += _compare_with_previous(ctx, previous, given, summary, channel, thread_ts)
    # New metrics start unfiltered: a filter may name what they no longer have.
    remember_thread_filter(ctx.state, channel, thread_ts, NO_FILTER)
    if not ctx.state.remember_thread(channel, thread_ts, given):
        notes = (
            "These metrics are too large to keep for follow-ups in this thread; paste or "
            "attach them again to ask more.",
        )
    return SummaryReply(summary, ref, None, attachments=(chart_attachment(summary),), notes=notes)


def _compare_with_previous(
    ctx: Context,
    previous: PastedMetrics,
    given: PastedMetrics,
    summary: Summary,
    channel: str,
    thread_ts: str,
) -> tuple[str, ...]:
    """A newer paste in a thread: keep the previous one's snapshot for ``changes`` and say
    in one line what changed (nothing when the previous paste cannot be summarised)."""
    try:
        before = keep_previous_paste(
            ctx.state, channel, thread_ts, previous, lambda p: ctx.summarize_pasted(p)
        )
    except InputError:
        return ()
    return (changes_headline(before, snapshot_of(summary, given.given_at)),)
