"""The files a summary reply carries: its chart, the CSV and the every-row tables.

Each renders only when a surface asks for its bytes, once per summary
(``bot.store.summary_memo``).
"""

from __future__ import annotations

from bot.conversation.formatting import all_tables, of_filter
from bot.conversation.replies import Attachment
from bot.store.summary_memo import memoized_render
from core.api import cluster_of
from core.model import Summary
from core.views.csv_view import runtime_csv


def chart_title(summary: Summary) -> str:
    """What the chart shows, and of which filter."""
    return (
        f"Chart{of_filter(summary)}: who holds the GPUs (by GPU model and namespace) and where "
        "there is room"
    )


def chart_attachment(summary: Summary) -> Attachment:
    """The chart; a filtered one gives each namespace its colour in the cluster's chart."""

    def render() -> bytes:
        # matplotlib is imported only when a chart is drawn (start-up time).
        from core.views.chart import render_chart
        from core.views.palette import namespace_ranking

        return render_chart(summary, ranking=namespace_ranking(cluster_of(summary)))

    name = "hami-allocation.png"
    return Attachment(name, chart_title(summary), memoized_render(summary, name, render))


def csv_attachment(summary: Summary) -> Attachment:
    def render() -> bytes:
        # The views are imported when a file is asked for (start-up time).
        from core.views import render as render_view

        return render_view(summary, "csv").encode("utf-8")

    name = "hami-summary.csv"
    return Attachment(name, "GPU and workload tables (CSV)", memoized_render(summary, name, render))


def runtime_csv_attachment(summary: Summary) -> Attachment:
    """Every runtime (vGPU monitor) row as CSV: host GPUs, containers, monitors not reached."""

    def render() -> bytes:
        return runtime_csv(summary).encode("utf-8")

    name = "hami-runtime.csv"
    return Attachment(
        name,
        "Runtime tables: host GPUs, containers, monitors not reached (CSV)",
        memoized_render(summary, name, render),
    )


def tables_attachment(summary: Summary) -> Attachment:
    """The whole report with every row, as fixed-width text (nodes, namespaces, findings and
    checks too, which the CSV lacks)."""
    name = "hami-summary-tables.txt"
    what = "The whole report, every row: findings, checks, nodes, GPUs, namespaces, workloads"
    if summary.runtime is not None:
        what += ", runtime"
    if summary.real_usage is not None:
        what += ", real usage"
    return Attachment(
        name, what, memoized_render(summary, name, lambda: all_tables(summary).encode("utf-8"))
    )


def full_table_attachments(summary: Summary) -> tuple[Attachment, ...]:
    """The files that carry every row of every table: the GPU and workload CSV, the tables
    text, and the runtime CSV when the summary has runtime metrics."""
    files = [csv_attachment(summary), tables_attachment(summary)]
    if summary.runtime is not None:
        files.append(runtime_csv_attachment(summary))
    return tuple(files)
