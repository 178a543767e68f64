"""Shortcuts: the message shortcut "Summarize HAMi metrics"."""

from __future__ import annotations

from slack_bolt import App

from bot.ops.instrument import answers_later
from bot.slack.listeners.shortcuts.summarize_metrics import (
    CALLBACK_ID,
    acknowledge_shortcut,
    summarize_message,
)


def register(app: App) -> None:
    app.shortcut(CALLBACK_ID)(ack=acknowledge_shortcut, lazy=[answers_later(summarize_message)])
