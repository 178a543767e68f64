"""A summary and the tables, files and chart of it: of a registered cluster (the command
``/hami-summary <cluster>``), or of the metrics a thread was given.

``summary_for`` finds the summary a ``SummaryRef`` points at; ``answer`` shows it in the form
a follow-up or a button asks (``FollowUpAction``). A cluster is named only when the asker
may query it here (``resolve_cluster``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from bot.conversation.attachments import chart_attachment, chart_title, full_table_attachments
from bot.conversation.clusters import LiveRequest, nvidia_smi_refusal, runtime_refusal
from bot.conversation.context import Context
from bot.conversation.formatting import (
    CODE_BLOCK_WIDTH,
    WIDE,
    gpu_sections,
    of_filter,
    real_usage_section,
    usage_headline,
    workload_sections,
)
from bot.conversation.parsing import COMMAND_USAGE, ClusterCommand, FollowUpAction
from bot.conversation.replies import (
    ClusterOption,
    FilesReply,
    MessageReply,
    Reply,
    SummaryRef,
    SummaryReply,
    TableReply,
    TableSection,
    problem_reply,
)
from bot.store.state import ClusterTarget
from core.errors import InputError
from core.model import Summary
from core.pending.pending_list import PendingCount

NO_USAGE_FOR_PASTED = MessageReply(
    title="No real usage for pasted metrics",
    text=(
        "Real usage comes from running nvidia-smi in the pods of a registered "
        "cluster; pasted metrics have no pods to ask. Use `/hami-summary <cluster> "
        "usage` for a cluster whose registry entry allows it (`/hami-summary "
        "clusters` lists them), or mention me with `usage` in the thread of a "
        "cluster summary."
    ),
    tone="problem",
)


@dataclass(frozen=True, slots=True)
class FoundSummary:
    """A summary a reference points at, with what the reply says about it."""

    summary: Summary
    age_seconds: float | None
    notes: tuple[str, ...] = ()
    usage_allowed: bool = False  # the cluster's registry entry allows nvidia-smi
    pending: PendingCount | None = None  # a cluster's pods pending on HAMi's resources


def summary_reply(ref: SummaryRef, found: FoundSummary) -> SummaryReply:
    """The reply for a summary: its chart, notes, and real usage offered where it could be
    had (a cluster that allows nvidia-smi, a summary without it)."""
    summary = found.summary
    return SummaryReply(
        summary,
        ref,
        found.age_seconds,
        attachments=(chart_attachment(summary),),
        notes=found.notes,
        usage_available=(
            ref.cluster is not None and found.usage_allowed and summary.real_usage is None
        ),
        pending=found.pending,
    )


def resolve_cluster(
    ctx: Context, command: ClusterCommand, *, user: str | None, channel: str | None
) -> tuple[ClusterOption, str | None]:
    """The cluster ``command`` names and the context to collect from; ``InputError`` when the
    asker may not query it here, or the context is unknown or must be chosen."""
    options = ctx.live.clusters_for(user, channel)
    by_name = {option.name.lower(): option for option in options}
    option = by_name.get(command.cluster.lower())
    if option is None:
        # Only the clusters this person may query are named: others stay private.
        allowed = ", ".join(f"`{o.name}`" for o in options)
        known = (
            f" Clusters you may query here: {allowed}."
            if allowed
            else (" " + ctx.live.setup_hint())
        )
        # Access that could not be checked (e.g. user groups without the scope to read
        # them) is said plainly, so the refusal is not mistaken for a decision.
        unchecked = "".join(" " + note for note in ctx.live.access_notes(user, channel))
        raise InputError(
            f"'{command.cluster}' is not a cluster you may query here.{known}{unchecked}"
        )
    context = command.context
    if context is not None and option.contexts and context not in option.contexts:
        raise InputError(
            f"Cluster '{option.name}' has no context '{context}'. Its contexts: "
            + ", ".join(f"`{c}`" for c in option.contexts)
            + "."
        )
    if context is None and len(option.contexts) == 1:
        context = option.contexts[0]
    if context is None and len(option.contexts) > 1:
        # Collect only from the context the user picked: never guess which one they meant.
        raise InputError(
            f"Cluster '{option.name}' has several contexts ("
            + ", ".join(f"`{c}`" for c in option.contexts)
            + f"). Add context=NAME to the command ({COMMAND_USAGE}) or use `/hami-summary` "
            "to pick one."
        )
    if command.runtime and not option.runtime_allowed:
        raise InputError(runtime_refusal(option.name, option.defined_at))
    if command.usage and not option.nvidia_smi_allowed:
        raise InputError(nvidia_smi_refusal(option.name, option.defined_at))
    return option, context


def cluster_problem(
    ctx: Context, command: ClusterCommand, *, user: str | None, channel: str
) -> MessageReply | None:
    """A problem with ``command`` found without collecting (unknown cluster, context...)."""
    try:
        resolve_cluster(ctx, command, user=user, channel=channel)
    except InputError as error:
        return problem_reply(error)
    return None


def summary_for(
    ctx: Context, ref: SummaryRef, *, user: str | None, channel: str | None, fresh: bool
) -> FoundSummary:
    """The summary ``ref`` points at, its data age in seconds, and notes on the source."""
    if ref.cluster is not None:
        result = ctx.live.summarize(
            LiveRequest(
                cluster=ref.cluster.cluster,
                context=ref.cluster.context,
                user=user,
                channel=channel,
                namespace=ref.namespace,
                node=ref.node,
                runtime=ref.cluster.runtime,
                fresh=fresh,
                usage=ref.cluster.usage,
            )
        )
        return FoundSummary(
            result.summary,
            result.age_seconds,
            result.notes,
            usage_allowed=result.usage_allowed,
            pending=result.pending,
        )
    subject = (
        ctx.state.thread_subject(ref.channel, ref.thread_ts)
        if ref.channel and ref.thread_ts
        else None
    )
    if isinstance(subject, ClusterTarget):
        return summary_for(
            ctx,
            replace(ref, cluster=subject, channel=None, thread_ts=None),
            user=user,
            channel=channel,
            fresh=fresh,
        )
    if subject is None:
        raise InputError(
            "I no longer have the metrics of that summary (thread metrics are kept for "
            "24 h). Paste or attach them again."
        )
    summary = ctx.summarize_pasted(subject, namespace=ref.namespace, node=ref.node)
    return FoundSummary(summary, max(0.0, ctx.state.now() - subject.given_at))


def cluster_summary(
    ctx: Context, command: ClusterCommand, *, user: str | None, channel: str | None
) -> SummaryReply:
    """``/hami-summary <cluster> [ns=..] [node=..] [runtime] [usage] [fresh]``."""
    option, context = resolve_cluster(ctx, command, user=user, channel=channel)
    target = ClusterTarget(option.name, context, runtime=command.runtime, usage=command.usage)
    ref = SummaryRef(cluster=target, namespace=command.namespace, node=command.node)
    found = summary_for(ctx, ref, user=user, channel=channel, fresh=command.fresh)
    return summary_reply(ref, found)


def _table_reply(
    summary: Summary,
    title: str,
    sections: Callable[[Summary], tuple[TableSection, ...]],
    filename: str,
    rows: int,
) -> TableReply:
    """A full table, with every column in files and terminals and laid out for a code block;
    a real-usage summary's also carries every pod's real usage after it."""
    shown = sections(summary)
    usage = real_usage_section(summary)
    if usage is not None:
        title = f"{title}, with real usage per pod"
        shown = (*shown, usage)
        rows += len(summary.real_usage or ())
    return TableReply(title, shown, filename, rows, WIDE, screen_width=CODE_BLOCK_WIDTH)


def answer(
    ctx: Context, ref: SummaryRef, action: FollowUpAction, *, user: str | None, channel: str
) -> Reply:
    """The summary ``ref`` points at, shown as ``action`` asks: the summary itself, every GPU,
    every workload, the full tables as files, or the chart (``refresh`` collects again)."""
    try:
        found = summary_for(ctx, ref, user=user, channel=channel, fresh=action == "refresh")
    except InputError as error:
        return problem_reply(error)
    summary = found.summary
    # A real-usage summary's follow-ups keep its real usage (the same nvidia-smi reading).
    headline = usage_headline(summary)
    label, scope = summary.source.label, of_filter(summary)
    if action == "gpus":
        what = " and their shares" if summary.focus and summary.focus.namespace else ""
        return _table_reply(
            summary,
            f"All {len(summary.gpus):,} GPUs{scope}{what} ({label})",
            gpu_sections,
            "hami-gpus.txt",
            len(summary.gpus),
        )
    if action == "workloads":
        return _table_reply(
            summary,
            f"All {len(summary.workloads):,} workload allocations{scope} ({label})",
            workload_sections,
            "hami-workloads.txt",
            len(summary.workloads),
        )
    if action == "csv":
        runtime = ", the runtime tables" if summary.runtime is not None else ""
        usage = ", real usage" if summary.real_usage is not None else ""
        return FilesReply(
            text=(
                f"Full tables of {label}{scope}: GPUs and workloads as CSV{runtime}"
                f" and every table (nodes and namespaces too{usage}) as text."
                + (f" {headline}." if headline else "")
            ),
            attachments=full_table_attachments(summary),
        )
    if action == "chart":
        return FilesReply(
            text=f"{chart_title(summary)} ({label})." + (f" {headline}." if headline else ""),
            attachments=(chart_attachment(summary),),
        )
    return summary_reply(ref, found)
