"""``/hami-summary [help | clusters | fleet | admin [check] | <cluster> [ns=..] [node=..]
[runtime] [usage] [fresh]]``."""

from __future__ import annotations

from logging import Logger
from typing import Any

from slack_bolt import Ack, BoltContext, Respond
from slack_sdk import WebClient

from bot.conversation.parsing import (
    AdminCommand,
    ClusterCommand,
    Command,
    FleetCommand,
    parse_command,
)
from bot.conversation.replies import MessageReply, internal_error_reply, new_error_id
from bot.slack.answer import (
    answer_in_thread,
    collecting_what,
    compute_safely,
    respond_ephemeral,
    run_guarded,
)
from bot.slack.markup import mention_user
from bot.slack.messages import slack_message
from bot.slack.services import SlackServices, services_from
from bot.slack.usergroups import ACK_WAIT_SECONDS, MembershipPending, wait_at_most
from core.errors import InputError

# How long a lazy listener waits to learn what the acknowledgement (started beside it) did; an
# acknowledgement is over within Slack's 3 s.
ACK_DECISION_WAIT_SECONDS = 5.0
# Said in the acknowledgement when access depends on Slack user groups not read yet.
CHECKING_ACCESS = MessageReply(
    "Reading the Slack user groups that decide which clusters you may query; "
    "the answer follows here in a moment.",
    title="Checking access…",
)


def _ack_reply(ack: Ack, reply: MessageReply | Any) -> None:
    message = slack_message(reply)
    ack(text=message.text, blocks=message.blocks, response_type="ephemeral")


def deferral_id(command: dict[str, Any]) -> str | None:
    """What names one command between its acknowledgement and its lazy listener."""
    trigger_id = command.get("trigger_id")
    return f"command:{command.get('command')}:{trigger_id}" if trigger_id else None


def acknowledge_command(
    ack: Ack, command: dict[str, Any], context: BoltContext, logger: Logger
) -> None:
    """Answer at once what needs no collection; only acknowledge a cluster summary.

    Access is decided from cached user-group membership; when some group cannot be read within
    ``ACK_WAIT_SECONDS``, the acknowledgement says "checking access" and ``answer_command``
    answers (or refuses) after the lookups.
    """
    key = deferral_id(command)
    deferred = False
    services: SlackServices | None = None
    try:
        services = services_from(context)
        if key is None:  # nothing to hand the answer over with: decide here
            _acknowledge(ack, command, services)
            return
        try:
            with wait_at_most(ACK_WAIT_SECONDS):
                _acknowledge(ack, command, services)
        except MembershipPending as pending:
            logger.info(
                "acknowledged %s before reading user groups %s; answering after",
                command.get("command"),
                ", ".join(pending.groups),
            )
            deferred = True
            _ack_reply(ack, CHECKING_ACCESS)
    except Exception:
        error_id = new_error_id()
        logger.exception("error %s acknowledging %s", error_id, command.get("command"))
        _ack_reply(ack, internal_error_reply(error_id))
    finally:
        if services is not None and key is not None:
            services.ack_decisions.decide(key, deferred=deferred)


def _acknowledge(ack: Ack, command: dict[str, Any], services: SlackServices) -> None:
    user, channel = command["user_id"], command["channel_id"]
    try:
        parsed = parse_command(command.get("text", ""))
    except InputError as error:
        _ack_reply(ack, MessageReply(error.message, "I could not use that", "problem"))
        return
    conversation = services.conversation
    if isinstance(parsed, AdminCommand) and parsed.check and conversation.is_admin(user):
        # Asking every API server takes seconds: the report follows from the lazy listener.
        _ack_reply(
            ack,
            MessageReply(
                "Checking each kubeconfig context's API server with its credentials "
                "(GET /version); the report follows here in a few seconds.",
                title="Admin: checking kubeconfig contexts",
            ),
        )
        return
    if isinstance(parsed, FleetCommand):
        if conversation.live.clusters_for(user, channel):
            ack()  # collected and answered by the lazy listener (``answer_fleet``)
        else:
            _ack_reply(ack, conversation.fleet(user=user, channel=channel))
        return
    if isinstance(parsed, ClusterCommand):
        problem = conversation.check_cluster_command(parsed, user=user, channel=channel)
        if problem is not None:
            _ack_reply(ack, problem)
        else:
            ack()
        return
    _ack_reply(ack, conversation.answer_command(parsed, user=user, channel=channel))


