"""The Home tab's fit form submitted: the shape is checked in the acknowledgement (a bad one is
shown under the field, the form stays open), the placement answered in the user's DM."""

from __future__ import annotations

from logging import Logger
from typing import Any

from slack_bolt import Ack, BoltContext
from slack_sdk import WebClient

from bot.conversation.parsing import ClusterCommand
from bot.slack.answer import run_guarded
from bot.slack.home_view import (
    FIT_SHAPE_BLOCK,
    FIT_SHAPE_INPUT,
    read_cluster_value,
    shape_error,
)
from bot.slack.listeners.actions.home_buttons import answer_in_dm
from bot.slack.markup import mention_user
from bot.slack.services import services_from
from core.errors import InputError
from core.fit_shape import Shape, parse_shape


def _submitted(view: dict[str, Any]) -> tuple[str, str | None, Shape]:
    """(cluster, context, shape) of a submitted form; ``InputError`` naming what is wrong."""
    values = ((view.get("state") or {}).get("values") or {}).get(FIT_SHAPE_BLOCK) or {}
    text = str((values.get(FIT_SHAPE_INPUT) or {}).get("value") or "").strip()
    if not text:
        raise InputError("Type a job shape, e.g. 8xH100.")
    cluster, context = read_cluster_value(str(view.get("private_metadata") or ""))
    return cluster, context, parse_shape(text)


def check_fit_form(ack: Ack, view: dict[str, Any]) -> None:
    try:
        _submitted(view)
    except InputError as error:
        ack(**shape_error(error.message))
        return
    ack()


def answer_fit_form(
    body: dict[str, Any],
    view: dict[str, Any],
    context: BoltContext,
    client: WebClient,
    logger: Logger,
) -> None:
    try:
        cluster, cluster_context, shape = _submitted(view)
    except InputError:
        return  # refused in the acknowledgement, under the field
    user = str(body["user"]["id"])
    services = services_from(context)
    run_guarded(
        logger,
        f"fit from the Home tab for {user}",
        lambda: answer_in_dm(
            services,
            client,
            logger,
            user=user,
            what=f"placing {shape.describe()} in *{cluster}* for {mention_user(user)}",
            command=ClusterCommand(cluster, cluster_context, fit=shape),
        ),
    )
