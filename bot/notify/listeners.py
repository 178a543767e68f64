"""Slack surfaces of the notifier: ``/hami-summary digests`` and the buttons of an alert.

Both check access as every answer does: a person sees, silences and opens only what the
registry lets them query from where they are (``LiveSource.clusters_for``), and an alert's
buttons act only in the channel its rule posts to.
"""

from __future__ import annotations

import re
from logging import Logger
from typing import Any

from slack_bolt import Ack, App, BoltContext, Respond
from slack_sdk import WebClient

from bot.clusters.registry import ClusterEntry, ClusterRegistry
from bot.conversation.intents import Plan
from bot.conversation.parsing import ClusterCommand
from bot.conversation.replies import MessageReply
from bot.notify.alert_messages import (
    ALERT_ACTIONS,
    SILENCE_SECONDS,
    note_message,
    read_button_value,
)
from bot.notify.digest_list import digests_reply
from bot.notify.records import NotifyRecords
from bot.ops.instrument import answers_later
from bot.slack.answer import (
    answer_in_thread,
    collecting_what,
    compute_safely,
    respond_ephemeral,
    run_guarded,
)
from bot.slack.delivery import Delivery
from bot.slack.incoming import typed_text
from bot.slack.listeners.commands import COMMAND
from bot.slack.markup import mention_user
from bot.slack.messages import slack_message, text_message
from bot.slack.services import SlackServices, services_from
from core.notify.alert_text import silenced_text
from core.notify.rules import AlertRule

NOT_YOURS = MessageReply(
    "You may not query this alert's cluster from here, so its buttons are not for you. An "
    "operator can allow you in the cluster registry (allowed_users, allowed_channels or "
    "allowed_user_groups).",
    title="Not for you",
    tone="problem",
)
RULE_GONE = MessageReply(
    "This alert's rule is no longer in the cluster registry, so there is nothing to silence "
    "or open from here.",
    title="Alert no longer declared",
    tone="problem",
)
ELSEWHERE = MessageReply(
    "This button belongs to an alert of another channel, so I did not act on it. Use the "
    "buttons under the alert itself.",
    title="Not here",
    tone="problem",
)
ALERT_ACTION_IDS = re.compile("^(" + "|".join(re.escape(a) for a in ALERT_ACTIONS) + ")$")


def is_digests_command(body: dict[str, Any]) -> bool:
    return typed_text(str(body.get("text") or "")).lower().split() == ["digests"]


def acknowledge(ack: Ack) -> None:
    ack()


def registry_of(services: SlackServices) -> ClusterRegistry:
    """The registry behind the live source (an install without one has none declared)."""
    registry = getattr(services.conversation.live, "registry", None)
    return registry if isinstance(registry, ClusterRegistry) else ClusterRegistry(entries=())


def queryable(services: SlackServices, user: str, channel: str) -> set[str]:
    return {option.name for option in services.conversation.live.clusters_for(user, channel)}


def list_digests(
    command: dict[str, Any], context: BoltContext, respond: Respond, logger: Logger
) -> None:
    services = services_from(context)
    user, channel = str(command["user_id"]), str(command["channel_id"])
    records = NotifyRecords(services.state.kv)
    what = f"listing digests for {user}"
    reply = compute_safely(
        lambda: digests_reply(
            registry_of(services), records, queryable(services, user, channel), services.state.now()
        ),
        logger,
        what,
        f"channel {channel}",
    )
    if reply is not None:
        run_guarded(logger, what, lambda: respond_ephemeral(respond, slack_message(reply)))


def _alert_of(
    services: SlackServices, value: str, user: str, channel: str
) -> tuple[ClusterEntry, AlertRule] | MessageReply:
    """The entry and rule a press acts on, or why it is refused."""
    names = read_button_value(value)
    if names is None:
        return RULE_GONE
    entry = registry_of(services).get(names[0])
    if entry is None or entry.name not in queryable(services, user, channel):
        return NOT_YOURS
    rule = next((r for r in entry.alerts if r.name == names[1]), None)
    if rule is None:
        return RULE_GONE
    if rule.channel != channel:
        return ELSEWHERE
    return entry, rule


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

    def press() -> None:
        found = _alert_of(services, str(action.get("value") or ""), user, channel)
        if isinstance(found, MessageReply):
            logger.info("refused alert button %s from %s in %s", action_id, user, channel)
            respond_ephemeral(respond, text_message(found))
            return
        entry, rule = found
        if action_id in SILENCE_SECONDS:
            records = NotifyRecords(services.state.kv)
            silence = records.silence(
                entry.name, rule.name, SILENCE_SECONDS[action_id], user, services.state.now()
            )
            note = silenced_text(entry.name, rule, silence.until, mention_user(user))
            Delivery(client, logger).post(channel, thread, note_message(f":no_bell: {note}"))
            return
        answer_in_thread(
            client=client,
            logger=logger,
            channel=channel,
            thread_ts=thread,
            user=user,
            what=collecting_what(entry.name, user, usage=False),
            compute=lambda shown_in: services.conversation.run(
                Plan(
                    ClusterCommand(entry.name, context=rule.context),
                    user,
                    channel,
                    thread_ts=shown_in,
                )
            ),
            respond=respond,
            problems_private=True,
        )

    run_guarded(
        logger,
        f"alert button {action_id} for {user} in {channel}",
        press,
        on_error=lambda failure: respond_ephemeral(respond, failure),
    )


def register(app: App) -> None:
    """Before the other ``/hami-summary`` listener: Bolt gives a request to the first match."""
    app.command(COMMAND, matchers=[is_digests_command])(
        ack=acknowledge, lazy=[answers_later(list_digests)]
    )
    app.action(ALERT_ACTION_IDS)(ack=acknowledge, lazy=[answers_later(press_alert_button)])
