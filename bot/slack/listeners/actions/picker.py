"""The ephemeral cluster picker: choose cluster, context and namespace, then Confirm.

Choices are remembered per user and channel (``BotState``) as they are made; the Confirm
payload's ``state.values`` take precedence. Nothing is collected before Confirm: a scrape costs
the cluster's API server, so it waits for the final choice of cluster and context.
"""

from __future__ import annotations

from logging import Logger
from typing import Any

from slack_bolt import Ack, BoltContext, Respond
from slack_sdk import WebClient

from bot.slack.answer import respond_ephemeral, run_guarded
from bot.slack.messages import (
    PICKER_CLUSTER,
    PICKER_CONTEXT,
    PICKER_NAMESPACE,
    PICKER_USAGE,
    USAGE_OPTION_VALUE,
    slack_message,
)
from bot.slack.plans import carry_out
from bot.slack.services import services_from
from bot.store.state import PickerChoice


def acknowledge_action(ack: Ack) -> None:
    ack()


def _ids(body: dict[str, Any]) -> tuple[str, str]:
    return str(body["user"]["id"]), str((body.get("channel") or {}).get("id") or "")


def _selected(action: dict[str, Any]) -> str | None:
    option = action.get("selected_option") or {}
    value = option.get("value")
    return value if isinstance(value, str) and value else None


def _state_element(body: dict[str, Any], block_id: str) -> dict[str, Any]:
    """One input's value from a block_actions payload (``state.values[block][action]``)."""
    values = (body.get("state") or {}).get("values") or {}
    found = (values.get(block_id) or {}).get(block_id) or {}
    return found if isinstance(found, dict) else {}


def picker_state(body: dict[str, Any]) -> PickerChoice:
    """The picker's current values from a block_actions payload (``state.values``)."""

    def element(block_id: str) -> dict[str, Any]:
        return _state_element(body, block_id)

    namespace = element(PICKER_NAMESPACE).get("value")
    return PickerChoice(
        cluster=_selected(element(PICKER_CLUSTER)),
        context=_selected(element(PICKER_CONTEXT)),
        namespace=namespace.strip() if isinstance(namespace, str) and namespace.strip() else None,
    )


def usage_ticked(body: dict[str, Any]) -> bool:
    """Whether the picker's "real usage" box was ticked when Confirm was pressed."""
    selected = _state_element(body, PICKER_USAGE).get("selected_options") or []
    return any(
        isinstance(option, dict) and option.get("value") == USAGE_OPTION_VALUE
        for option in selected
    )


def choose_cluster(
    body: dict[str, Any],
    action: dict[str, Any],
    context: BoltContext,
    respond: Respond,
    logger: Logger,
) -> None:
    """Lazy: remember the cluster and show the picker again with that cluster's contexts."""
    services = services_from(context)
    user, channel = _ids(body)

    def show() -> None:
        reply = services.conversation.pick(user=user, channel=channel, cluster=_selected(action))
        respond_ephemeral(respond, slack_message(reply), replace=True)

    run_guarded(
        logger,
        f"updating the picker for {user} in {channel}",
        show,
        on_error=lambda message: respond_ephemeral(respond, message),
    )


def choose_context(
    ack: Ack, body: dict[str, Any], action: dict[str, Any], context: BoltContext
) -> None:
    ack()
    services = services_from(context)
    user, channel = _ids(body)
    services.conversation.pick(user=user, channel=channel, context=_selected(action))


def confirm_picker(
    body: dict[str, Any],
    context: BoltContext,
    client: WebClient,
    respond: Respond,
    logger: Logger,
) -> None:
    """Lazy: check the choice, close the picker, then collect and post the summary."""
    services = services_from(context)
    user, channel = _ids(body)
    conversation = services.conversation

    def confirm() -> None:
        decision = conversation.confirm(
            user=user, channel=channel, choice=picker_state(body), usage=usage_ticked(body)
        )
        if decision.reply is not None:
            # Keep the picker; the problem shows beside it.
            respond_ephemeral(respond, slack_message(decision.reply))
        if decision.plan is None:
            return
        respond(delete_original=True)
        carry_out(decision.plan, services, client, respond, logger)

    run_guarded(
        logger,
        f"confirming the picker for {user} in {channel}",
        confirm,
        on_error=lambda message: respond_ephemeral(respond, message),
    )


def cancel_picker(body: dict[str, Any], context: BoltContext, respond: Respond) -> None:
    services = services_from(context)
    user, channel = _ids(body)
    services.conversation.cancel_picker(user=user, channel=channel)
    respond(delete_original=True)
