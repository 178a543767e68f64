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
    lines += _table(report.namespaces, "namespace", top, report.currency)
    lines.append(
        f"cluster: {_hours(report.allocated_gpu_hours)} GPU-hours allocated of "
        f"{_hours(report.capacity_gpu_hours)} GPU capacity-hours "
        f"({share(report.allocated_gpu_hours, report.capacity_gpu_hours)})"
    )
    if any(row.quota_use_percent is not None for row in report.namespaces):
        lines += _wrap(
            "quota: GPU-hours while a core quota (nvidia.com/gpucores) was set, of the "
            "quota's limit over that time",
            width,
        )
    if report.measured_seconds > 0:
        idle = sum(row.idle_gpu_hours or 0.0 for row in report.namespaces)
        lines += _wrap(
            f"idle: of a namespace's GPU-hours while runtime data was kept "
            f"({span_text(report.measured_seconds)} of the {span_text(report.covered_seconds)} "
            f"covered), the part its pods held while measured idle; {_hours(idle)} GPU-hours "
            "in all",
            width,
        )
    if report.models:
        lines.append("")
        lines += _model_table(report, top)
    if report.currency:
        lines += _wrap(_price_note(report), width)
    if report.namespace is not None:
        lines.append("")
        lines.append(f"Pods of {visible(report.namespace)}")
        if report.pods_covered_seconds < report.covered_seconds - 1.0:
            lines += _wrap(
                f"(counted over {span_text(report.pods_covered_seconds)}: pods are kept with "
                "the recent snapshots only; the namespace's hours above cover the whole period)",
                width,
            )
        lines += (
            _table(report.pods, "pod", top, report.currency)
            if report.pods
            else ["(none in this period)"]
        )
    return "\n".join(lines) + "\n"


def _price_note(report: UsageReport) -> str:
    note = f"cost: in {visible(report.currency)}, at the settings file's price per GPU-hour"
    if report.unpriced_models:
        models = ", ".join(visible(m) for m in report.unpriced_models)
        note += (
            f"; no price for {models}, so a namespace using it shows no cost "
            '(add it under prices.per_gpu_hour, or a "*" price for every other model)'
        )
    return note


def _money(value: float | None) -> str:
    return "-" if value is None else f"{value:,.2f}"


def _wrap(line: str, width: int) -> list[str]:
    return textwrap.wrap(line, width, subsequent_indent="  ", break_on_hyphens=False) or [""]


def _table(rows: tuple[UsageRow, ...], first: str, top: int, currency: str) -> list[str]:
    """Name, GPU-hours, GiB-hours, share; quota use when any namespace had a core quota;
    idle when runtime data was kept; cost when prices are set (``currency``)."""
    names = [visible(row.pod if first == "pod" and row.pod else row.namespace) for row in rows]
    width = max([len(first), *map(len, names[:top])])
    quotas = any(row.quota_use_percent is not None for row in rows)
    measured = any(row.idle_gpu_hours is not None for row in rows)
    header = f"{first:<{width}}  {'GPU-hours':>10}  {'GiB-hours':>11}  {'share':>6}"
    header += f"  {'quota':>6}" if quotas else ""
    header += f"  {'idle':>6}" if measured else ""
    header += f"  {'cost':>10}" if currency else ""
    lines = [header]
    for name, row in zip(names[:top], rows[:top], strict=False):
        line = (
            f"{name:<{width}}  {_hours(row.gpu_hours):>10}  {_hours(row.gib_hours):>11}  "
            f"{percent(row.share_percent):>6}"
        )
        if quotas:
            used = row.quota_use_percent
            line += f"  {percent(used) if used is not None else '-':>6}"
        if measured:
            idle = row.idle_percent
            line += f"  {percent(idle) if idle is not None else '-':>6}"
        line += f"  {_money(row.cost):>10}" if currency else ""
        lines.append(line)
    if len(rows) > top:
        lines.append(f"({len(rows) - top:,} more in the CSV)")
    return lines


