"""What a person asked, what the bot says at once, and the work it leaves for after that.

Every surface answers in two phases through ``Conversation``: ``handle(intent)`` parses the
request once, checks access once and returns an ``Ack`` (a reply to show now, and/or a ``Plan``
of the slow part); ``run(plan)`` does the slow part and returns its ``Reply``. Slack shows the
acknowledgement within its 3 s and runs the plan in a lazy listener; the terminal runs it at
once.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.conversation.alert_buttons import SilenceAlert
from bot.conversation.buttons import ButtonPress
from bot.conversation.parsing import Command, FollowUp
from bot.conversation.replies import MessageReply, Reply
from bot.store.state import PastedMetrics
from core.fit_shape import Shape


class AccessPending(Exception):
    """Who may query which cluster is not known yet (its lookups go on in the background).

    Raised by a cluster source while its caller limits how long it may wait; ``handle`` then
    acknowledges with ``CHECKING_ACCESS`` and leaves the decision to the plan.
    """

    def __init__(self, message: str, groups: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.groups = groups


# Said at once when access depends on lookups not finished yet.
CHECKING_ACCESS = MessageReply(
    "Reading the Slack user groups that decide which clusters you may query; "
    "the answer follows here in a moment.",
    title="Checking access…",
)

# Said at once for ``admin check``: asking every API server takes seconds.
CHECKING_KUBECONFIGS = MessageReply(
    "Checking each kubeconfig context's API server with its credentials "
    "(GET /version); the report follows here in a few seconds.",
    title="Admin: checking kubeconfig contexts",
)


@dataclass(frozen=True, slots=True)
class CommandIntent:
    """``/hami-summary <text>`` from ``user`` in ``channel``. ``thread_ts``: the thread its
    answer is shown in when that is known beforehand (the terminal is one thread)."""

    text: str
    user: str | None
    channel: str
    thread_ts: str | None = None


@dataclass(frozen=True, slots=True)
class GivenFile:
    """A file attached to a message: its text, or why it could not be read."""

    name: str
    text: str | None = None
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class MessageIntent:
    """A mention or direct message from ``user`` (a person, or another bot with ``from_bot``).

    ``thread_ts``: the thread its metrics are kept for. ``shown_in``: the thread the answer
    shows in, when that is another one (a DM answered at the top level): a cluster summary
    there becomes what its follow-ups ask about too. ``files``: its attachments, read."""

    text: str
    user: str | None
    channel: str
    thread_ts: str
    files: tuple[GivenFile, ...] = ()
    from_bot: bool = False
    shown_in: str | None = None


@dataclass(frozen=True, slots=True)
class ShortcutIntent:
    """The message shortcut "Summarize HAMi metrics" used by ``user`` on a message whose
    thread is ``thread_ts``: its text and attachments."""

    text: str
    user: str | None
    channel: str
    thread_ts: str
    files: tuple[GivenFile, ...] = ()


@dataclass(frozen=True, slots=True)
class ThreadWork:
    """The slow part of a message or the shortcut, in the thread its metrics are kept for
    (``thread_ts``): new ``metrics`` to summarise, a shape to ``fit``, a pasted pod
    (``pod_text``: a ``kubectl describe pod`` or event list), or a ``follow_up``."""

    thread_ts: str
    metrics: PastedMetrics | None = None
    fit: Shape | None = None
    follow_up: FollowUp | None = None
    pod_text: str | None = None


@dataclass(frozen=True, slots=True)
class Plan:
    """The slow part of a command, decided (or, with ``decided`` False, still to decide) by
    ``handle``.

    ``public``: the answer is for everyone in the channel (Slack posts a "working on it"
    message first); otherwise only the asker sees it. ``thread_ts``: where the answer shows; a
    cluster summary becomes what follow-ups there ask about. Slack fills it in once it has
    posted the working message. ``also_in``: another thread whose follow-ups ask about it too
    (the top level of a direct message, where follow-ups are typed without a thread).
    ``waiting_for``: what an undecided plan waits for (the user groups still being read).
    """

    command: Command | ButtonPress | ThreadWork | SilenceAlert
    user: str | None
    channel: str
    thread_ts: str | None = None
    public: bool = True
    decided: bool = True
    also_in: str | None = None
    waiting_for: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Ack:
    """What to say at once (``reply``, None: nothing) and what follows (``plan``, None:
    nothing; the reply was the whole answer)."""

    reply: Reply | None = None
    plan: Plan | None = None
