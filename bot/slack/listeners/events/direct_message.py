"""``message`` events in the bot's direct-message channel (``channel_type == "im"``)."""

from __future__ import annotations

from logging import Logger
from typing import Any

from slack_bolt import Ack, BoltContext
from slack_sdk import WebClient

from bot.conversation.buttons import TOP_LEVEL
from bot.slack.incoming import mentions_user
from bot.slack.listeners.events.answer_message import answer_conversation_message

# Subtypes that are new messages (https://api.slack.com/events/message): plain, with files,
# and thread replies also sent to the channel. Edits, deletions and joins are not.
NEW_MESSAGE_SUBTYPES = (None, "file_share", "thread_broadcast", "bot_message")

# Top-level DMs share one conversation per DM channel (``TOP_LEVEL``): "ns team-a" typed after
# a pasted summary refers to it without opening a thread.


def is_direct_message(event: dict[str, Any]) -> bool:
    return event.get("channel_type") == "im" and event.get("subtype") in NEW_MESSAGE_SUBTYPES


def answer_direct_message(
    event: dict[str, Any], context: BoltContext, client: WebClient, logger: Logger
) -> None:
    thread_ts = event.get("thread_ts")
    answer_conversation_message(
        event,
        context=context,
        client=client,
        logger=logger,
        thread_ts=str(thread_ts) if thread_ts else None,
        state_thread=str(thread_ts) if thread_ts else TOP_LEVEL,
        # In a DM every message is addressed to the bot; other bots must still name it.
        mentioned=not event.get("bot_id")
        or mentions_user(str(event.get("text") or ""), context.bot_user_id),
    )


def ignore_other_messages(ack: Ack) -> None:
    ack()
