"""Formatting shared by the Slack view and the chat mode (formatting only, no new numbers).

Full tables reuse ``core.views.tables`` rows so every surface shows the same cells; short
figures follow the same conventions (thousands separators, one-decimal percentages).
"""

from __future__ import annotations

from collections.abc import Sequence

from core.model import Summary
from core.views import tables
from core.views.text_view import format_table

# Wide enough that no column is cut: these tables go into files or code blocks, not a terminal.
_NO_WRAP_WIDTH = 10_000


def num(value: float) -> str:
    """A share or MiB figure: whole numbers without decimals, others to one decimal."""
    if abs(value - round(value)) < 0.05:
        return f"{round(value):,}"
    return f"{value:,.1f}"


def percent(value: float) -> str:
    return f"{value:.1f}%"


def age_text(age_seconds: float | None) -> str:
    """``42 s ago`` / ``3 min ago`` / ``2.0 h ago``; empty when unknown."""
    if age_seconds is None:
        return ""
    seconds = max(0.0, age_seconds)
    if seconds < 120:
        return f"{seconds:.0f} s ago"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min ago"
    return f"{seconds / 3600:.1f} h ago"


def fixed_width(header: Sequence[str], rows: Sequence[Sequence[str]], right: set[int]) -> str:
    """Rows as aligned columns (numbers right-aligned) for a code block."""
    widths = [len(h) for h in header]
    for row in rows:
        for index, cell in enumerate(row):
            widths[index] = max(widths[index], len(cell))

    def line(cells: Sequence[str]) -> str:
        parts = [
            cell.rjust(widths[i]) if i in right else cell.ljust(widths[i])
            for i, cell in enumerate(cells)
        ]
        return "  ".join(parts).rstrip()

    return "\n".join([line(header), *(line(row) for row in rows)])


def _whole(table: tables.Table, *, titled: bool = False) -> str:
    lines = format_table(table, width=_NO_WRAP_WIDTH)
    # format_table starts with the title and its underline; a reply has its own title.
    return "\n".join(lines if titled else lines[2:])


def gpu_table(summary: Summary) -> str:
    """Every GPU, in node and index order."""
    return _whole(tables.gpus_table(summary, top=len(summary.gpus)))


def workload_table(summary: Summary) -> str:
    """Every (namespace, pod, container, device) allocation, largest first."""
    return _whole(tables.workloads_table(summary, top=len(summary.workloads)))


def all_tables(summary: Summary) -> str:
    """Nodes, GPUs, namespaces and workloads in full: what a Slack message had no room for."""
    parts = [
        tables.nodes_table(summary, top=len(summary.nodes)),
        tables.gpus_table(summary, top=len(summary.gpus)),
        tables.namespaces_table(summary, top=len(summary.namespaces)),
        tables.workloads_table(summary, top=len(summary.workloads)),
    ]
    header = "\n".join(tables.header_lines(summary))
    return header + "\n\n" + "\n\n".join(_whole(table, titled=True) for table in parts) + "\n"


def filter_text(summary: Summary) -> str:
    """``ns=team-a node=gpu-node-1`` for a filtered summary; empty otherwise."""
    return " ".join(f"{key}={value}" for key, value in summary.filters)
