"""The summary as a Slack Block Kit message, built with slack_sdk's block models.

Slack's limits (https://api.slack.com/reference/block-kit/blocks): at most 50 blocks per message,
section text at most 3,000 characters, at most 10 fields of at most 2,000 characters, header text
at most 150. Every list is cut to fit those limits and says how much it left out; whatever did not
fit is listed in ``SummaryMessage.omitted`` so the sender attaches the full tables as files
(issue 3: never silently cut). The models validate themselves when serialised (``to_dict``).

Names and messages go in as plain text, never escaped here: ``bot.slack.markup`` encodes every
text object on its way out (``SlackMessage``, ``summary_blocks``). Budgets count the encoded
length, so a table full of ``<`` and ``&`` still fits its section.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    DividerBlock,
    HeaderBlock,
    MarkdownTextObject,
    PlainTextObject,
    SectionBlock,
)

from bot.conversation.formatting import (
    USAGE_HEADER,
    code_block,
    filter_text,
    fixed_width,
    given_text,
    usage_class_counts,
    usage_failure_lines,
    usage_read,
    usage_row,
)
from bot.conversation.help import ALLOCATION_NOTE
from bot.slack.markup import encode_blocks, escaped_length
from core.model import GpuSummary, Summary
from core.views.runtime_csv import gpus_by_uuid
from core.views.tables import age_text, num, pct, short_uuid
from core.views.visible_text import visible

MAX_BLOCKS = 50
SECTION_TEXT_MAX = 3000
FIELD_TEXT_MAX = 2000
MAX_FIELDS = 10
HEADER_TEXT_MAX = 150
CONTEXT_TEXT_MAX = 2000
BUTTON_VALUE_MAX = 2000
# Fallback ``text`` of chat.postMessage is shown in notifications; Slack truncates at 40,000.
FALLBACK_TEXT_MAX = 3000

# Buttons under every summary: (action_id, label). The action ids are matched in
# ``bot.slack.listeners.actions``.
SUMMARY_BUTTONS = (
    ("summary_refresh", "Refresh"),
    ("summary_gpus", "GPUs"),
    ("summary_workloads", "Workloads"),
    ("summary_csv", "CSV"),
)
# After them, under an allocation-only summary of a cluster whose registry entry allows
# nvidia-smi: the same cluster, context and filters again with real usage, in place.
USAGE_BUTTON = ("summary_usage", "Real usage")

DEFAULT_OVERFLOW_HINT = "full tables in the files attached in this thread"
# Nodes named per job shape in the capacity outlook; the rest are counted.
CAPACITY_NODES_SHOWN = 3
# Next to the sections a namespace or node filter does not narrow.
WHOLE_CLUSTER = "whole cluster, not filtered"


def count(number: int, noun: str, plural_noun: str | None = None) -> str:
    """``1 pod`` / ``2 pods``."""
    return f"{number:,} {noun if number == 1 else plural_noun or noun + 's'}"


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, marking the cut with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class SummaryMessage:
    blocks: list[dict[str, Any]]
    text: str
    omitted: tuple[str, ...]


def _section(text: str, block_id: str | None = None) -> SectionBlock:
    return SectionBlock(
        text=MarkdownTextObject(text=clip(text, SECTION_TEXT_MAX)), block_id=block_id
    )


def _context(text: str) -> ContextBlock:
    return ContextBlock(elements=[MarkdownTextObject(text=clip(text, CONTEXT_TEXT_MAX))])


def _lines_section(
    title: str,
    lines: Sequence[str],
    *,
    noun: str,
    overflow_hint: str,
    omitted: list[str],
    table_header: str | None = None,
) -> SectionBlock:
    """A titled list that fits in one section; rows that do not fit are counted, not dropped.

    With ``table_header`` the rows are shown as a fixed-width table in a code block. Each line
    stays one line whatever the names in it hold (control characters are shown escaped).
    """
    fences = 6 if table_header is not None else 0
    reserve = (escaped_length(title) + fences + escaped_length(table_header or "")
               + escaped_length(overflow_hint) + 80)
    budget = SECTION_TEXT_MAX - reserve
    shown: list[str] = []
    used = 0
    for line in map(visible, lines):
        cost = escaped_length(line) + 1
        if used + cost > budget:
            break
        shown.append(line)
        used += cost
    text = title
    if shown and table_header is not None:
        text += "\n" + code_block("\n".join([table_header, *shown]))
    elif shown:
        text += "\n" + "\n".join(shown)
    left_out = len(lines) - len(shown)
    if left_out > 0:
        text += f"\n…and {left_out:,} more {noun} ({overflow_hint})"
        omitted.append(f"{left_out} {noun}")
    return _section(text)


def _when_text(summary: Summary, age_seconds: float | None) -> str:
    """The time of scrape and its age (SPEC 12.1), worded like the text report."""
    src = summary.source
    if src.kind == "cluster":
        fetched = src.fetched_at
        if fetched is None and age_seconds is not None:
            fetched = datetime.now(UTC) - timedelta(seconds=max(0.0, age_seconds))
        return age_text(fetched)
    # Pasted text and files carry no scrape time; a follow-up answered later also says when
    # the metrics were given.
    when = age_text(src.fetched_at, verb="saved" if src.kind == "file" else "scraped")
    if src.fetched_at is None and age_seconds:
        when += f"; {given_text(age_seconds)}"
    return when


def _source_line(summary: Summary, age_seconds: float | None) -> str:
    src = summary.source
    if src.kind == "cluster":
        where = f"cluster *{src.cluster or src.label}*"
        if src.context:
            where += f" (context `{src.context}`)"
    else:
        where = src.label
    inp = summary.input
    parts = [
        f"Source: {where}",
        _when_text(summary, age_seconds),
        f"{inp.surface} metric names from {', '.join(inp.components) or 'no HAMi exporter'}",
    ]
    if inp.hami_version:
        parts.append(f"HAMi {inp.hami_version}")
    filters = filter_text(summary)
    if filters:
        parts.append(f"filter `{filters}`")
    return visible(" · ".join(parts))


def _overview_fields(summary: Summary) -> list[MarkdownTextObject]:
    c = summary.cluster
    values = [
        ("Nodes · GPUs", f"{count(c.nodes, 'node')} · {count(c.gpus, 'GPU')}"),
        (
            "Cores allocated",
            f"{num(c.core_allocated)} / {num(c.core_limit)} cores "
            f"({pct(c.core_allocated_percent)})",
        ),
        (
            "Memory allocated",
            f"{num(c.mem_allocated_mib)} / {num(c.mem_limit_mib)} MiB "
            f"({pct(c.mem_allocated_percent)})",
        ),
        (
            "GPU states",
            f"idle {c.idle_gpus} · partial {c.partial_gpus} · full {c.full_gpus} · "
            f"inconsistent {c.inconsistent_gpus}",
        ),
        ("Sharing", f"{c.shared_gpus} shared · {c.exclusive_gpus} exclusive"),
        (
            "Free",
            f"{count(c.free_whole_gpus, 'whole GPU')} · {num(c.free_cores)} cores · "
            f"{num(c.free_mem_mib)} MiB",
        ),
        ("Distribution", c.distribution),
        ("Workloads", f"{count(c.pods, 'pod')} in {count(c.namespaces, 'namespace')}"),
    ]
    return [
        MarkdownTextObject(text=clip(f"*{name}*\n{value}", FIELD_TEXT_MAX))
        for name, value in values[:MAX_FIELDS]
    ]


def _node_lines(summary: Summary) -> tuple[str, list[str]]:
    rows = [
        [
            n.node,
            str(n.gpus),
            f"{num(n.core_allocated)}/{num(n.core_limit)}",
            f"{num(n.mem_allocated_mib)}/{num(n.mem_limit_mib)}",
            f"{n.idle_gpus}/{n.partial_gpus}/{n.full_gpus}/{n.inconsistent_gpus}",
            f"{num(n.largest_free_cores)}c {num(n.largest_free_mem_mib)}MiB",
            n.verdict,
        ]
        for n in sorted(summary.nodes, key=lambda n: (-n.free_cores, -n.free_mem_mib, n.node))
    ]
    header = ("node", "GPUs", "cores", "mem MiB", "I/P/F/X", "largest free", "verdict")
    table = fixed_width(header, rows, {1, 2, 3}).splitlines()
    return table[0], table[1:]


def gpus_that_matter(summary: Summary) -> list[GpuSummary]:
    """Full, shared, inconsistent or overcommitted GPUs, the most pressing first (issue 3)."""

    def order(g: GpuSummary) -> tuple[int, str, int]:
        rank = {"inconsistent": 1, "full": 2, "partial": 3, "idle": 4}.get(g.state, 5)
        if "overcommitted" in g.flags:
            rank = 0
        return rank, g.node, g.device_index

    chosen = [
        g
        for g in summary.gpus
        if g.state in ("full", "inconsistent") or g.shared_count > 1 or "overcommitted" in g.flags
    ]
    return sorted(chosen, key=order)


def _gpu_lines(gpus: Sequence[GpuSummary]) -> tuple[str, list[str]]:
    rows = [
        [
            g.node,
            str(g.device_index),
            f"{num(g.core_allocated)}/{num(g.core_limit)}",
            f"{num(g.mem_allocated_mib)}/{num(g.mem_limit_mib)}",
            str(g.shared_count),
            g.state,
            ",".join(g.flags),
        ]
        for g in gpus
    ]
    header = ("node", "idx", "cores", "mem MiB", "ctrs", "state", "flags")
    table = fixed_width(header, rows, {1, 2, 3, 4}).splitlines()
    return table[0], table[1:]


def _namespace_lines(summary: Summary) -> list[str]:
    lines = []
    for ns in sorted(summary.namespaces, key=lambda n: (-n.cores, -n.mem_mib, n.namespace)):
        quota = "; ".join(
            f"{q.resource.split('/')[-1]} {num(q.used)}/"
            + (num(q.limit) if q.limit is not None else "no limit")
            for q in ns.quota
        )
        line = (
            f"• *{ns.namespace}* — {num(ns.cores)} cores "
            f"({pct(ns.core_share_percent)}), {num(ns.mem_mib)} MiB "
            f"({pct(ns.mem_share_percent)}), {count(len(ns.pods), 'pod')} on "
            f"{count(ns.gpus_touched, 'GPU')}"
            f" · _{ns.usage_class}_"
        )
        if quota:
            line += f" · quota {quota}"
        if ns.totals_from == "quota":
            line += " (from quota metrics)"
        lines.append(line)
    return lines


def _capacity_lines(summary: Summary) -> list[str]:
    lines = []
    for shape in summary.capacity:
        named = shape.nodes[:CAPACITY_NODES_SHOWN]
        where = ", ".join(f"{node} ×{n}" for node, n in named)
        # ``nodes`` holds only the top few; ``node_count`` is every node with a placement.
        more = shape.node_count - len(named)
        if more > 0:
            where += f" +{count(more, 'more node')}"
        if shape.placements:
            lines.append(
                f"• {shape.name}: *{count(shape.placements, 'placement')}* "
                f"({where})"
            )
        else:
            lines.append(f"• {shape.name}: does not fit anywhere now")
    return lines


def _real_usage_blocks(
    summary: Summary, *, overflow_hint: str, omitted: list[str]
) -> list[Block]:
    """Real usage (SPEC 11): the pods nvidia-smi could read as a table, most actionable first,
    and those it could not, grouped by cause with an example of what went wrong."""
    usage = summary.real_usage or ()
    read = usage_read(summary)
    title = f"*Real usage (nvidia-smi, point in time)*{_scope_title(summary)}"
    if not usage:
        return [_section(f"{title}\nNo pod with a HAMi allocation to read.")]
    classes = " · ".join(f"{name} {n}" for name, n in usage_class_counts(summary))
    heading = (
        f"{title}: {count(len(read), 'pod')} read of {len(usage):,}"
        + (f" · {classes}" if read else "")
        + "\nEfficiency = memory used / memory HAMi allocated to the pod."
    )
    blocks: list[Block] = []
    if read:
        rows = [usage_row(u) for u in read]
        table = fixed_width(USAGE_HEADER, rows, {1, 2, 3}).splitlines()
        blocks.append(_lines_section(heading, table[1:], noun="pods read",
                                     overflow_hint=overflow_hint, omitted=omitted,
                                     table_header=table[0]))
    else:
        blocks.append(_section(heading))
    failures = usage_failure_lines(summary)
    if failures:
        unread = len(usage) - len(read)
        blocks.append(_lines_section(
            f"*Could not read {count(unread, 'pod')}*, by cause:",
            [f"• {line}" for line in failures],
            noun="causes", overflow_hint=overflow_hint, omitted=omitted,
        ))
    return blocks


def _host_gpu_lines(summary: Summary) -> tuple[str, list[str]]:
    """Host GPUs as the vGPU monitor measured them, next to what the scheduler allocated on the
    same device (joined by UUID)."""
    runtime = summary.runtime
    scheduler = gpus_by_uuid(summary)
    rows = []
    for host in runtime.host_gpus if runtime else ():
        gpu = scheduler.get(host.device_uuid)
        if gpu is not None:
            allocated = [f"{num(gpu.core_allocated)}/{num(gpu.core_limit)}",
                         f"{num(gpu.mem_allocated_mib)}/{num(gpu.mem_limit_mib)}", gpu.state]
        else:
            known = "scheduled" if host.scheduler_device_known else "not in scheduler"
            allocated = ["-", "-", known]
        rows.append([
            f"{host.node}/{host.device_index}",
            _mib_or_na(host.mem_used_mib),
            _percent_or_na(host.utilization_percent),
            *allocated,
        ])
    header = ("node/GPU", "used MiB", "util", "alloc cores", "alloc MiB", "state")
    table = fixed_width(header, rows, {1, 2, 3, 4}).splitlines()
    return table[0], table[1:]


def _container_lines(summary: Summary) -> tuple[str, list[str]]:
    """Containers on vGPUs: memory used of their vGPU limit, SM utilisation, last kernel."""
    runtime = summary.runtime
    scheduler = gpus_by_uuid(summary)
    rows = []
    for ctr in runtime.containers if runtime else ():
        gpu = scheduler.get(ctr.device_uuid)
        where = f"{gpu.node}/{gpu.device_index}" if gpu is not None else short_uuid(
            ctr.device_uuid)
        last_kernel = (
            f"{ctr.seconds_since_last_kernel:,.0f} s ago"
            if ctr.seconds_since_last_kernel is not None
            else "none yet"
        )
        rows.append([
            f"{ctr.namespace}/{ctr.pod}",
            ctr.container,
            where,
            f"{_mib_or_na(ctr.mem_used_mib)}/{_mib_or_na(ctr.mem_limit_mib)}",
            _percent_or_na(ctr.mem_used_percent),
            _percent_or_na(ctr.sm_utilization_percent),
            last_kernel,
        ])
    header = ("pod", "container", "GPU", "used/limit MiB", "used", "SM", "last kernel")
    table = fixed_width(header, rows, {3, 4, 5, 6}).splitlines()
    return table[0], table[1:]


def _mib_or_na(value: float | None) -> str:
    return num(value) if value is not None else "n/a"


def _percent_or_na(value: float | None) -> str:
    return pct(value) if value is not None else "n/a"


def _runtime_blocks(summary: Summary, *, overflow_hint: str, omitted: list[str]) -> list[Block]:
    """Runtime (vGPU monitor): host GPUs, containers and the monitors not reached, each cut to
    Slack's limits with a count; the rest is in the files (``omitted``)."""
    runtime = summary.runtime
    if runtime is None:
        return []
    missing = len(runtime.missing_monitors)
    heading = (
        f"*Runtime (vGPU monitor, measured at scrape time)*{_scope_title(summary)}: "
        f"{count(len(runtime.host_gpus), 'host GPU')}, "
        f"{count(len(runtime.containers), 'container')}"
        + (f", {count(missing, 'monitor')} not reached" if missing else "")
    )
    blocks: list[Block] = []
    if runtime.host_gpus:
        header, rows = _host_gpu_lines(summary)
        blocks.append(_lines_section(
            heading + "\n_Host GPUs_: memory used and utilisation, with the scheduler's "
            "allocation on the same GPU",
            rows, noun="host GPUs", overflow_hint=overflow_hint, omitted=omitted,
            table_header=header,
        ))
    else:
        blocks.append(_section(heading + "\nNo host GPU was reported by the monitors reached."))
    if runtime.containers:
        header, rows = _container_lines(summary)
        blocks.append(_lines_section(
            f"_Containers_ ({len(runtime.containers):,}): vGPU memory used of the container's "
            "limit, SM utilisation, time since its last kernel",
            rows, noun="containers", overflow_hint=overflow_hint, omitted=omitted,
            table_header=header,
        ))
    if missing:
        blocks.append(_lines_section(
            f":warning: *vGPU monitors not reached* ({missing:,}); their GPUs and containers "
            "are missing above:",
            [f"• {line}" for line in runtime.missing_monitors],
            noun="monitors", overflow_hint=overflow_hint, omitted=omitted,
        ))
    return blocks


