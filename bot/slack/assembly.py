"""One function that puts the bot together from its settings, for ``serve`` and for tests.

Store -> bot state -> live clusters (with Slack user-group lookups for ``allowed_user_groups``)
-> conversation (with the admins of ``HAMI_SUMMARY_ADMINS``) -> Slack services -> Web API
client -> Bolt app. The transports that dispatch to the app count and time its requests
(``bot.ops.instrument``).
Building the app calls ``auth.test`` (Bolt verifies the token eagerly).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from slack_bolt import App
from slack_sdk import WebClient

from bot.clusters.collect import collect_metrics
from bot.clusters.registry import ClusterRegistry
from bot.config import BotConfig
from bot.conversation.admin import AdminAccess
from bot.conversation.alerts import FiringAlerts, no_firing_alerts
from bot.conversation.notices import NO_NOTICES, Notices
from bot.conversation.service import Conversation
from bot.live import (
    RATE_WINDOW_SECONDS,
    Collect,
    LiveLimits,
    RegistryLiveSource,
    user_groups_named,
)
from bot.slack.app import build_app, build_web_client
from bot.slack.services import SlackServices
from bot.slack.usergroups import SlackUserGroups, lookup_client
from bot.store.kv import KeyValueStore
from bot.store.ratelimit import per_user_limiter
from bot.store.state import BotState


@dataclass(frozen=True)
class SlackBot:
    app: App
    client: WebClient
    services: SlackServices
    # Reads Slack user groups, and keeps the registry's warm on a background thread.
    user_groups: SlackUserGroups


def _conversation(
    config: BotConfig,
    state: BotState,
    live: RegistryLiveSource,
    registry: ClusterRegistry,
    store: KeyValueStore,
    firing_alerts: FiringAlerts,
    notices: Notices,
) -> Conversation:
    return Conversation(
        state,
        live,
        admin=AdminAccess(
            admins=config.admins, registry=registry, kubeconfig_dir=config.kubeconfig_dir
        ),
        settings=config.summary_settings,
        paste_limit=per_user_limiter(store, config.live_requests_per_minute, RATE_WINDOW_SECONDS),
        firing_alerts=firing_alerts,
        fleet_wait_seconds=config.fleet_wait_seconds,
        notices=notices,
    )


def assemble_bot(
    config: BotConfig,
    *,
    store: KeyValueStore,
    registry: ClusterRegistry,
    socket_mode: bool = False,
    logger: logging.Logger | None = None,
    collect: Collect = collect_metrics,
    firing_alerts: FiringAlerts = no_firing_alerts,
    notices: Notices = NO_NOTICES,
) -> SlackBot:
    """The Bolt app for ``config``. Raises ``ValueError`` when a needed token is missing, and
    Bolt's ``BoltError`` when Slack refuses the bot token. ``collect`` reaches the clusters
    (``bot.clusters.collect.collect_metrics`` unless another collector is given);
    ``firing_alerts`` says which alerts of a cluster fire, for the fleet view and App Home
    (``serve`` hands in what the alert runner records, ``bot.notify.firing``), and
    ``notices`` are the notifier's records, for ``digests`` and the alert buttons
    (``bot.notify.records``)."""
    if config.slack_bot_token is None:
        raise ValueError("SLACK_BOT_TOKEN is not set")
    signing_secret = None
    if not socket_mode:
        if config.slack_signing_secret is None:
            raise ValueError("SLACK_SIGNING_SECRET is not set")
        signing_secret = config.slack_signing_secret.reveal()
    state = BotState(
        store,
        thread_ttl_seconds=config.thread_ttl_seconds,
        thread_max_bytes=config.thread_max_bytes,
        dedupe_ttl_seconds=config.dedupe_ttl_seconds,
        picker_ttl_seconds=config.picker_ttl_seconds,
    )
    token = config.slack_bot_token.reveal()
    user_groups = SlackUserGroups(lookup_client(token, config.slack_api_url), store)
    user_groups.start_refreshing(user_groups_named(registry))
    live = RegistryLiveSource(
        registry,
        store,
        limits=LiveLimits(per_user_per_minute=config.live_requests_per_minute),
        timeout_seconds=config.scrape_timeout_seconds,
        collect=collect,
        user_groups=user_groups,
        settings=config.summary_settings,
    )
    services = SlackServices(
        conversation=_conversation(config, state, live, registry, store, firing_alerts, notices),
        state=state,
        max_file_bytes=config.max_file_bytes,
        api_base_url=config.slack_api_url,
        user_groups=user_groups,
    )
    client = build_web_client(token, config.slack_api_url)
    app = build_app(
        client=client,
        services=services,
        signing_secret=signing_secret,
        worker_threads=config.worker_threads,
        logger=logger,
    )
    return SlackBot(app=app, client=client, services=services, user_groups=user_groups)
