"""Publishing a user's App Home tab: when it is opened and stale, or on its Refresh button.

Opening the tab sends ``app_home_opened`` every time. The tab is published again only when the
one on show is older than ``HOME_STALE_SECONDS`` (the scrape cache's default lifetime: sooner,
the same figures would come back), so flicking between tabs costs nothing. On the very first
opening (no view yet) a short "reading your clusters" view goes out first. One replica at a
time refreshes a user's tab (a lock in the store); the other opening is then already served.

The clusters shown are those of the fleet view for the user's DM with the bot: the registry's
rules for that user (users, user groups, channels open to all), never a channel's.
"""

from __future__ import annotations

import logging

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.slack.delivery import Delivery
from bot.slack.home_view import home_view, loading_view
from bot.slack.services import SlackServices

HOME_STALE_SECONDS = 60.0
# How long a published time is remembered (past it, the next opening publishes anyway).
PUBLISHED_TTL_SECONDS = 7 * 86_400.0
# Longer than a refresh can take: every cluster's wait, plus Slack's answers.
REFRESH_LOCK_SECONDS = 120.0


def refresh_home(
    services: SlackServices,
    client: WebClient,
    logger: logging.Logger,
    *,
    user: str,
    dm_channel: str | None,
    first_open: bool = False,
    force: bool = False,
) -> bool:
    """Publish ``user``'s Home tab when it is stale (always with ``force``); True when it
    was published by this call."""
    state = services.state
    now = state.now()
    published_at = state.home_published_at(user)
    if not force and published_at is not None and now - published_at < HOME_STALE_SECONDS:
        return False
    token = state.claim_home_refresh(user, REFRESH_LOCK_SECONDS)
    if token is None:
        logger.info("Home tab of %s is being refreshed elsewhere", user)
        return False
    delivery = Delivery(client, logger)
    try:
        if first_open and published_at is None:
            delivery.publish_home(user, loading_view())
        reply = services.conversation.fleet(user=user, channel=dm_channel)
        published = state.now()
        delivery.publish_home(user, home_view(reply, published))
        state.remember_home_published(user, published, PUBLISHED_TTL_SECONDS)
        return True
    except SlackApiError as error:
        logger.warning(
            "could not publish the Home tab of %s: %s", user, error.response.get("error")
        )
        return False
    finally:
        state.release_home_refresh(user, token)


def dm_channel_of(client: WebClient, user: str) -> str:
    """The user's DM with the bot, where the Home tab's buttons answer (``im:write``)."""
    response = client.conversations_open(users=user)
    channel = response.get("channel") or {}
    channel_id = channel.get("id") if isinstance(channel, dict) else None
    if not isinstance(channel_id, str) or not channel_id:
        raise RuntimeError("conversations.open returned no channel id")
    return channel_id