def _scope(summary: Summary) -> str:
    """Said next to each section a filter does not narrow: core computes the overview, findings,
    checks, runtime, real usage and capacity outlook over the whole cluster (``Summary.notes``)."""
    return f"; {WHOLE_CLUSTER}" if summary.filters else ""


def _scope_title(summary: Summary) -> str:
    """``_scope`` for a title without parentheses of its own."""
    return f" ({WHOLE_CLUSTER})" if summary.filters else ""


def _filtered(summary: Summary) -> str:
    """Said next to each list a filter narrows (nodes, GPUs, namespaces)."""
    filters = filter_text(summary)
    return f", filtered to `{filters}`" if filters else ""


def _overview_blocks(summary: Summary) -> list[Block]:
    blocks: list[Block] = []
    if summary.filters:
        sections = ["findings", "checks"]
        sections += ["runtime"] if summary.runtime is not None else []
        sections += ["real usage"] if summary.real_usage is not None else []
        listed = ", ".join(sections) + " and capacity outlook"
        blocks.append(_context(
            f"*Whole cluster:* the filter `{filter_text(summary)}` narrows only "
            f"the nodes, GPUs and namespaces lists. These figures and the {listed} cover the "
            "whole cluster."
        ))
    blocks.append(SectionBlock(fields=_overview_fields(summary)))
    blocks.append(_section(f"*Free capacity:* {visible(summary.cluster.capacity_answer)}"))
    return blocks


