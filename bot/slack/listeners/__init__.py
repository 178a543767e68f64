"""The bot's Slack surfaces, one package per kind, gathered by ``register_listeners``."""

from __future__ import annotations

from slack_bolt import App

from bot.slack.listeners import actions, commands, events, shortcuts, views


def register_listeners(app: App) -> None:
    commands.register(app)
    events.register(app)
    actions.register(app)
    shortcuts.register(app)
    views.register(app)
