"""Slash commands: ``/hami-summary``."""

from __future__ import annotations

from slack_bolt import App

from bot.slack.listeners.commands.hami_summary import (
    acknowledge_command,
    check_kubeconfigs,
    summarize_cluster,
)

COMMAND = "/hami-summary"


def register(app: App) -> None:
    # Quick answers (help, picker, clusters, bad arguments) go back in the acknowledgement;
    # a cluster summary is collected, and ``admin check`` asks the API servers, in lazy
    # listeners after the 3-second ack (each returns at once for the other commands).
    app.command(COMMAND)(ack=acknowledge_command, lazy=[summarize_cluster, check_kubeconfigs])
