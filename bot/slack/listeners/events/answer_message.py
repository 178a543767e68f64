"""Answering a message that mentions the bot or is sent to it directly.

Both surfaces behave the same: metrics in the text or an attached .prom/.txt file start a new
summary in the thread; other words are follow-ups about the thread's metrics. Other bots are
answered only when they bring metrics and mention this bot (so two bots cannot keep each other
talking); the bot's own messages
never reach here (Bolt's ``IgnoringSelfEvents`` middleware drops them).
"""

from __future__ import annotations

from logging import Logger
from typing import Any

from slack_bolt import BoltContext
from slack_sdk import WebClient

from bot.conversation.intents import MessageIntent
from bot.conversation.parsing import looks_like_metrics
from bot.conversation.replies import Reply
from bot.slack.answer import answer_in_thread, answer_now_or_run, run_guarded
from bot.slack.files import fetch_metrics_files, is_candidate
from bot.slack.incoming import typed_text
from bot.slack.services import SlackServices, services_from


def _files(event: dict[str, Any]) -> list[dict[str, Any]]:
    files = event.get("files")
    return [f for f in files if isinstance(f, dict)] if isinstance(files, list) else []


def brings_metrics(event: dict[str, Any]) -> bool:
    """Cheap check, before any download, that a message may carry metrics."""
    text = typed_text(str(event.get("text") or ""))
    return looks_like_metrics(text) or any(is_candidate(f) for f in _files(event))


def answer_conversation_message(
    event: dict[str, Any],
    *,
    context: BoltContext,
    client: WebClient,
    logger: Logger,
    thread_ts: str | None,
    state_thread: str,
    mentioned: bool,
) -> None:
    """Answer ``event`` in ``thread_ts`` (None: top level); ``state_thread`` keys its metrics."""
    services: SlackServices = services_from(context)
    channel = str(event["channel"])
    # app_mention and message.im can both fire for one message: answer it once.
    if not services.state.first_sighting(f"message:{channel}:{event.get('ts')}"):
        return
    from_bot = bool(event.get("bot_id")) or event.get("subtype") == "bot_message"
    if from_bot and not (mentioned and brings_metrics(event)):
        return
    # The sender: a person's user id, or another bot's id. An event with neither is not from
    # anyone the bot can answer or authorise (never the local operator of ``chat``): ignored.
    user = str(event.get("user") or event.get("bot_id") or "")
    if not user:
        logger.info("ignored a message event without a user in %s (%s)", channel, event.get("ts"))
        return
    text = typed_text(str(event.get("text") or ""))
    files = _files(event)
    what = "reading your metrics" if brings_metrics(event) else "looking at this thread"

    def compute(shown_in: str | None) -> Reply | None:
        given = fetch_metrics_files(client, files, services)
        intent = MessageIntent(
            text, user, channel, state_thread, given, from_bot=from_bot, shown_in=shown_in
        )
        return answer_now_or_run(services.conversation, intent)

    run_guarded(
        logger,
        f"answering a message in {channel} ({event.get('ts')})",
        lambda: answer_in_thread(
            client=client,
            logger=logger,
            channel=channel,
            thread_ts=thread_ts,
            user=user,
            what=what,
            compute=compute,
        ),
    )
