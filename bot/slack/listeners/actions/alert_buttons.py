"""The buttons of an alert: Silence 1 h, Silence 1 day (a note in the alert's thread) and Open
summary (the cluster's summary in that thread). The conversation checks every press
(``bot.conversation.alert_buttons``); a refusal reaches only the presser."""

from __future__ import annotations

from logging import Logger
from typing import Any

from slack_bolt import BoltContext, Respond
from slack_sdk import WebClient

from bot.conversation.alert_buttons import AlertButtonIntent, SilenceAlert
from bot.slack.answer import respond_ephemeral, run_guarded
from bot.slack.delivery import Delivery
from bot.slack.messages import slack_message
from bot.slack.plans import carry_out
from bot.slack.services import services_from


def press_alert_button(
    body: dict[str, Any],
    action: dict[str, Any],
    context: BoltContext,
    client: WebClient,
    respond: Respond,
    logger: Logger,
) -> None:
    services = services_from(context)
    user = str(body["user"]["id"])
    channel = str((body.get("channel") or {}).get("id") or "")
    message = body.get("message") or {}
    container = body.get("container") or {}
    thread = (
        str(message.get("thread_ts") or container.get("message_ts") or message.get("ts") or "")
        or None
    )
    action_id = str(action["action_id"])
    intent = AlertButtonIntent(action_id, str(action.get("value") or ""), user, channel)

    def press() -> None:
        decision = services.conversation.handle(intent)
        if decision.reply is not None:
            logger.info("refused alert button %s from %s in %s", action_id, user, channel)
            respond_ephemeral(respond, slack_message(decision.reply))
        plan = decision.plan
        if plan is None:
            return
        if isinstance(plan.command, SilenceAlert):
            note = services.conversation.run(plan)
            Delivery(client, logger).post(channel, thread, slack_message(note))
            return
        carry_out(plan, services, client, respond, logger, thread_ts=thread)

    run_guarded(
        logger,
        f"alert button {action_id} for {user} in {channel}",
        press,
        on_error=lambda failure: respond_ephemeral(respond, failure),
    )
