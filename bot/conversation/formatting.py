"""Formatting shared by the Slack view and the chat mode (formatting only, no new numbers).

Full tables are the report's (``core.views.tables``, columns from ``core.views.columns``),
laid out by its one fixed-width renderer (``core.views.text_view.format_table``), so every
surface shows the same cells. A ``TableReply`` carries them as data: each surface lays them
out with ``table_text`` at the width it shows them in. Times are worded by
``core.views.tables.age_text``, so they read the same in Slack, the terminal and the text
report.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from bot.conversation.replies import ChangesSection, GpuHoursSection, ReplySection, TableSection
from core.model import Summary, UsageClass
from core.views import focus_tables, tables, text_view
from core.views.changes_view import render_text
from core.views.digest_filtered import filter_words
from core.views.gpu_hours_view import render_body as gpu_hours_text
from core.views.tables import age_text
from core.views.text_view import format_table

# Wide enough that no column is cut: these tables go into files.
WIDE = 10_000
_NO_WRAP_WIDTH = WIDE


def given_text(age_seconds: float, now: datetime | None = None) -> str:
    """When metrics were given to the bot, ``given 2025-05-01 09:30:00 UTC (3 min ago)``, worded
    like the report's scrape time (``core.views.tables.age_text``)."""
    now = now or datetime.now(UTC)
    return age_text(now - timedelta(seconds=max(0.0, age_seconds)), now, verb="given")


# A Slack code block this wide does not wrap in a thread pane on a laptop.
CODE_BLOCK_WIDTH = 72


def gpu_sections(summary: Summary) -> tuple[TableSection, ...]:
    """Every GPU, in node and index order.

    Under a namespace filter: every GPU and node it uses, with its share of each; under a node
    filter: every GPU of the node, then each namespace's totals there."""
    plain = TableSection(tables.gpus_table(summary, top=len(summary.gpus)))
    focus = summary.focus
    if focus is None:
        return (plain,)
    rows = max(len(focus.gpus), len(focus.nodes), len(focus.namespaces), 1)
    shares = tuple(TableSection(t, titled=True) for t in focus_tables.share_tables(summary, rows))
    if focus.namespace is not None:
        return shares
    return (plain, *shares)


def of_filter(summary: Summary) -> str:
    """`` of namespace team-a`` for a filtered summary; empty otherwise."""
    return f" of {filter_words(summary.focus)}" if summary.focus is not None else ""


def workload_sections(summary: Summary) -> tuple[TableSection, ...]:
    """Every (namespace, pod, container, device) allocation, largest first."""
    return (TableSection(tables.workloads_table(summary, top=len(summary.workloads))),)


def real_usage_section(summary: Summary) -> TableSection | None:
    """Every pod's real usage (nvidia-smi), titled; None for a summary without real usage."""
    if summary.real_usage is None:
        return None
    table = tables.real_usage_table(summary, top=len(summary.real_usage))
    return None if table is None else TableSection(table, titled=True)


def section_text(section: ReplySection, width: int) -> str:
    """One section laid out in ``width`` columns: a table by the report's fixed-width renderer
    (``format_table``), what changed by ``core.views.changes_view``."""
    if isinstance(section, ChangesSection):
        return render_text(section.changes, subject=section.subject, width=width)
    if isinstance(section, GpuHoursSection):
        return gpu_hours_text(section.report, width=width).rstrip("\n")
    lines = format_table(section.table, width=width)
    # format_table starts with the title and its underline; a reply has its own title.
    return "\n".join(lines if section.titled else lines[2:])


def table_text(sections: Iterable[ReplySection], width: int) -> str:
    """``sections`` (a ``TableReply``'s) as the text a surface shows or sends as a file, a blank
    line between two; no line is wider than ``width`` unless a number would be cut."""
    return "\n\n".join(section_text(section, width) for section in sections)


def all_tables(summary: Summary) -> str:
    """The whole report with every row of every table (nodes, GPUs, workloads, namespaces,
    quotas, runtime, real usage) and every finding, check and job shape: what a Slack message
    has no room for, with nothing of the first reply left out."""
    runtime = summary.runtime
    rows = max(
        len(summary.nodes),
        len(summary.gpus),
        len(summary.workloads),
        sum(len(ns.quota) for ns in summary.namespaces) + len(summary.namespaces) * 3,
        len(runtime.host_gpus) if runtime else 0,
        len(runtime.containers) if runtime else 0,
        len(summary.real_usage or ()),
        1,
    )
    return text_view.render(summary, rows, width=_NO_WRAP_WIDTH, hints=text_view.REPORT_HINTS)


def filter_text(summary: Summary) -> str:
    """``ns=team-a node=gpu-node-1`` for a filtered summary; empty otherwise."""
    return " ".join(f"{key}={value}" for key, value in summary.filters)


# -- real usage (nvidia-smi in the pods) ----------------------------------------------------------

# Most actionable first: idle and over-allocated pods hold GPU memory they do not use.
USAGE_CLASSES: tuple[UsageClass, ...] = ("idle", "low / over-allocated", "normal", "high")


def usage_class_counts(summary: Summary) -> list[tuple[UsageClass, int]]:
    """How many read pods fall in each class, in ``USAGE_CLASSES`` order."""
    read = [u for u in summary.real_usage or () if u.failure is None]
    return [(name, sum(1 for u in read if u.usage_class == name)) for name in USAGE_CLASSES]


def usage_headline(summary: Summary) -> str | None:
    """``Real usage (nvidia-smi): 4 of 5 pods read · idle 1 · ...``; None without real usage."""
    if summary.real_usage is None:
        return None
    read = sum(1 for u in summary.real_usage if u.failure is None)
    classes = "".join(f" · {name} {n}" for name, n in usage_class_counts(summary)) if read else ""
    return (
        f"Real usage (nvidia-smi, point in time): {read:,} of {len(summary.real_usage):,} "
        f"pods read{classes}"
    )
