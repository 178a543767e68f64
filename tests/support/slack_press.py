"""A button pressed under a bot message, as Slack sends it: one ``block_actions`` payload."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from tests.support.slack_api import StoredMessage

Answer = TypeVar("Answer")


def button_value(message: StoredMessage, action_id: str) -> str:
    """The value of the button ``action_id`` in ``message``'s actions block."""
    actions = next(b for b in message.blocks if b["type"] == "actions")["elements"]
    return str(next(a["value"] for a in actions if a["action_id"] == action_id))


def press(
    interaction: Callable[[dict[str, Any]], Answer],
    message: StoredMessage,
    action_id: str,
    *,
    user: str,
    channel: str,
    response_url: str,
    action_ts: str,
    thread_ts: str | None = None,
) -> Answer:
    """Press ``action_id`` under ``message`` (in thread ``thread_ts`` when given) as ``user``,
    sending the value that button carries."""
    shown: dict[str, Any] = {"ts": message.ts}
    if thread_ts is not None:
        shown["thread_ts"] = thread_ts
    shown.update(text=message.text, blocks=message.blocks)
    return interaction(
        {
            "type": "block_actions",
            "user": {"id": user},
            "channel": {"id": channel},
            "container": {
                "type": "message",
                "message_ts": message.ts,
                "channel_id": channel,
                "is_ephemeral": False,
            },
            "message": shown,
            "response_url": response_url,
            "actions": [
                {
                    "type": "button",
                    "action_id": action_id,
                    "value": button_value(message, action_id),
                    "action_ts": action_ts,
                }
            ],
        }
    )
