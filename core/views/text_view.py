"""Plain-text report for terminals, laid out for 100 columns (SPEC.md section 12 order)."""

from __future__ import annotations

import textwrap

from core.model import Summary
from core.views import tables
from core.views.attention import Hints
from core.views.digest import Digest, plain
from core.views.table_spec import fixed_width
from core.views.tables import Table
from core.views.text_fit import wrap_words
from core.views.visible_text import visible

WIDTH = 100
TOP_ROWS = 20


LAST_COLUMN_MIN = 16


def _fit_widths(widths: list[int], width: int, elastic: tuple[int, ...]) -> list[int]:
    """Fit a row into ``width``: the last column wraps; elastic columns are cut with "…" first,
    then the widest others."""
    gap = 2 * (len(widths) - 1)
    widths = list(widths)
    widths[-1] = min(widths[-1], max(width - sum(widths[:-1]) - gap, LAST_COLUMN_MIN))
    for column in elastic:
        excess = sum(widths) + gap - width
        if excess <= 0:
            break
        widths[column] = max(widths[column] - excess, 8)
    # The loop below takes one character at a time from the widest column, so a column wider
    # than the line is always cut down to the line's width before any other is touched: doing
    # that at once gives the same widths, and keeps a megabyte-wide cell from costing a
    # megabyte of iterations.
    widths[:-1] = [min(w, max(width, 8)) for w in widths[:-1]]
    while sum(widths) + gap > width:
        widest = max(range(len(widths) - 1), key=lambda i: widths[i])
        if widths[widest] <= 8:
            break
        widths[widest] -= 1
    return widths


def _cell(value: str, size: int) -> str:
    return value if len(value) <= size else value[: max(size - 1, 0)] + "…"


def format_table(table: Table, width: int = WIDTH, full_table_hint: str | None = None) -> list[str]:
    lines = [table.title, "-" * min(len(table.title), width)]
    if not table.rows:
        lines.append(f"(none: {table.empty_reason})")
        return lines
    natural = [
        max(len(table.headers[i]), *(len(r[i]) for r in table.rows))
        for i in range(len(table.headers))
    ]
    widths = _fit_widths(natural, width, table.elastic)
    indent = sum(widths[:-1]) + 2 * (len(widths) - 1)
    for row in (table.headers, *table.rows):
        cells = [_cell(v, w).ljust(w) for v, w in zip(row[:-1], widths[:-1], strict=True)]
        tail = textwrap.wrap(row[-1], width=widths[-1], break_on_hyphens=False) or [""]
        lines.append("  ".join([*cells, tail[0]]).rstrip())
        lines.extend(" " * indent + more for more in tail[1:])
    if table.omitted:
        shown_hint = (
            full_table_hint if full_table_hint and table.omitted_hint else table.omitted_hint
        )
        hint = f" ({shown_hint})" if shown_hint else ""
        lines.append(f"... {table.omitted:,} more row(s) not shown{hint}")
    return lines


def _wrap(text: str, width: int = WIDTH, indent: str = "") -> list[str]:
    # Names such as gpu-node-01 must not be split at their hyphens.
    return textwrap.wrap(
        visible(text),
        width=width,
        initial_indent=indent,
        subsequent_indent=" " * len(indent),
        break_on_hyphens=False,
    ) or [indent]


def render(summary: Summary, top: int = TOP_ROWS, *, full_table_hint: str | None = None) -> str:
    """The report; ``full_table_hint`` replaces "full table: --format csv" where rows are cut
    (e.g. chat mode, where the full tables come from another command)."""
    out: list[str] = ["HAMi GPU allocation summary", "=" * 27]
    for line in tables.header_lines(summary):
        out.extend(_wrap(line))
    for note in summary.headline:
        out.extend(_wrap(note))
    out.append("")
    out += ["Cluster overview", "-" * 16]
    for line in tables.overview_lines(summary):
        out.extend(_wrap(line, indent="  "))
    out.append("")
    for table in (
        tables.nodes_table(summary, top),
        tables.gpus_table(summary, top),
        tables.workloads_table(summary, top),
        tables.namespaces_table(summary, top),
        tables.top_pods_table(summary, top),
        tables.quota_table(summary, top),
    ):
        out.extend(format_table(table, full_table_hint=full_table_hint))
        out.append("")
    out += ["Findings", "-" * 8]
    if summary.findings:
        for f in summary.findings:
            out.extend(_wrap(f.message, indent=f"  [{f.severity}] "))
    else:
        out.append("  (none: nothing stands out)")
    out.append("")
    out += ["Consistency checks", "-" * 18]
    for c in summary.checks:
        out.extend(_wrap(f"{c.name}: {c.message}", indent=f"  [{c.status}] "))
    out.append("")
    runtime = tables.runtime_tables(summary, top)
    if runtime:
        for table in runtime:
            out.extend(format_table(table, full_table_hint=full_table_hint))
            out.append("")
        if summary.runtime and summary.runtime.missing_monitors:
            out.extend(
                _wrap("vGPU monitors not reached: " + ", ".join(summary.runtime.missing_monitors))
            )
            out.append("")
    else:
        out += [
            "Runtime usage",
            "-" * 13,
            "(none: no vGPU monitor metrics in the input; allocation is not utilisation)",
            "",
        ]
    usage = tables.real_usage_table(summary, top)
    if usage is not None:
        out.extend(format_table(usage))
        out.append("")
    out.extend(format_table(tables.capacity_table(summary)))
    out.append("")
    other_notes = tables.other_notes(summary)
    if other_notes:
        out += ["Notes", "-" * 5]
        for note in other_notes:
            out.extend(_wrap(note, indent="  - "))
    return "\n".join(out).rstrip() + "\n"


# -- the first page ------------------------------------------------------------------------

CLI_HINTS = Hints(
    gpus="the GPUs table below, all rows: --format csv --csv-table gpus",
    nodes="--format csv --csv-table nodes",
    namespaces="--format csv --csv-table namespaces",
    workloads="--format csv --csv-table workloads",
    runtime="--format csv --csv-table runtime",
    everything="the details below, every row: --format csv",
    fit="hami-summary fit 4xMODEL FILE",
)


def first_page_lines(digest: Digest, width: int = WIDTH) -> list[str]:
    """The one-screen answer as plain text lines of at most ``width`` characters."""
    out: list[str] = []
    for line in digest.headline:
        out.extend(wrap_words(plain(line), width))
    if digest.scope:
        out.extend(wrap_words(digest.scope, width))
    for section in digest.sections:
        out += ["", section.title, "-" * min(len(section.title), width)]
        if section.table is not None:
            out.extend(fixed_width(section.table, width))
        for item in section.lines:
            out.extend(wrap_words(plain(item), width, indent="  - "))
        if section.note:
            out.extend(wrap_words(f"({section.note})", width))
        if section.after:
            out.extend(wrap_words(section.after, width))
    out += ["", *wrap_words(digest.more, width)]
    return out
