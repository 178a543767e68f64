"""Markdown report (SPEC.md section 12 order), for terminals that render it and for files."""

from __future__ import annotations

from core.model import Summary
from core.views import tables
from core.views.tables import Table
from core.views.visible_text import visible

TOP_ROWS = 20


def _escape(value: str) -> str:
    return value.replace("|", "\\|")


def format_table(table: Table, full_table_hint: str | None = None) -> list[str]:
    lines = [f"## {table.title}", ""]
    if not table.rows:
        return [*lines, f"_None: {table.empty_reason}._", ""]
    lines.append("| " + " | ".join(table.headers) + " |")
    lines.append("|" + "|".join("---" for _ in table.headers) + "|")
    for row in table.rows:
        lines.append("| " + " | ".join(_escape(v) for v in row) + " |")
    if table.omitted:
        shown_hint = (
            full_table_hint if full_table_hint and table.omitted_hint else table.omitted_hint
        )
        hint = f" ({shown_hint})" if shown_hint else ""
        lines += ["", f"_{table.omitted:,} more row(s) not shown{hint}._"]
    lines.append("")
    return lines


def render(summary: Summary, top: int = TOP_ROWS, *, full_table_hint: str | None = None) -> str:
    """The report; ``full_table_hint`` replaces "full table: --format csv" where rows are cut
    (e.g. chat mode, where the full tables come from another command)."""
    out = ["# HAMi GPU allocation summary", ""]
    out += [f"- {visible(line)}" for line in tables.header_lines(summary)]
    for note in summary.headline:
        out += ["", f"> {visible(note)}"]
    out += ["", "## Cluster overview", ""]
    out += [f"- {visible(line)}" for line in tables.overview_lines(summary)]
    out.append("")
    for table in (
        tables.nodes_table(summary, top),
        tables.gpus_table(summary, top),
        tables.workloads_table(summary, top),
        tables.namespaces_table(summary, top),
        tables.top_pods_table(summary, top),
        tables.quota_table(summary, top),
    ):
        out += format_table(table, full_table_hint)
    out += ["## Findings", ""]
    out += [f"- **{f.severity}** {visible(f.message)}" for f in summary.findings] or [
        "_None: nothing stands out._"
    ]
    out += ["", "## Consistency checks", ""]
    out += [f"- **{c.status}** {c.name}: {visible(c.message)}" for c in summary.checks]
    out.append("")
    runtime = tables.runtime_tables(summary, top)
    if runtime:
        for table in runtime:
            out += format_table(table, full_table_hint)
        if summary.runtime and summary.runtime.missing_monitors:
            missing = ", ".join(summary.runtime.missing_monitors)
            out += [f"vGPU monitors not reached: {visible(missing)}", ""]
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
    other_notes = tables.other_notes(summary)
    if other_notes:
        out += ["## Notes", ""] + [f"- {visible(note)}" for note in other_notes]
    return "\n".join(out).rstrip() + "\n"
