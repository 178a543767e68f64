"""The GPU-hours report: one screen of text, and a CSV of every row with the method in its
header (``core.history.gpu_hours``)."""

from __future__ import annotations

import csv
import io
import textwrap

from core.history.gpu_hours import METHOD, UsageReport, UsageRow
from core.number_style import counted, percent, share
from core.views.changes_view import span_text, stamp
from core.views.spreadsheet import spreadsheet_cell
from core.visible_text import visible

GAPS_SHOWN = 3
WIDTH = 100


def _hours(value: float) -> str:
    return f"{value:,.1f}"


def title(subject: str) -> str:
    return f"GPU-hours by namespace, {visible(subject)}"


def render_text(report: UsageReport, *, subject: str, top: int = 15, width: int = WIDTH) -> str:
    """The title, then ``render_body``."""
    return f"{title(subject)}\n{render_body(report, top=top, width=width)}"


def render_body(report: UsageReport, *, top: int = 15, width: int = WIDTH) -> str:
    """The period and its gaps, the method, the namespaces (and one namespace's pods), in
    ``width`` columns."""
    span = report.until - report.since
    lines = [
        f"Period: {stamp(report.since)} to {stamp(report.until)} ({span_text(span)}); covered "
        f"{span_text(report.covered_seconds)} by {report.snapshots:,} snapshots",
    ]
    if report.gaps:
        shown = ", ".join(f"{stamp(g.start)} to {stamp(g.end)}" for g in report.gaps[:GAPS_SHOWN])
        more = (
            f" and {len(report.gaps) - GAPS_SHOWN:,} more" if len(report.gaps) > GAPS_SHOWN else ""
        )
        total = sum(g.seconds for g in report.gaps)
        lines.append(
            f"Not counted: {span_text(total)} in {counted(len(report.gaps), 'gap')} with no "
            f"snapshot within {span_text(report.max_gap_seconds)} of the next ({shown}{more})"
        )
    lines.append(f"Method: {METHOD}.")
    lines = [wrapped for line in lines for wrapped in _wrap(line, width)]
    if report.covered_seconds <= 0:
        lines.append("")
        lines += _wrap(
            width=width,
            line="No GPU-hours: no two snapshots in this period are close enough to count the "
            "time between them. Keep them more often, or raise the gap limit.",
        )
        return "\n".join(lines) + "\n"
    lines.append("")
    lines += _table(report.namespaces, "namespace", top)
    lines.append(
        f"cluster: {_hours(report.allocated_gpu_hours)} GPU-hours allocated of "
        f"{_hours(report.capacity_gpu_hours)} GPU capacity-hours "
        f"({share(report.allocated_gpu_hours, report.capacity_gpu_hours)})"
    )
    if report.namespace is not None:
        lines.append("")
        lines.append(f"Pods of {visible(report.namespace)}")
        lines += _table(report.pods, "pod", top) if report.pods else ["(none in this period)"]
    return "\n".join(lines) + "\n"


def _wrap(line: str, width: int) -> list[str]:
    return textwrap.wrap(line, width, subsequent_indent="  ", break_on_hyphens=False) or [""]


def _table(rows: tuple[UsageRow, ...], first: str, top: int) -> list[str]:
    names = [visible(row.pod if first == "pod" and row.pod else row.namespace) for row in rows]
    width = max([len(first), *map(len, names[:top])])
    lines = [f"{first:<{width}}  {'GPU-hours':>10}  {'GiB-hours':>11}  {'share':>6}"]
    for name, row in zip(names[:top], rows[:top], strict=False):
        lines.append(
            f"{name:<{width}}  {_hours(row.gpu_hours):>10}  {_hours(row.gib_hours):>11}  "
            f"{percent(row.share_percent):>6}"
        )
    if len(rows) > top:
        lines.append(f"({len(rows) - top:,} more in the CSV)")
    return lines


def render_csv(report: UsageReport) -> str:
    """Every row: namespaces, then the pods of the namespace asked for. The first line is the
    method, as a comment a spreadsheet shows in its first cell."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([f"# {METHOD}; from {stamp(report.since)} to {stamp(report.until)}"])
    writer.writerow(["namespace", "pod", "gpu_hours", "gib_hours", "share_percent"])
    for row in (*report.namespaces, *report.pods):
        writer.writerow(
            [
                spreadsheet_cell(row.namespace),
                spreadsheet_cell(row.pod or ""),
                round(row.gpu_hours, 4),
                round(row.gib_hours, 4),
                round(row.share_percent, 4),
            ]
        )
    return buffer.getvalue()
