"""The answer to ``fit SHAPE``: where a job of that shape would be placed now, for Slack and
the chat (``MessageReply`` text with emphasis held as data; names are written as they are, and
Slack's escaping is done where every Slack message is encoded).

Asked of a cluster (``/hami-summary <cluster> fit SHAPE``) or in a thread (``fit SHAPE``,
against the thread's metrics or cluster and its filter), from the same (cached) summary a
summary would show.
"""

from __future__ import annotations

from bot.conversation.context import Context
from bot.conversation.help import no_metrics_reply
from bot.conversation.parsing import ClusterCommand
from bot.conversation.replies import MessageReply, Reply, SummaryRef, problem_reply
from bot.conversation.rich import Aside, Fixed, Line, Rich, Strong
from bot.conversation.summary import resolve_cluster, summary_for
from bot.conversation.thread_filter import thread_filter
from bot.store.state import ClusterTarget
from core.errors import InputError
from core.fit import FitResult, fit_shape
from core.fit_shape import Shape
from core.model import Summary
from core.summary.filtered import fit_scope
from core.views.fit_view import PLACEMENTS_MEANING, headline, models_line, table_lines
from core.visible_text import visible

SLACK_NODES = 10
NODE_HEADER = ("node", "placements", "GPUs free", "fragmented after")


CODE_WIDTH = 72  # Slack wraps wider code blocks on a laptop screen
NODE_WIDTH = CODE_WIDTH - sum(len(h) + 2 for h in NODE_HEADER[1:])


def short_name(name: str, width: int = NODE_WIDTH) -> str:
    """``name`` within ``width``, cut in the middle so its end (the node number) stays."""
    if len(name) <= width:
        return name
    keep = width - 1
    return name[: keep // 2] + "…" + name[len(name) - (keep - keep // 2) :]


def _node_table(result: FitResult) -> str:
    rows = [
        (
            short_name(fit.node),
            f"{fit.placements:,}",
            f"{fit.gpus_fitting:,}",
            f"{fit.fragmented_after:,}",
        )
        for fit in result.nodes[:SLACK_NODES]
    ]
    return "\n".join(table_lines(rows, NODE_HEADER))


def fit_text(result: FitResult, source_label: str) -> Rich:
    """The body under the headline: where it fits (best first) or why not, and what is near."""
    lines: list[Line] = []
    models = models_line(result)
    if models:
        lines.append(models)
    if result.fits:
        lines.append("Nodes, best first (fewest GPUs left fragmented after placing one job):")
        lines.append(Fixed(_node_table(result)))
        more = len(result.nodes) - SLACK_NODES
        if more > 0:
            lines.append(
                f"… and {more:,} more node(s); `hami-summary fit SHAPE FILE --format json` "
                "lists every one."
            )
        lines.append(Aside(f"{PLACEMENTS_MEANING}."))
    else:
        lines.append((Strong("Why:"), f" {visible(result.reason or '')}"))
        if result.closest:
            lines.append((Strong("Closest:"), f" {visible(result.closest)}"))
    if result.shape.whole_gpu:
        lines.append("A whole GPU needs 100 free cores, all of its memory and no task on it.")
    lines.append(f"From {visible(source_label)}.")
    return Rich(tuple(lines))


def fit_reply(summary: Summary, shape: Shape) -> MessageReply:
    """Where ``shape`` fits; under a filter, on its node (or, for a namespace, anywhere)."""
    gpus, where = fit_scope(summary)
    result = fit_shape(gpus, shape)
    label = summary.source.label + (f", {where}" if where else "")
    return MessageReply(text=fit_text(result, label), title=headline(result))


def cluster_fit(
    ctx: Context, command: ClusterCommand, shape: Shape, *, user: str | None, channel: str | None
) -> MessageReply:
    """``/hami-summary <cluster> fit SHAPE``; ``InputError`` when the cluster cannot be used."""
    option, context = resolve_cluster(ctx, command, user=user, channel=channel)
    target = ClusterTarget(option.name, context, runtime=command.runtime)
    ref = SummaryRef(cluster=target, namespace=command.namespace, node=command.node)
    found = summary_for(ctx, ref, user=user, channel=channel, fresh=command.fresh)
    return fit_reply(found.summary, shape)


def fit_in_thread(
    ctx: Context, shape: Shape, *, channel: str, thread_ts: str, user: str | None
) -> Reply:
    """``fit SHAPE`` in a thread: placed against the thread's metrics or cluster."""
    if ctx.state.thread_subject(channel, thread_ts) is None:
        return no_metrics_reply()
    kept = thread_filter(ctx.state, channel, thread_ts)
    ref = SummaryRef(channel=channel, thread_ts=thread_ts, namespace=kept.namespace, node=kept.node)
    try:
        found = summary_for(ctx, ref, user=user, channel=channel, fresh=False)
    except InputError as error:
        return problem_reply(error)
    return fit_reply(found.summary, shape)
