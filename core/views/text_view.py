"""Plain-text report for terminals, laid out for 100 columns.

The order is the report's: where the data comes from and how old it is, the first page
(headline, what needs attention), then every section in detail, the tables cut to the rows that
most need a look, each saying how many more there are and where.
"""

from __future__ import annotations

from core.model import Summary
from core.views import focus_tables, tables
from core.views.attention import Hints
from core.views.digest import Digest, names_in_full, plain
from core.views.digest_filtered import filter_words
from core.views.first_page import build_digest
from core.views.table_spec import fixed_width
from core.views.tables import Table
from core.views.text_fit import wrap_words
from core.visible_text import visible

WIDTH = 100
TOP_ROWS = 20


def format_table(table: Table, width: int = WIDTH) -> list[str]:
    lines = [table.title, "-" * min(len(table.title), width)]
    if table.title and len(table.title) > width:
        lines[:1] = wrap_words(table.title, width)
    if not table.rows:
        lines.append(f"(none: {table.empty_reason})")
        return lines
    lines.extend(fixed_width(table, width))
    if table.omitted:
        hint = f" ({table.omitted_hint})" if table.omitted_hint else ""
        lines.extend(wrap_words(f"... {table.omitted:,} more row(s) not shown{hint}", width))
    return lines


def _wrap(text: str, width: int = WIDTH, indent: str = "") -> list[str]:
    # Names such as gpu-node-01 must not be split at their hyphens, nor any word in two.
    return wrap_words(visible(text), width, indent=indent)


def first_page(summary: Summary, hints: Hints | None = None, width: int = WIDTH) -> str:
    """The one-screen answer: what the source is, then the first page (``core.views.digest``);
    ``hints`` say where the full lists are (by default: the details of this report)."""
    title = "HAMi GPU allocation summary" + (
        f", {filter_words(summary.focus)}" if summary.focus is not None else ""
    )
    out: list[str] = [*_wrap(title, width), "=" * min(len(title), width)]
    for line in tables.header_lines(summary):
        out.extend(_wrap(line, width))
    for note in summary.headline:
        out.extend(_wrap(note, width))
    out.append("")
    out += first_page_lines(build_digest(summary, hints or CLI_HINTS), width)
    return "\n".join(out).rstrip() + "\n"


def render(
    summary: Summary, top: int = TOP_ROWS, *, width: int = WIDTH, hints: Hints | None = None
) -> str:
    """The report: the first page, then every section in detail, each table cut to ``top``
    rows with how many more and where they are; ``width`` characters a line."""
    out: list[str] = [first_page(summary, hints, width).rstrip(), "", "Details", "=" * 7, ""]
    out += ["Cluster overview", "-" * 16]
    for line in tables.overview_lines(summary):
        out.extend(_wrap(line, width, indent="  "))
    out.append("")
    for table in (
        *focus_tables.share_tables(summary, top),
        tables.nodes_table(summary, top),
        tables.gpus_table(summary, top),
        tables.workloads_table(summary, top),
        tables.namespaces_table(summary, top),
        tables.top_pods_table(summary, top),
        tables.quota_table(summary, top),
    ):
        out.extend(format_table(table, width))
        out.append("")
    out += _judgement_lines(summary, width)
    out += _runtime_lines(summary, top, width)
    usage = tables.real_usage_table(summary, top)
    if usage is not None:
        out.extend(format_table(usage, width))
        out.append("")
    out.extend(format_table(tables.capacity_table(summary), width))
    out.append("")
    outlook = tables.model_outlook_table(summary)
    if outlook is not None:
        out += [*format_table(outlook, width), ""]
    other_notes = tables.other_notes(summary)
    if other_notes:
        out += ["Notes", "-" * 5]
        for note in other_notes:
            out.extend(_wrap(note, width, indent="  - "))
    return "\n".join(out).rstrip() + "\n"


def _judgement_lines(summary: Summary, width: int) -> list[str]:
    """Findings and consistency checks."""
    out = ["Findings", "-" * 8]
    if summary.findings:
        for f in summary.findings:
            out.extend(_wrap(f.message, width, indent=f"  [{f.severity}] "))
    else:
        out.append("  (none: nothing stands out)")
    out += ["", "Consistency checks", "-" * 18]
    for c in summary.checks:
        out.extend(_wrap(f"{c.name}: {c.message}", width, indent=f"  [{c.status}] "))
    return [*out, ""]


def _runtime_lines(summary: Summary, top: int, width: int) -> list[str]:
    """The vGPU monitor's host GPUs and containers, and the monitors not reached."""
    runtime = tables.runtime_tables(summary, top)
    if not runtime:
        return [
            "Runtime usage",
            "-" * 13,
            "(none: no vGPU monitor metrics in the input; allocation is not utilisation)",
            "",
        ]
    out: list[str] = []
    for table in runtime:
        out += [*format_table(table, width), ""]
    if summary.runtime and summary.runtime.missing_monitors:
        missing = ", ".join(summary.runtime.missing_monitors)
        out += [*_wrap(f"vGPU monitors not reached: {missing}", width), ""]
    return out


# -- the first page ------------------------------------------------------------------------

# In a report that has every row (the tables file of Slack and chat): where each list is in it.
REPORT_HINTS = Hints(
    gpus="GPUs below",
    nodes="Nodes below",
    namespaces="Namespaces and Quotas below",
    workloads="Workloads below",
    runtime="Host GPUs and Containers below",
    everything="Details below",
    fit="fit 4xMODEL",
)

CLI_HINTS = Hints(
    gpus="GPUs below; every row: --format csv",
    nodes="Nodes below; every row: --csv-table nodes",
    namespaces="Namespaces below",
    workloads="Workloads below; every row: --csv-table workloads",
    runtime="Runtime below; every row: --csv-table runtime",
    everything="Details below",
    fit="hami-summary fit 4xMODEL FILE",
)


def first_page_lines(digest: Digest, width: int = WIDTH) -> list[str]:
    """The one-screen answer as plain text lines of at most ``width`` characters."""
    out: list[str] = []
    for line in digest.headline:
        out.extend(_wrap(plain(line), width))
    if digest.scope:
        out.extend(_wrap(digest.scope, width))
    for section in digest.sections:
        title = visible(section.title)
        out += ["", title, "-" * min(len(title), width)]
        if section.note:
            out.extend(_wrap(f"({section.note})", width))
        if section.table is not None:
            table_lines = fixed_width(section.table, width)
            out.extend(table_lines)
            in_full = names_in_full(section, table_lines)
            if in_full:
                out.extend(_wrap("Nodes: " + ", ".join(in_full) + ".", width))
        if section.after:
            out.extend(_wrap(section.after, width))
        if section.lines_title:
            out.extend(_wrap(section.lines_title, width))
        for item in section.lines:
            out.extend(_wrap(plain(item), width, indent="  - "))
    out += ["", *_wrap(digest.more, width)]
    return out
