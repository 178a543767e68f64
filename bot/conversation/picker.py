"""The cluster picker (``/hami-summary`` with no argument): choices remembered one at a time
per user and channel, nothing collected until Confirm."""

from __future__ import annotations

from bot.conversation.context import Context
from bot.conversation.intents import Ack, Plan
from bot.conversation.parsing import ClusterCommand, parse_command
from bot.conversation.replies import ClusterOption, MessageReply, PickerReply, problem_reply
from bot.conversation.summary import resolve_cluster
from bot.store.state import PickerChoice
from core.errors import InputError

NO_CLUSTER_PICKED = MessageReply(
    text="Pick a cluster first, then press Confirm.", tone="problem", title="No cluster"
)


def picker(ctx: Context, *, user: str | None, channel: str) -> PickerReply:
    options = tuple(ctx.live.clusters_for(user, channel))
    choice = ctx.state.picker_choice(user or "", channel)
    return _picker_reply(ctx, options, choice)


def _picker_reply(
    ctx: Context, options: tuple[ClusterOption, ...], choice: PickerChoice
) -> PickerReply:
    names = {option.name: option for option in options}
    cluster = choice.cluster if choice.cluster in names else None
    context = None
    if cluster is not None:
        contexts = names[cluster].contexts
        if choice.context in contexts:
            context = choice.context
        elif len(contexts) == 1:
            context = contexts[0]
    hint = None if options else ctx.live.setup_hint()
    return PickerReply(options, cluster, context, choice.namespace, hint)


def pick(
    ctx: Context,
    *,
    user: str,
    channel: str,
    cluster: str | None = None,
    context: str | None = None,
    namespace: str | None = None,
) -> PickerReply:
    """Remember one picker choice; the picker shown again reflects it. Collects nothing."""
    stored = ctx.state.picker_choice(user, channel)
    if cluster is not None and cluster != stored.cluster:
        stored = PickerChoice(cluster=cluster, context=None, namespace=stored.namespace)
    choice = PickerChoice(
        cluster=stored.cluster,
        context=context if context is not None else stored.context,
        namespace=namespace if namespace is not None else stored.namespace,
    )
    ctx.state.remember_picker(user, channel, choice)
    return _picker_reply(ctx, tuple(ctx.live.clusters_for(user, channel)), choice)


def confirm(
    ctx: Context, *, user: str, channel: str, choice: PickerChoice, usage: bool = False
) -> Ack:
    """The picker's Confirm (``choice`` overrides stored picks), checked without
    collecting anything: the problem to show beside the picker, or the summary to ``run``
    (the picker is then forgotten). ``usage``: the real usage box was ticked."""
    stored = ctx.state.picker_choice(user, channel)
    cluster = choice.cluster or stored.cluster
    context = choice.context or stored.context
    namespace = (choice.namespace or stored.namespace or "").strip() or None
    if cluster is None:
        return Ack(NO_CLUSTER_PICKED)
    try:
        parsed = parse_command(cluster + (f" ns={namespace}" if namespace else ""))
        if not isinstance(parsed, ClusterCommand):
            raise InputError(f"'{cluster}' is not a cluster name.")
        command = ClusterCommand(
            cluster=parsed.cluster, context=context, namespace=parsed.namespace, usage=usage
        )
        resolve_cluster(ctx, command, user=user, channel=channel)
    except InputError as error:
        return Ack(problem_reply(error))
    ctx.state.forget_picker(user, channel)
    return Ack(plan=Plan(command, user, channel))


def cancel(ctx: Context, *, user: str, channel: str) -> None:
    """The picker's Cancel: its choices are forgotten."""
    ctx.state.forget_picker(user, channel)
