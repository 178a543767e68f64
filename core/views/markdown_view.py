"""Markdown report, for terminals that render it and for files; the same sections in the same
order as the text report (``core.views.text_view``)."""

from __future__ import annotations

from core.model import Summary
from core.views import focus_tables, tables
from core.views.attention import Hints, Line
from core.views.digest import Digest
from core.views.digest_filtered import filter_words
from core.views.first_page import build_digest
from core.views.table_spec import markdown_lines
from core.views.tables import Table
from core.visible_text import markdown_text

TOP_ROWS = 20

MARKDOWN_HINTS = Hints(
    gpus="GPUs below; every row: `--format csv`",
    nodes="Nodes below; every row: `--csv-table nodes`",
    namespaces="Namespaces below",
    workloads="Workloads below; every row: `--csv-table workloads`",
    runtime="Runtime below; every row: `--csv-table runtime`",
    everything="Details below",
    fit="`hami-summary fit 4xMODEL FILE`",
)


def _strong(line: Line) -> str:
    return " · ".join(
        f"{markdown_text(f.before)}**{markdown_text(f.strong)}**{markdown_text(f.after)}"
        if f.strong
        else markdown_text(f.before + f.after)
        for f in line
    )


def first_page_lines(digest: Digest) -> list[str]:
    """The one-screen answer as Markdown: the headline, then a heading per section."""
    out = [_strong(line) + "  " for line in digest.headline]
    out[-1] = out[-1].rstrip()
    if digest.scope:
        out += ["", f"_{markdown_text(digest.scope)}_"]
    for section in digest.sections:
        out += ["", f"## {markdown_text(section.title)}", ""]
        if section.note:
            out += [f"_{markdown_text(section.note)}_", ""]
        if section.table is not None:
            out += markdown_lines(section.table)
        if section.after:
            out += ["", markdown_text(section.after)]
        if section.lines_title:
            out += ["", markdown_text(section.lines_title), ""]
        out += [f"- {_strong(item)}" for item in section.lines]
    return [*out, "", markdown_text(digest.more), ""]


def format_table(table: Table) -> list[str]:
    lines = [f"## {table.title}", ""]
    if not table.rows:
        return [*lines, f"_None: {table.empty_reason}._", ""]
    lines.extend(markdown_lines(table))
    if table.omitted:
        hint = f" ({table.omitted_hint})" if table.omitted_hint else ""
        lines += ["", f"_{table.omitted:,} more row(s) not shown{hint}._"]
    lines.append("")
    return lines


def render(summary: Summary, top: int = TOP_ROWS) -> str:
    """The report: the first page, then every section in detail, each table cut to ``top``
    rows with how many more and where they are."""
    scope = f", {filter_words(summary.focus)}" if summary.focus is not None else ""
    out = [f"# HAMi GPU allocation summary{markdown_text(scope)}", ""]
    out += [f"- {markdown_text(line)}" for line in tables.header_lines(summary)]
    for note in summary.headline:
        out += ["", f"> {markdown_text(note)}"]
    out += ["", *first_page_lines(build_digest(summary, MARKDOWN_HINTS))]
    out += ["# Details", "", "## Cluster overview", ""]
    out += [f"- {markdown_text(line)}" for line in tables.overview_lines(summary)]
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
        out += format_table(table)
    out += ["## Findings", ""]
    out += [f"- **{f.severity}** {markdown_text(f.message)}" for f in summary.findings] or [
        "_None: nothing stands out._"
    ]
    out += ["", "## Consistency checks", ""]
    out += [f"- **{c.status}** {c.name}: {markdown_text(c.message)}" for c in summary.checks]
    out.append("")
    runtime = tables.runtime_tables(summary, top)
    if runtime:
        for table in runtime:
            out += format_table(table)
        if summary.runtime and summary.runtime.missing_monitors:
            missing = ", ".join(summary.runtime.missing_monitors)
            out += [f"vGPU monitors not reached: {markdown_text(missing)}", ""]
    else:
        out += [
            "## Runtime usage",
            "",
            "_None: no vGPU monitor metrics in the input; allocation is not utilisation._",
            "",
        ]
    usage = tables.real_usage_table(summary, top)
    if usage is not None:
        out += format_table(usage)
    out += format_table(tables.capacity_table(summary))
    outlook = tables.model_outlook_table(summary)
    if outlook is not None:
        out += format_table(outlook)
    other_notes = tables.other_notes(summary)
    if other_notes:
        out += ["## Notes", ""] + [f"- {markdown_text(note)}" for note in other_notes]
    return "\n".join(out).rstrip() + "\n"