def _model_table(report: UsageReport, top: int) -> list[str]:
    """GPU-hours per GPU model, of the model's GPUs x hours; price and cost when set."""
    models = report.models[:top]
    names = [visible(m.model) for m in models]
    width = max([len("GPU model"), *map(len, names)])
    header = f"{'GPU model':<{width}}  {'GPU-hours':>10}  {'of GPUs':>7}"
    header += f"  {'price':>7}  {'cost':>10}" if report.currency else ""
    lines = [header]
    for name, model in zip(names, models, strict=True):
        line = (
            f"{name:<{width}}  {_hours(model.gpu_hours):>10}  "
            f"{share(model.gpu_hours, model.capacity_gpu_hours):>7}"
        )
        if report.currency:
            line += f"  {_money(model.price):>7}  {_money(model.cost):>10}"
        lines.append(line)
    if len(report.models) > top:
        lines.append(f"({len(report.models) - top:,} more in the CSV)")
    return lines


CSV_COLUMNS = (
    "scope",
    "namespace",
    "pod",
    "model",
    "gpu_hours",
    "gib_hours",
    "share_percent",
    "quota_gpu_hours",
    "quota_use_percent",
    "idle_gpu_hours",
    "idle_percent",
    "cost",
    "currency",
)


def render_csv(report: UsageReport) -> str:
    """Every row, each with its ``scope``: ``namespace`` (its whole allocation),
    ``namespace-model`` (its part on one GPU model), ``model`` (share: of that model's GPUs x
    hours) and ``pod`` (of the namespace asked for). Summing one scope's rows gives the
    cluster's figures. The first line is the method, as a comment a spreadsheet shows in its
    first cell."""
    buffer = io.StringIO()
    method = f"# {METHOD}; from {stamp(report.since)} to {stamp(report.until)}"
    csv.writer(buffer, lineterminator="\n").writerow([method])
    writer = csv.DictWriter(buffer, CSV_COLUMNS, restval="", lineterminator="\n")
    writer.writeheader()
    rows: list[dict[str, object]] = []
    for ns in report.namespaces:
        rows.append(
            {
                "scope": "namespace",
                "namespace": ns.namespace,
                "gpu_hours": ns.gpu_hours,
                "gib_hours": ns.gib_hours,
                "share_percent": ns.share_percent,
                "quota_gpu_hours": ns.quota_gpu_hours,
                "quota_use_percent": ns.quota_use_percent,
                "idle_gpu_hours": ns.idle_gpu_hours,
                "idle_percent": ns.idle_percent,
                "cost": ns.cost,
            }
        )
    for held in report.holdings:
        rows.append(
            {
                "scope": "namespace-model",
                "namespace": held.namespace,
                "model": held.model,
                "gpu_hours": held.gpu_hours,
                "gib_hours": held.gib_hours,
                "cost": held.cost,
            }
        )
    for model in report.models:
        capacity = model.capacity_gpu_hours
        rows.append(
            {
                "scope": "model",
                "model": model.model,
                "gpu_hours": model.gpu_hours,
                "gib_hours": model.gib_hours,
                "share_percent": model.gpu_hours / capacity * 100.0 if capacity else None,
                "cost": model.cost,
            }
        )
    for pod in report.pods:
        rows.append(
            {
                "scope": "pod",
                "namespace": pod.namespace,
                "pod": pod.pod,
                "gpu_hours": pod.gpu_hours,
                "gib_hours": pod.gib_hours,
                "share_percent": pod.share_percent,
                "cost": pod.cost,
            }
        )
    for row in rows:
        if row.get("cost") is not None:
            row["currency"] = report.currency
        writer.writerow({name: _cell(value) for name, value in row.items()})
    return buffer.getvalue()


def _cell(value: object) -> object:
    """Text made formula-safe, numbers rounded to 4 places, None as an empty cell."""
    if value is None:
        return ""
    if isinstance(value, str):
        return spreadsheet_cell(value)
    if isinstance(value, float):
        return round(value, 4)
    return value
