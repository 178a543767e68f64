"""Events API: mentions of the bot, direct messages, the Home tab opened, and changes to Slack
user groups."""

from __future__ import annotations

from slack_bolt import App

from bot.ops.instrument import answers_later
from bot.slack.listeners.events.acknowledge import acknowledge_event
from bot.slack.listeners.events.app_home import publish_home_tab
from bot.slack.listeners.events.app_mention import answer_mention
from bot.slack.listeners.events.direct_message import (
    answer_direct_message,
    ignore_other_messages,
    is_direct_message,
)
from bot.slack.listeners.events.user_groups import update_group, update_group_members


def register(app: App) -> None:
    app.event("app_mention")(ack=acknowledge_event, lazy=[answers_later(answer_mention)])
    app.event("message", matchers=[is_direct_message])(
        ack=acknowledge_event, lazy=[answers_later(answer_direct_message)]
    )
    # Every other message event (edits, deletions, channel messages if subscribed) is
    # acknowledged and dropped: an unhandled event would be answered 404 and retried by Slack.
    app.event("message")(ignore_other_messages)
    app.event("app_home_opened")(ack=acknowledge_event, lazy=[answers_later(publish_home_tab)])
    app.event("subteam_members_changed")(update_group_members)
    app.event("subteam_updated")(update_group)
