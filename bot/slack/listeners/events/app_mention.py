"""``app_mention``: someone mentioned the bot in a channel; answer in that thread."""

from __future__ import annotations

from logging import Logger
from typing import Any

from slack_bolt import BoltContext
from slack_sdk import WebClient

from bot.slack.listeners.events.answer_message import answer_conversation_message


def answer_mention(
    event: dict[str, Any], context: BoltContext, client: WebClient, logger: Logger
) -> None:
    # A top-level mention starts a thread under it; a mention in a thread answers there.
    thread_ts = str(event.get("thread_ts") or event["ts"])
    answer_conversation_message(
        event,
        context=context,
        client=client,
        logger=logger,
        thread_ts=thread_ts,
        state_thread=thread_ts,
        mentioned=True,
    )
