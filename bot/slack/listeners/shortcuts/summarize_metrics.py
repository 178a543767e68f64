"""Message shortcut "Summarize HAMi metrics": summarise the metrics in the chosen message.

The answer goes into that message's thread; if the message has no metrics, only the person
who used the shortcut is told (ephemeral).
"""

from __future__ import annotations

from logging import Logger
from typing import Any

from slack_bolt import Ack, BoltContext, Respond
from slack_sdk import WebClient

from bot.conversation.intents import ShortcutIntent
from bot.conversation.replies import Reply
from bot.slack.answer import answer_in_thread, answer_now_or_run, respond_ephemeral, run_guarded
from bot.slack.files import fetch_metrics_files
from bot.slack.incoming import typed_text
from bot.slack.listeners.events.answer_message import brings_metrics
from bot.slack.markup import mention_user
from bot.slack.messages import slack_message
from bot.slack.services import services_from

# Must match the callback_id of the shortcut in deploy/slack-app-manifest.yaml.
CALLBACK_ID = "summarize_metrics"


def acknowledge_shortcut(ack: Ack) -> None:
    ack()


def summarize_message(
    body: dict[str, Any],
    context: BoltContext,
    client: WebClient,
    respond: Respond,
    logger: Logger,
) -> None:
    services = services_from(context)
    conversation = services.conversation
    message = body.get("message") or {}
    channel = str((body.get("channel") or {}).get("id") or "")
    user = str(body["user"]["id"])
    thread_ts = str(message.get("thread_ts") or message.get("ts") or "")
    text = typed_text(str(message.get("text") or ""))
    files = [f for f in message.get("files") or [] if isinstance(f, dict)]

    def compute(_shown_in: str | None = None) -> Reply | None:
        given = fetch_metrics_files(client, files, services)
        intent = ShortcutIntent(text, user, channel, thread_ts, given)
        return answer_now_or_run(conversation, intent)

    def summarize() -> None:
        if not brings_metrics(message):
            reply = compute()
            if reply is not None:
                respond_ephemeral(respond, slack_message(reply))
            return
        answer_in_thread(
            client=client,
            logger=logger,
            channel=channel,
            thread_ts=thread_ts,
            user=user,
            what=f"summarising these metrics for {mention_user(user)}",
            compute=compute,
            respond=respond,
            problems_private=True,
        )

    run_guarded(
        logger,
        f"shortcut {CALLBACK_ID} for {user} in {channel}",
        summarize,
        on_error=lambda failure: respond_ephemeral(respond, failure),
    )
