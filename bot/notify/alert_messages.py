"""An alert in Slack: the firing message with its buttons, the resolution in its thread.

Button values carry the cluster and rule names only; the press is checked against the registry
(the rule's channel, the presser's access) by the conversation (``bot.conversation.alert_buttons``).
"""

from __future__ import annotations

from typing import Any

from bot.conversation.alert_buttons import OPEN_SUMMARY, SILENCE_DAY, SILENCE_HOUR, button_value
from bot.slack.messages import SlackMessage
from core.notify.alert_text import AlertText


def firing_message(text: AlertText, cluster: str, rule: str, defined_at: str) -> SlackMessage:
    value = button_value(cluster, rule)
    blocks: list[dict[str, Any]] = [
        {
            "type": "section",
            "text": {"type": "mrkdwn", "text": f":rotating_light: *{text.title}*\n{text.body}"},
        },
        {
            "type": "context",
            "elements": [
                {
                    "type": "mrkdwn",
                    "text": (
                        f"Declared in the cluster registry at {defined_at}. Posted when it "
                        "fires and when it resolves (in this thread), nothing in between."
                    ),
                }
            ],
        },
        {
            "type": "actions",
            "elements": [
                {
                    "type": "button",
                    "action_id": SILENCE_HOUR,
                    "value": value,
                    "text": {"type": "plain_text", "text": "Silence 1 h"},
                },
                {
                    "type": "button",
                    "action_id": SILENCE_DAY,
                    "value": value,
                    "text": {"type": "plain_text", "text": "Silence 1 day"},
                },
                {
                    "type": "button",
                    "action_id": OPEN_SUMMARY,
                    "value": value,
                    "text": {"type": "plain_text", "text": "Open summary"},
                },
            ],
        },
    ]
    return SlackMessage(blocks, f"{text.title}: {text.body}")


def resolved_message(text: AlertText) -> SlackMessage:
    blocks = [
        {
            "type": "section",
            "text": {"type": "mrkdwn", "text": f":white_check_mark: *{text.title}*\n{text.body}"},
        }
    ]
    return SlackMessage(blocks, f"{text.title}: {text.body}")


def note_message(text: str) -> SlackMessage:
    return SlackMessage([{"type": "section", "text": {"type": "mrkdwn", "text": text}}], text)
