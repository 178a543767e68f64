"""The buttons of the Home tab: Refresh (the tab), Summary and Changes (answered in the DM),
and Fit (a form for the job shape, ``bot.slack.listeners.views.fit_form``).

Each press is checked against the registry again, for the user's DM with the bot, the same
rule the tab was built with: a cluster the user may not query is refused without a word about
it (a Home tab published before the registry changed may still show its button).
"""

from __future__ import annotations

from logging import Logger
from typing import Any

from slack_bolt import BoltContext
from slack_sdk import WebClient

from bot.conversation.buttons import TOP_LEVEL
from bot.conversation.intents import Plan
from bot.conversation.parsing import ClusterCommand
from bot.conversation.replies import Reply
from bot.slack.answer import answer_in_thread, run_guarded
from bot.slack.delivery import Delivery
from bot.slack.home import dm_channel_of, refresh_home
from bot.slack.home_view import (
    HOME_CHANGES,
    HOME_FIT,
    HOME_REFRESH,
    fit_modal,
    read_cluster_value,
)
from bot.slack.markup import mention_user
from bot.slack.messages import slack_message
from bot.slack.services import SlackServices, services_from
from core.errors import InputError


def answer_in_dm(
    services: SlackServices,
    client: WebClient,
    logger: Logger,
    *,
    user: str,
    command: ClusterCommand,
    what: str,
) -> None:
    """Answer ``command`` in the user's DM with the bot; the answer also becomes what a
    follow-up typed there (``gpus``, ``ns team-a``) asks about."""
    channel = dm_channel_of(client, user)
    conversation = services.conversation

    def compute(shown_in: str | None) -> Reply:
        return conversation.run(Plan(command, user, channel, thread_ts=shown_in, also_in=TOP_LEVEL))

    answer_in_thread(
        client=client,
        logger=logger,
        channel=channel,
        thread_ts=None,
        user=user,
        what=what,
        compute=compute,
    )


def _open_fit_form(
    services: SlackServices,
    client: WebClient,
    logger: Logger,
    body: dict[str, Any],
    user: str,
    cluster: str,
    context: str | None,
) -> None:
    channel = dm_channel_of(client, user)
    problem = services.conversation.decide(
        Plan(ClusterCommand(cluster, context), user, channel)
    ).reply
    if problem is not None:
        Delivery(client, logger).post(channel, None, slack_message(problem))
        return
    Delivery(client, logger).open_modal(
        str(body.get("trigger_id") or ""), fit_modal(cluster, context)
    )


def press_home_button(
    body: dict[str, Any],
    action: dict[str, Any],
    context: BoltContext,
    client: WebClient,
    logger: Logger,
) -> None:
    services = services_from(context)
    name = str(action.get("action_id"))
    user = str(body["user"]["id"])

    def press() -> None:
        if name == HOME_REFRESH:
            refresh_home(
                services,
                client,
                logger,
                user=user,
                dm_channel=dm_channel_of(client, user),
                force=True,
            )
            return
        try:
            cluster, cluster_context = read_cluster_value(str(action.get("value") or ""))
        except InputError as error:
            logger.warning("unreadable Home button from %s: %s", user, error.message)
            return
        if name == HOME_FIT:
            _open_fit_form(services, client, logger, body, user, cluster, cluster_context)
            return
        changes = name == HOME_CHANGES
        what = f"{'changes of' if changes else 'collecting'} *{cluster}* for {mention_user(user)}"
        answer_in_dm(
            services,
            client,
            logger,
            user=user,
            what=what,
            command=ClusterCommand(cluster, cluster_context, changes=changes),
        )

    run_guarded(logger, f"Home button {name} for {user}", press)