def _not_listed_text(summary: Summary, listed: Sequence[GpuSummary]) -> str | None:
    """What the GPU list left out, by state: a tally of the Summary's GPU rows, never a
    difference of figures. None under a filter: the filtered rows are not the cluster's GPUs,
    and the overview's counts are (so subtracting the one from the other would be wrong)."""
    if summary.filters:
        return None
    shown = set(listed)
    idle = sum(1 for g in summary.gpus if g not in shown and g.state == "idle")
    partial = sum(1 for g in summary.gpus if g not in shown and g.state == "partial")
    rest = [f"{count(idle, 'idle GPU')} (free for whole-GPU jobs)"]
    if partial:
        rest.append(f"{count(partial, 'partial GPU')} with one container")
    return "Not listed above: " + ", ".join(rest) + ". The *GPUs* button lists every GPU."


def _table_blocks(summary: Summary, *, overflow_hint: str, omitted: list[str]) -> list[Block]:
    """Nodes, the GPUs that matter and namespaces: the lists a filter narrows."""
    blocks: list[Block] = []
    if summary.nodes:
        node_header, node_rows = _node_lines(summary)
        blocks.append(
            _lines_section(
                f"*Nodes* ({len(summary.nodes):,}{_filtered(summary)}; most free first; "
                "I/P/F/X = idle/partial/full/inconsistent GPUs)",
                node_rows,
                noun="nodes",
                overflow_hint=overflow_hint,
                omitted=omitted,
                table_header=node_header,
            )
        )
    matter = gpus_that_matter(summary)
    gpu_title = (f"*GPUs that matter* ({len(matter)}{_filtered(summary)}: inconsistent, full "
                 "and shared)")
    if matter:
        gpu_header, gpu_rows = _gpu_lines(matter)
        blocks.append(
            _lines_section(
                gpu_title, gpu_rows, noun="GPUs", overflow_hint=overflow_hint,
                omitted=omitted, table_header=gpu_header,
            )
        )
    elif summary.gpus:
        blocks.append(_section(gpu_title + "\nNone: no GPU is full, shared or inconsistent."))
    not_listed = _not_listed_text(summary, matter) if summary.gpus else None
    if not_listed:
        blocks.append(_context(not_listed))
    if summary.namespaces:
        blocks.append(
            _lines_section(
                f"*Namespaces* ({len(summary.namespaces)}{_filtered(summary)})",
                _namespace_lines(summary),
                noun="namespaces",
                overflow_hint=overflow_hint,
                omitted=omitted,
            )
        )
    return blocks


