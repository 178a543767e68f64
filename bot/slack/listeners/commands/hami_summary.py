"""``/hami-summary [help | clusters | fleet | admin [check] | <cluster> [ns=..] [node=..]
[runtime] [usage] [fresh]]``: the payload becomes a ``CommandIntent``; the conversation decides.

The acknowledgement shows what ``Conversation.handle`` answers at once and keeps its plan in the
request context. The app runs with ``process_before_response``, so Bolt copies that context for
the lazy listener after the acknowledgement has returned; the lazy listener carries the plan out
(``bot.slack.plans``).
"""

from __future__ import annotations

from logging import Logger
from typing import Any

from slack_bolt import Ack, BoltContext, Respond
from slack_sdk import WebClient

from bot.conversation.intents import CommandIntent, Plan
from bot.conversation.replies import Reply, internal_error_reply, new_error_id
from bot.slack.answer import respond_ephemeral, run_guarded
from bot.slack.incoming import typed_text
from bot.slack.messages import slack_message
from bot.slack.plans import carry_out
from bot.slack.services import services_from
from bot.slack.usergroups import ACK_WAIT_SECONDS, wait_at_most

# Where the acknowledgement leaves its plan for the lazy listener (Bolt copies the context).
PLAN_KEY = "hami_summary_plan"


def _ack_reply(ack: Ack, reply: Reply | None) -> None:
    if reply is None:
        ack()
        return
    message = slack_message(reply)
    ack(text=message.text, blocks=message.blocks, response_type="ephemeral")


def command_intent(command: dict[str, Any]) -> CommandIntent:
    """The slash command payload as the conversation reads it (the text as typed)."""
    return CommandIntent(
        typed_text(str(command.get("text") or "")),
        user=str(command["user_id"]),
        channel=str(command["channel_id"]),
    )


def acknowledge_command(
    ack: Ack, command: dict[str, Any], context: BoltContext, logger: Logger
) -> None:
    """Answer at once what needs no collection; leave the rest to the lazy listener.

    Access is decided from cached user-group membership; when some group cannot be read within
    ``ACK_WAIT_SECONDS``, the conversation acknowledges "checking access" and decides in the
    lazy listener, after the lookups.
    """
    try:
        services = services_from(context)
        with wait_at_most(ACK_WAIT_SECONDS):
            decision = services.conversation.handle(command_intent(command))
        if decision.plan is not None and not decision.plan.decided:
            logger.info(
                "acknowledged %s before reading user groups %s; answering after",
                command.get("command"),
                ", ".join(decision.plan.waiting_for),
            )
        _ack_reply(ack, decision.reply)
        # Only once acknowledged: after an error the acknowledgement apologises instead.
        context[PLAN_KEY] = decision.plan
    except Exception:
        error_id = new_error_id()
        logger.exception("error %s acknowledging %s", error_id, command.get("command"))
        _ack_reply(ack, internal_error_reply(error_id))


def answer_command(
    command: dict[str, Any],
    context: BoltContext,
    client: WebClient,
    respond: Respond,
    logger: Logger,
) -> None:
    """Lazy: carry out the plan the acknowledgement left (nothing when it answered all)."""
    plan = context.get(PLAN_KEY)
    if not isinstance(plan, Plan):
        return
    services = services_from(context)
    run_guarded(
        logger,
        f"answering /hami-summary for {plan.user} in {plan.channel}",
        lambda: carry_out(plan, services, client, respond, logger),
        on_error=lambda message: respond_ephemeral(respond, message),
    )
