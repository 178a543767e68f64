"""A press of a button under a summary, read once: which follow-up it asks, of which summary,
and whether it was pressed where that summary was given.

A summary of pasted metrics carries, in each button's value, the channel and thread the metrics
were given in; the metrics are looked up there. The value is whatever the message held: a
crafted message (or payload) could name another channel's thread and have its pasted workloads
posted here. So the stored channel and thread must be the ones of the message the button sits
under, which the surface reports from its own payload.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from bot.conversation.context import Context
from bot.conversation.parsing import FollowUpAction
from bot.conversation.replies import MessageReply, Reply, SummaryRef, problem_reply
from bot.conversation.summary import NO_USAGE_FOR_PASTED, answer
from bot.store.state import ClusterTarget
from core.errors import InputError

# The thread key of messages outside any thread (the top level of a direct message).
TOP_LEVEL = "top"
# Buttons whose answer replaces the summary they sit under.
IN_PLACE = ("refresh", "usage")

BUTTON_ACTIONS: dict[str, FollowUpAction] = {
    "refresh": "refresh",
    "gpus": "gpus",
    "workloads": "workloads",
    "csv": "csv",
    # "Real usage": the same cluster, context and filters again, with nvidia-smi.
    "usage": "usage",
}

ELSEWHERE = (
    "This button belongs to a summary from another conversation, so I did not act on it. "
    "Use the buttons under the summary itself, or paste the metrics here."
)


@dataclass(frozen=True, slots=True)
class ButtonIntent:
    """``action`` (refresh, usage, gpus, workloads, csv) pressed by ``user`` in ``channel`` with
    the button's ``value``; the message it sits under is in thread ``thread_ts`` (None: at the
    top level) and has its own ``message_ts``."""

    action: str
    value: str
    user: str
    channel: str
    thread_ts: str | None = None
    message_ts: str | None = None


@dataclass(frozen=True, slots=True)
class ButtonPress:
    """A press the conversation accepted: ``ref`` is the summary the value names (None: the
    value could not be read, and ``unreadable`` says so when the answer is given).
    ``in_place``: the answer replaces the summary the button is under."""

    action: str
    ref: SummaryRef | None
    in_place: bool
    unreadable: str | None = None


def _elsewhere(intent: ButtonIntent, ref: SummaryRef) -> bool:
    if ref.channel is not None and ref.channel != intent.channel:
        return True
    if ref.thread_ts is None:
        return False
    if ref.thread_ts == TOP_LEVEL:
        # Pasted at the top of a DM: the summary is a top-level message (its own thread root
        # once someone replies under it).
        return intent.thread_ts not in (None, intent.message_ts)
    return intent.thread_ts != ref.thread_ts


def read_press(intent: ButtonIntent) -> ButtonPress | MessageReply:
    """The press, or why it must be refused (pressed away from its summary). A value that
    cannot be read is explained where the answer would be."""
    in_place = intent.action in IN_PLACE
    try:
        ref = SummaryRef.from_value(intent.value)
    except InputError as error:
        return ButtonPress(intent.action, None, in_place, unreadable=error.message)
    if _elsewhere(intent, ref):
        return MessageReply(ELSEWHERE, "Not here", "problem")
    return ButtonPress(intent.action, ref, in_place)


def press_answer(ctx: Context, press: ButtonPress, *, user: str | None, channel: str) -> Reply:
    """A button under a summary (Refresh, GPUs, Workloads, CSV, Real usage)."""
    follow_action = BUTTON_ACTIONS.get(press.action)
    if follow_action is None:
        return problem_reply(InputError(f"Unknown button '{press.action}'."))
    ref = press.ref
    if ref is None:
        return problem_reply(InputError(press.unreadable or "That button cannot be read."))
    if follow_action == "usage":
        cluster = ref.cluster
        if cluster is None and ref.channel and ref.thread_ts:
            subject = ctx.state.thread_subject(ref.channel, ref.thread_ts)
            cluster = subject if isinstance(subject, ClusterTarget) else None
        if cluster is None:
            return NO_USAGE_FOR_PASTED
        # The same cluster, context and filters, with nvidia-smi: from a cached real-usage
        # collection when there is one (like any other request), else collected now.
        ref = replace(ref, cluster=replace(cluster, usage=True))
        follow_action = "summary"
    return answer(ctx, ref, follow_action, user=user, channel=channel)
