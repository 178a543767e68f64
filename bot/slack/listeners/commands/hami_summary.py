"""``/hami-summary [help | clusters | admin [check] | <cluster> [ns=..] [node=..] [runtime]
[usage] [fresh]]``."""

from __future__ import annotations

from logging import Logger
from typing import Any

from slack_bolt import Ack, BoltContext, Respond
from slack_sdk import WebClient

from bot.conversation.parsing import AdminCommand, ClusterCommand, parse_command
from bot.conversation.replies import MessageReply, internal_error_reply, new_error_id
from bot.slack.answer import (
    answer_in_thread,
    collecting_what,
    compute_safely,
    respond_ephemeral,
    run_guarded,
)
from bot.slack.messages import slack_message
from bot.slack.services import services_from
from core.errors import InputError


def _ack_reply(ack: Ack, reply: MessageReply | Any) -> None:
    message = slack_message(reply)
    ack(text=message.text, blocks=message.blocks, response_type="ephemeral")


def acknowledge_command(
    ack: Ack, command: dict[str, Any], context: BoltContext, logger: Logger
) -> None:
    """Answer at once what needs no collection; only acknowledge a cluster summary."""
    try:
        services = services_from(context)
        user, channel = command["user_id"], command["channel_id"]
        try:
            parsed = parse_command(command.get("text", ""))
        except InputError as error:
            _ack_reply(ack, MessageReply(error.message, "I could not use that", "problem"))
            return
        conversation = services.conversation
        if isinstance(parsed, AdminCommand) and parsed.check and conversation.is_admin(user):
            # Asking every API server takes seconds: the report follows from the lazy listener.
            _ack_reply(ack, MessageReply(
                "Checking each kubeconfig context's API server with its credentials "
                "(GET /version); the report follows here in a few seconds.",
                title="Admin: checking kubeconfig contexts",
            ))
            return
        if isinstance(parsed, ClusterCommand):
            problem = conversation.check_cluster_command(parsed, user=user, channel=channel)
            if problem is not None:
                _ack_reply(ack, problem)
            else:
                ack()
            return
        _ack_reply(ack, conversation.answer_command(parsed, user=user, channel=channel))
    except Exception:
        error_id = new_error_id()
        logger.exception("error %s acknowledging %s", error_id, command.get("command"))
        _ack_reply(ack, internal_error_reply(error_id))


def summarize_cluster(
    command: dict[str, Any],
    context: BoltContext,
    client: WebClient,
    respond: Respond,
    logger: Logger,
) -> None:
    """Lazy: collect and summarise the cluster named in the command."""
    try:
        parsed = parse_command(command.get("text", ""))
    except InputError:
        return  # already answered in the acknowledgement
    if not isinstance(parsed, ClusterCommand):
        return
    services = services_from(context)
    user, channel = command["user_id"], command["channel_id"]
    if services.conversation.check_cluster_command(parsed, user=user, channel=channel):
        return  # already answered in the acknowledgement

    def answer() -> None:
        answer_in_thread(
            services=services,
            client=client,
            logger=logger,
            channel=channel,
            thread_ts=None,
            user=user,
            what=collecting_what(parsed.cluster, user, usage=parsed.usage),
            compute=lambda: services.conversation.answer_command(
                parsed, user=user, channel=channel
            ),
            respond=respond,
            problems_private=True,
        )

    run_guarded(
        logger,
        f"answering /hami-summary {parsed.cluster} for {user} in {channel}",
        answer,
        on_error=lambda message: respond_ephemeral(respond, message),
    )


def check_kubeconfigs(
    command: dict[str, Any], context: BoltContext, respond: Respond, logger: Logger
) -> None:
    """Lazy: ``admin check`` for an admin, answered to them only (ephemeral)."""
    try:
        parsed = parse_command(command.get("text", ""))
    except InputError:
        return  # already answered in the acknowledgement
    services = services_from(context)
    user, channel = command["user_id"], command["channel_id"]
    conversation = services.conversation
    if not (isinstance(parsed, AdminCommand) and parsed.check and conversation.is_admin(user)):
        return  # answered in the acknowledgement (or not an admin command)
    what = f"checking kubeconfig contexts for {user}"
    reply = compute_safely(
        lambda: conversation.admin_report(parsed, user=user, channel=channel),
        logger, what, f"channel {channel}, user {user}",
    )
    if reply is not None:
        run_guarded(logger, what, lambda: respond_ephemeral(respond, slack_message(reply)))
