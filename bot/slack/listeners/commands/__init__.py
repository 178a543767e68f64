"""Slash commands: ``/hami-summary``."""

from __future__ import annotations

from slack_bolt import App

from bot.ops.instrument import answers_later
from bot.slack.listeners.commands.hami_summary import acknowledge_command, answer_command

COMMAND = "/hami-summary"


def register(app: App) -> None:
    # Quick answers (help, picker, clusters, bad arguments) go back in the acknowledgement;
    # a cluster summary is collected, and ``admin check`` asks the API servers, in the lazy
    # listener after the 3-second ack (it returns at once for the other commands).
    app.command(COMMAND)(ack=acknowledge_command, lazy=[answers_later(answer_command)])