def _judgement_blocks(
    summary: Summary, *, overflow_hint: str, omitted: list[str]
) -> list[Block]:
    """Findings and consistency checks, said to cover the whole cluster under a filter."""
    blocks: list[Block] = []
    if summary.findings:
        finding_lines = [
            (":warning: " if f.severity == "warn" else "• ") + f.message
            for f in summary.findings
        ]
        blocks.append(
            _lines_section(f"*Findings*{_scope_title(summary)}", finding_lines,
                           noun="findings", overflow_hint=overflow_hint, omitted=omitted)
        )
    failed = [check for check in summary.checks if check.status == "warn"]
    skipped = sum(1 for check in summary.checks if check.status == "skip")
    if failed:
        blocks.append(
            _lines_section(
                f"*Checks that failed* ({len(failed)} of {len(summary.checks)}{_scope(summary)})",
                [f":warning: *{ch.name}*: {ch.message}"
                 for ch in failed],
                noun="checks",
                overflow_hint=overflow_hint,
                omitted=omitted,
            )
        )
    elif summary.checks:
        passed = sum(1 for check in summary.checks if check.status == "pass")
        blocks.append(_context(f"Consistency checks{_scope_title(summary)}: {passed} passed, "
                               f"{skipped} skipped (input missing)."))
    return blocks


