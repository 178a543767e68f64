"""Carrying out a conversation's ``Plan`` in Slack: the lazy half of a request.

A public plan (a cluster summary, the fleet view) posts "working on it" in the channel and
replaces it with the answer; a private one (``admin check``) answers only the asker. A plan
acknowledged before access was known is decided first: a refusal then reaches only the asker,
and nothing is posted in the channel.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from slack_bolt import Respond
from slack_sdk import WebClient

from bot.conversation.intents import Plan
from bot.conversation.parsing import ClusterCommand, FleetCommand
from bot.conversation.replies import internal_error_reply, new_error_id
from bot.slack.answer import answer_in_thread, collecting_what, compute_safely, respond_ephemeral
from bot.slack.markup import mention_user
from bot.slack.messages import slack_message
from bot.slack.services import SlackServices


def working_words(plan: Plan, user: str) -> str:
    """The "working on it" words of a public plan."""
    command = plan.command
    if isinstance(command, ClusterCommand) and command.why is not None:
        return f"reading pod {command.why} of *{command.cluster}* for {mention_user(user)}"
    if isinstance(command, ClusterCommand) and command.pending:
        return f"listing the pending pods of *{command.cluster}* for {mention_user(user)}"
    if isinstance(command, ClusterCommand):
        return collecting_what(command.cluster, user, usage=command.usage)
    if isinstance(command, FleetCommand):
        return f"collecting every cluster you may query here for {mention_user(user)}"
    return f"answering for {mention_user(user)}"


def carry_out(
    plan: Plan,
    services: SlackServices,
    client: WebClient,
    respond: Respond,
    logger: logging.Logger,
    *,
    thread_ts: str | None = None,
) -> None:
    """Run ``plan`` and show its answer (``thread_ts``: the thread to post it in)."""
    conversation = services.conversation
    user = plan.user or ""
    where = f"channel {plan.channel}, user {user}"
    if not plan.decided:
        try:
            decision = conversation.decide(plan)
        except Exception:
            error_id = new_error_id()
            logger.exception("error %s deciding after reading user groups (%s)", error_id, where)
            respond_ephemeral(respond, slack_message(internal_error_reply(error_id)))
            return
        if decision.reply is not None:
            respond_ephemeral(respond, slack_message(decision.reply))
        if decision.plan is None:
            return
        plan = decision.plan
    decided = plan
    if not decided.public:
        reply = compute_safely(lambda: conversation.run(decided), logger, "answering", where)
        if reply is not None:
            respond_ephemeral(respond, slack_message(reply))
        return
    answer_in_thread(
        client=client,
        logger=logger,
        channel=decided.channel,
        thread_ts=thread_ts,
        user=user,
        what=working_words(decided, user),
        compute=lambda shown_in: conversation.run(replace(decided, thread_ts=shown_in)),
        respond=respond,
        problems_private=True,
    )