def answer_command(
    command: dict[str, Any],
    context: BoltContext,
    client: WebClient,
    respond: Respond,
    logger: Logger,
) -> None:
    """Lazy: what follows the acknowledgement. A cluster summary is collected and posted,
    ``admin check`` reports to the admin, and a command whose acknowledgement only said
    "checking access" is answered now; anything else was answered in the acknowledgement."""
    try:
        parsed = parse_command(command.get("text", ""))
    except InputError:
        return  # already answered in the acknowledgement
    services = services_from(context)
    user, channel = command["user_id"], command["channel_id"]
    deferred = _was_deferred(services, deferral_id(command))
    if isinstance(parsed, FleetCommand):
        answer_fleet(services, client, respond, logger, user=user, channel=channel,
                     deferred=deferred)
    elif isinstance(parsed, ClusterCommand):
        _summarize_cluster(parsed, command, services, client, respond, logger, deferred=deferred)
    elif deferred:
        _answer_deferred(parsed, services, respond, logger, user=user, channel=channel)
    elif isinstance(parsed, AdminCommand) and parsed.check:
        _check_kubeconfigs(parsed, services, respond, logger, user=user, channel=channel)


def _summarize_cluster(
    parsed: ClusterCommand,
    command: dict[str, Any],
    services: SlackServices,
    client: WebClient,
    respond: Respond,
    logger: Logger,
    *,
    deferred: bool,
) -> None:
    """Collect and summarise the cluster named in the command, once access is known
    (``deferred``: the acknowledgement said "checking access" and answered nothing else)."""
    user, channel = command["user_id"], command["channel_id"]
    # Reads the user groups the acknowledgement could not wait for (this listener may).
    problem = services.conversation.check_cluster_command(parsed, user=user, channel=channel)
    if problem is not None:
        if deferred:
            # Refused to the asker alone; nothing is posted in the channel.
            run_guarded(
                logger,
                f"refusing /hami-summary {parsed.cluster} for {user}",
                lambda: respond_ephemeral(respond, slack_message(problem)),
            )
        return  # otherwise already answered in the acknowledgement

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


def answer_fleet(
    services: SlackServices,
    client: WebClient,
    respond: Respond,
    logger: Logger,
    *,
    user: str,
    channel: str,
    deferred: bool,
) -> None:
    """``fleet``: a "working on it" message, then one line per cluster the asker may query.
    Without any cluster the acknowledgement has answered, unless it was deferred."""
    conversation = services.conversation

    def answer() -> None:
        if not conversation.live.clusters_for(user, channel):
            if deferred:
                reply = conversation.fleet(user=user, channel=channel)
                respond_ephemeral(respond, slack_message(reply))
            return
        answer_in_thread(
            services=services,
            client=client,
            logger=logger,
            channel=channel,
            thread_ts=None,
            user=user,
            what=f"collecting every cluster you may query here for {mention_user(user)}",
            compute=lambda: conversation.fleet(user=user, channel=channel),
            respond=respond,
            problems_private=True,
        )

    run_guarded(
        logger,
        f"answering /hami-summary fleet for {user} in {channel}",
        answer,
        on_error=lambda message: respond_ephemeral(respond, message),
    )


def _was_deferred(services: SlackServices, key: str | None) -> bool:
    """Whether this command's acknowledgement (running beside this listener) left the answer
    here."""
    return key is not None and services.ack_decisions.deferred(key, ACK_DECISION_WAIT_SECONDS)


def _answer_deferred(
    parsed: Command,
    services: SlackServices,
    respond: Respond,
    logger: Logger,
    *,
    user: str,
    channel: str,
) -> None:
    """The quick answer (clusters, help, picker) the acknowledgement could not give in time."""
    what = f"answering /hami-summary for {user} after reading user groups"
    reply = compute_safely(
        lambda: services.conversation.answer_command(parsed, user=user, channel=channel),
        logger,
        what,
        f"channel {channel}, user {user}",
    )
    if reply is not None:
        run_guarded(logger, what, lambda: respond_ephemeral(respond, slack_message(reply)))


def _check_kubeconfigs(
    parsed: AdminCommand,
    services: SlackServices,
    respond: Respond,
    logger: Logger,
    *,
    user: str,
    channel: str,
) -> None:
    """``admin check`` for an admin, answered to them only (ephemeral)."""
    conversation = services.conversation
    if not conversation.is_admin(user):
        return  # refused in the acknowledgement
    what = f"checking kubeconfig contexts for {user}"
    reply = compute_safely(
        lambda: conversation.admin_report(parsed, user=user, channel=channel),
        logger,
        what,
        f"channel {channel}, user {user}",
    )
    if reply is not None:
        run_guarded(logger, what, lambda: respond_ephemeral(respond, slack_message(reply)))
