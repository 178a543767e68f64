"""The shape every slow answer takes: working message, compute, update in place, files.

Handlers call ``answer_in_thread`` from a lazy listener (after ``ack()``), passing a function
that computes the ``Reply`` given the thread it will show in. Problems of commands and
shortcuts go only to the person who asked (ephemeral); problems in conversations (mentions,
DMs) are answered in the thread. Internal errors are logged with an error id and context, and
the person gets an apology with that id.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from slack_bolt import Respond
from slack_sdk import WebClient

from bot.conversation.intents import MessageIntent, ShortcutIntent
from bot.conversation.replies import Reply, internal_error_reply, new_error_id
from bot.conversation.service import Conversation
from bot.slack.delivery import Delivery
from bot.slack.markup import mention_user
from bot.slack.messages import SlackMessage, slack_message


def compute_safely(
    compute: Callable[[], Reply | None], logger: logging.Logger, what: str, where: str
) -> Reply | None:
    try:
        return compute()
    except Exception:
        error_id = new_error_id()
        logger.exception("error %s while %s (%s)", error_id, what, where)
        return internal_error_reply(error_id)


def answer_now_or_run(
    conversation: Conversation, intent: MessageIntent | ShortcutIntent
) -> Reply | None:
    """Both phases of a message or the shortcut, once its working message shows and its files
    are read: the reply said at once, or what its plan brings (None: stay silent)."""
    decision = conversation.handle(intent)
    if decision.plan is None:
        return decision.reply
    return conversation.run(decision.plan)


def collecting_what(cluster: str, user: str, *, usage: bool) -> str:
    """The "working on it" words of a cluster summary (an nvidia-smi run takes longer)."""
    what = f"collecting HAMi metrics from *{cluster}*"
    if usage:
        what += " and running nvidia-smi in its pods"
    return f"{what} for {mention_user(user)}"


def respond_ephemeral(respond: Respond, message: SlackMessage, *, replace: bool = False) -> None:
    respond(
        text=message.text,
        blocks=message.blocks,
        response_type="ephemeral",
        replace_original=replace,
    )


def answer_in_thread(
    *,
    client: WebClient,
    logger: logging.Logger,
    channel: str,
    thread_ts: str | None,
    user: str,
    what: str,
    compute: Callable[[str | None], Reply | None],
    respond: Respond | None = None,
    problems_private: bool = False,
) -> None:
    """Post "working on it" in ``channel`` (in ``thread_ts``), then update it with the answer.

    ``compute`` is given the thread the answer shows in (``thread_ts``, or the working
    message's own ts at the top level; None when nothing could be posted): a cluster summary
    shown there becomes what follow-ups in it ask about, remembered by the conversation before
    the answer shows, so an immediate follow-up finds it.

    When the bot may not post in the channel (not a member), the answer goes through
    ``respond`` (the interaction's response_url) instead, without files.
    """
    delivery = Delivery(client, logger)
    where = f"channel {channel}, thread {thread_ts}, user {user}"
    ts = delivery.post_working(channel, thread_ts, what)
    shown_in = (thread_ts or ts) if ts is not None else None
    reply = compute_safely(lambda: compute(shown_in), logger, what, where)
    if reply is None:
        if ts is not None:
            delivery.delete(channel, ts)
        return
    message = slack_message(reply, files_possible=ts is not None)
    if ts is None:
        if respond is not None:
            respond_ephemeral(respond, message)
        else:
            logger.warning("could not answer in %s: the bot may not post there", where)
        return
    if message.problem and problems_private:
        delivery.delete(channel, ts)
        if respond is not None:
            respond_ephemeral(respond, message)
        else:
            delivery.ephemeral(channel, user, thread_ts, message)
        return
    delivery.finish(channel, ts, thread_ts, message)


def run_guarded(
    logger: logging.Logger,
    what: str,
    body: Callable[[], None],
    on_error: Callable[[SlackMessage], None] | None = None,
) -> None:
    """Run a lazy listener's body; an unexpected error is logged and, if possible, told."""
    try:
        body()
    except Exception:
        error_id = new_error_id()
        logger.exception("error %s while %s", error_id, what)
        if on_error is not None:
            try:
                on_error(slack_message(internal_error_reply(error_id)))
            except Exception:
                logger.exception("could not report error %s to the user", error_id)
