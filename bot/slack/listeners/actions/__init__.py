"""Block actions: the cluster picker, the buttons under a summary, those of the Home tab and
those of an alert."""

from __future__ import annotations

import re

from slack_bolt import App

from bot.conversation.alert_buttons import ALERT_ACTIONS
from bot.conversation.replies import SUMMARY_ACTIONS, USAGE_ACTION
from bot.ops.instrument import answers_later
from bot.slack.blocks import SUMMARY_ACTION_PREFIX
from bot.slack.home_view import HOME_ACTIONS
from bot.slack.listeners.actions.alert_buttons import press_alert_button
from bot.slack.listeners.actions.home_buttons import press_home_button
from bot.slack.listeners.actions.picker import (
    acknowledge_action,
    cancel_picker,
    choose_cluster,
    choose_context,
    confirm_picker,
)
from bot.slack.listeners.actions.summary_buttons import press_summary_button
from bot.slack.messages import (
    PICKER_CANCEL,
    PICKER_CLUSTER,
    PICKER_CONFIRM,
    PICKER_CONTEXT,
    PICKER_NAMESPACE,
    PICKER_USAGE,
)

# Every button under a summary, Real usage included: acknowledged at once, answered lazily,
# and de-duplicated like any block action (``bot.slack.app.skip_redeliveries``).
SUMMARY_ACTION_IDS = re.compile(
    "^("
    + "|".join(
        re.escape(SUMMARY_ACTION_PREFIX + action) for action, _ in (*SUMMARY_ACTIONS, USAGE_ACTION)
    )
    + ")$"
)
HOME_ACTION_IDS = re.compile("^(" + "|".join(re.escape(a) for a in HOME_ACTIONS) + ")$")
ALERT_ACTION_IDS = re.compile("^(" + "|".join(re.escape(a) for a in ALERT_ACTIONS) + ")$")


def register(app: App) -> None:
    app.action(PICKER_CLUSTER)(ack=acknowledge_action, lazy=[answers_later(choose_cluster)])
    app.action(PICKER_CONTEXT)(choose_context)
    # The namespace box sends no action of its own (no dispatch_action); acknowledged in case
    # a Slack client sends one anyway. Its value is read from the Confirm payload's state.
    app.action(PICKER_NAMESPACE)(acknowledge_action)
    app.action(PICKER_USAGE)(acknowledge_action)
    app.action(PICKER_CONFIRM)(ack=acknowledge_action, lazy=[answers_later(confirm_picker)])
    app.action(PICKER_CANCEL)(ack=acknowledge_action, lazy=[answers_later(cancel_picker)])
    app.action(SUMMARY_ACTION_IDS)(
        ack=acknowledge_action, lazy=[answers_later(press_summary_button)]
    )
    app.action(HOME_ACTION_IDS)(ack=acknowledge_action, lazy=[answers_later(press_home_button)])
    app.action(ALERT_ACTION_IDS)(ack=acknowledge_action, lazy=[answers_later(press_alert_button)])
