"""``app_home_opened``: the user opened the bot's Home tab (or its Messages tab)."""

from __future__ import annotations

from logging import Logger
from typing import Any

from slack_bolt import BoltContext
from slack_sdk import WebClient

from bot.slack.answer import run_guarded
from bot.slack.home import refresh_home
from bot.slack.services import services_from


def publish_home_tab(
    event: dict[str, Any], context: BoltContext, client: WebClient, logger: Logger
) -> None:
    """Lazy: publish the user's clusters when the Home tab on show is stale."""
    if event.get("tab") != "home":
        return  # the Messages tab (the DM) needs nothing published
    user = str(event.get("user") or "")
    if not user:
        return
    channel = event.get("channel")
    services = services_from(context)

    def publish() -> None:
        refresh_home(
            services,
            client,
            logger,
            user=user,
            dm_channel=str(channel) if channel else None,
            # Slack sends the view on show, if any: without one the tab is still empty.
            first_open="view" not in event,
        )

    run_guarded(logger, f"publishing the Home tab of {user}", publish)