def _fallback_text(summary: Summary) -> str:
    c = summary.cluster
    text = (
        f"HAMi summary of {summary.source.label}: {c.nodes} nodes, {c.gpus} GPUs, cores "
        f"{num(c.core_allocated)}/{num(c.core_limit)}, memory {num(c.mem_allocated_mib)}/"
        f"{num(c.mem_limit_mib)} MiB. {c.capacity_answer}"
    )
    if summary.runtime is not None:
        runtime = summary.runtime
        text += (
            f" Runtime: {len(runtime.host_gpus)} host GPUs and {len(runtime.containers)} "
            f"containers measured by the vGPU monitors, {len(runtime.missing_monitors)} "
            "monitors not reached."
        )
    if summary.real_usage is not None:
        unread = sum(1 for u in summary.real_usage if u.failure is not None)
        text += (
            f" Real usage: {len(summary.real_usage) - unread} pods read by nvidia-smi, "
            f"{unread} could not be read."
        )
    return clip(visible(text), FALLBACK_TEXT_MAX)


def summary_message(
    summary: Summary,
    *,
    age_seconds: float | None = None,
    button_value: str | None = None,
    notes: Sequence[str] = (),
    overflow_hint: str = DEFAULT_OVERFLOW_HINT,
    usage_button: bool = False,
) -> SummaryMessage:
    """The summary as Block Kit, what was left out, and the notification text.

    ``button_value`` (a ``SummaryRef`` value) enables the Refresh/GPUs/Workloads/CSV buttons;
    ``usage_button`` adds *Real usage* after them.
    """
    omitted: list[str] = []
    what = "allocation and real usage" if summary.real_usage is not None else "allocation"
    title = visible(f"HAMi GPU {what}: {summary.source.cluster or summary.source.label}")
    blocks: list[Block] = [
        HeaderBlock(text=PlainTextObject(text=clip(title, HEADER_TEXT_MAX))),
        _context(_source_line(summary, age_seconds)),
        *_overview_blocks(summary),
        DividerBlock(),
    ]
    # SPEC 12 order: nodes, GPUs, namespaces, findings, checks, runtime, real usage, capacity.
    blocks.extend(_table_blocks(summary, overflow_hint=overflow_hint, omitted=omitted))
    blocks.extend(_judgement_blocks(summary, overflow_hint=overflow_hint, omitted=omitted))
    runtime = summary.runtime
    if runtime is not None:
        blocks.extend(_runtime_blocks(summary, overflow_hint=overflow_hint, omitted=omitted))
    if summary.real_usage is not None:
        blocks.extend(_real_usage_blocks(summary, overflow_hint=overflow_hint, omitted=omitted))
    if summary.capacity:
        blocks.append(
            _lines_section(f"*Capacity outlook* (job shapes that fit now{_scope(summary)})",
                           _capacity_lines(summary), noun="shapes",
                           overflow_hint=overflow_hint, omitted=omitted)
        )
    all_notes = [*summary.notes, *notes]
    if all_notes:
        blocks.append(_context(clip(visible(" ".join(all_notes)), CONTEXT_TEXT_MAX)))
    if runtime is None and not any("utilisation" in note for note in all_notes):
        # core's notes usually say it already (SPEC 12.1); never say it twice.
        blocks.append(_context(ALLOCATION_NOTE))
    if button_value is not None and len(button_value) <= BUTTON_VALUE_MAX:
        buttons = [*SUMMARY_BUTTONS, *([USAGE_BUTTON] if usage_button else [])]
        blocks.append(
            ActionsBlock(
                block_id="summary_actions",
                elements=[
                    ButtonElement(text=label, action_id=action_id, value=button_value)
                    for action_id, label in buttons
                ],
            )
        )
    blocks = _within_block_limit(blocks, omitted)
    return SummaryMessage(
        blocks=[block.to_dict() for block in blocks],
        text=_fallback_text(summary),
        omitted=tuple(omitted),
    )


def _within_block_limit(blocks: list[Block], omitted: list[str]) -> list[Block]:
    if len(blocks) <= MAX_BLOCKS:
        return blocks
    kept = [b for b in blocks if not isinstance(b, DividerBlock)]
    if len(kept) > MAX_BLOCKS:
        dropped = len(kept) - (MAX_BLOCKS - 1)
        kept = [*kept[: MAX_BLOCKS - 2], _context(f"{dropped} more sections are in the files."),
                kept[-1]]
        omitted.append(f"{dropped} sections")
    return kept


def summary_blocks(
    summary: Summary,
    *,
    age_seconds: float | None = None,
    button_value: str | None = None,
    notes: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """Block Kit dicts for ``summary`` (what ``hami-summary summarize --format blocks`` prints),
    encoded for Slack like every message the bot sends."""
    return encode_blocks(summary_message(
        summary, age_seconds=age_seconds, button_value=button_value, notes=notes
    ).blocks)
