"""``Changes`` on one screen of text, and as JSON, in the summary's number style.

The text keeps to about 40 lines whatever the cluster size: each list shows its largest ``top``
rows and says how many more there are; the JSON carries every row. It is laid out for 100
columns (a terminal) or, with ``width=72``, for a Slack code block that does not wrap: lines
wrap between words, the namespaces table shows each figure now and its change.
"""

from __future__ import annotations

import csv
import io
import textwrap
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from core import number_style
from core.history.changes import Changes, NamespaceChange, QuotaCrossing
from core.history.snapshot import PodFigures
from core.views.names import short_type
from core.views.outcome_words import increase_words
from core.views.spreadsheet import spreadsheet_cell
from core.views.table_spec import aligned_lines
from core.views.tables import quota_unit
from core.visible_text import visible

TOP_ROWS = 5
WIDTH = 100
# Below this width the namespaces table shows figures now and their change, not then -> now.
NARROW = 80


def whole(value: float) -> str:
    """A count or share-point figure rounded to a whole number, thousands separated."""
    return number_style.count(round(value))


def _wrap(text: str, width: int = WIDTH, indent: str = "") -> list[str]:
    # Node names such as gpu-node-01 must not be split at their hyphens.
    return textwrap.wrap(
        visible(text),
        width=width,
        initial_indent=indent,
        subsequent_indent=indent + "  ",
        break_on_hyphens=False,
    )


def stamp(unix_seconds: float) -> str:
    return datetime.fromtimestamp(unix_seconds, UTC).strftime("%Y-%m-%d %H:%M UTC")


def span_text(seconds: float) -> str:
    """A time span the way people say it: "40 min", "5.5 h", "3.0 days"."""
    seconds = abs(seconds)
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    if seconds < 3 * 86_400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86_400:.1f} days"


def signed(value: float, digits: int = 0) -> str:
    if abs(value) < 0.5 * 10**-digits:
        return "±0"
    return f"{value:+,.{digits}f}"


def _then_now(before: float, after: float, text: str) -> str:
    return f"{text} ({signed(after - before)})" if after != before else f"{text} (same)"


def header_lines(changes: Changes, subject: str | None = None, width: int = WIDTH) -> list[str]:
    """``subject`` names what was compared when it is not a cluster (e.g. two files)."""
    where = subject or (f"cluster {changes.cluster}" if changes.cluster else "the two inputs")
    a, b = changes.totals_before, changes.totals_after
    mem_delta = (b.mem_allocated_mib - a.mem_allocated_mib) / 1024
    lines = [
        f"Changes in {where}: {stamp(changes.before_at)} -> {stamp(changes.after_at)} "
        f"({span_text(changes.after_at - changes.before_at)} apart)",
        f"Cores allocated {whole(a.core_allocated)} -> {whole(b.core_allocated)} "
        f"({signed(b.core_allocated - a.core_allocated)}) of {whole(b.core_limit)}",
        f"Memory allocated {number_style.mem_total(a.mem_allocated_mib)} -> "
        f"{number_style.mem_total(b.mem_allocated_mib)} "
        f"({signed(mem_delta, 1)} GiB) of {number_style.mem_total(b.mem_limit_mib)}",
        _then_now(a.pods, b.pods, f"Pods holding GPUs {a.pods:,} -> {b.pods:,}")
        + "; "
        + _then_now(
            a.free_whole_gpus,
            b.free_whole_gpus,
            f"free whole GPUs {a.free_whole_gpus:,} -> {b.free_whole_gpus:,}",
        ),
    ]
    return [wrapped for line in lines for wrapped in _wrap(line, width)]


def _columns(rows: list[tuple[str, ...]], width: int = WIDTH) -> list[str]:
    """Rows as aligned columns indented by two; the first column (names) is at least 12
    characters wide and shortened in the middle, not below that, when the row would not fit
    the width, keeping the end that tells pods apart."""
    return ["  " + line for line in aligned_lines(rows, width - 2, name_floor=12, first_width=12)]


def _namespace_row(c: NamespaceChange) -> tuple[str, ...]:
    return (
        c.namespace,
        f"{whole(c.cores_before)} -> {whole(c.cores_after)} ({signed(c.cores_delta)})",
        f"{c.mem_before_mib / 1024:,.1f} -> {c.mem_after_mib / 1024:,.1f} GiB "
        f"({signed(c.mem_delta_mib / 1024, 1)})",
        f"{c.gpus_before} -> {c.gpus_after} ({signed(c.gpus_delta)})",
    )


def _narrow_namespace_row(c: NamespaceChange) -> tuple[str, ...]:
    return (
        c.namespace,
        f"{whole(c.cores_after)} ({signed(c.cores_delta)})",
        f"{number_style.mem_total(c.mem_after_mib)} ({signed(c.mem_delta_mib / 1024, 1)} GiB)",
        f"{c.gpus_after} ({signed(c.gpus_delta)})",
    )


def _namespaces_section(changes: Changes, top: int, width: int = WIDTH) -> list[str]:
    if not changes.namespaces:
        return []
    shown = changes.namespaces[:top]
    if width < NARROW:
        header = ("namespace", "cores now", "memory now", "GPUs now")
        rows = [header, *(_narrow_namespace_row(c) for c in shown)]
    else:
        rows = [("namespace", "cores", "memory", "GPUs"), *(_namespace_row(c) for c in shown)]
    return [
        f"Namespaces that grew or shrank: {len(changes.namespaces):,}",
        *_columns(rows, width),
        *_more(len(changes.namespaces), len(shown)),
    ]


def _pod_row(p: PodFigures) -> tuple[str, ...]:
    return (
        f"{p.namespace}/{p.pod}",
        p.node,
        f"{p.gpus} GPU" + ("" if p.gpus == 1 else "s"),
        f"{whole(p.cores)} cores",
        number_style.mem_total(p.mem_mib),
    )


def _more(total: int, shown: int) -> list[str]:
    return [f"  ... and {total - shown:,} more"] if total > shown else []


def _pods_section(
    title: str, pods: tuple[PodFigures, ...], top: int, width: int = WIDTH
) -> list[str]:
    if not pods:
        return []
    gpus = sum(p.gpus for p in pods)
    shown = pods[:top]
    head = f"{title}: {len(pods):,} pod(s), {gpus:,} GPU(s)"
    if len(pods) > len(shown):
        head += f" (largest {len(shown)} shown)"
    return [
        *_wrap(head, width),
        *_columns([_pod_row(p) for p in shown], width),
        *_more(len(pods), len(shown)),
    ]


def _names(names: tuple[str, ...], top: int) -> str:
    shown = ", ".join(names[:top])
    return shown + (f" and {len(names) - top:,} more" if len(names) > top else "")


def _nodes_section(changes: Changes, top: int, width: int = WIDTH) -> list[str]:
    parts = []
    if changes.nodes_appeared:
        parts.append(
            f"{len(changes.nodes_appeared):,} appeared ({_names(changes.nodes_appeared, top)})"
        )
    if changes.nodes_disappeared:
        parts.append(
            f"{len(changes.nodes_disappeared):,} disappeared "
            f"({_names(changes.nodes_disappeared, top)})"
        )
    return _wrap("Nodes: " + "; ".join(parts), width) if parts else []


# Models listed at most (a cluster with more keeps the text on one screen): those whose
# figures changed first, then the others, and a count of what was left out.
MAX_MODEL_ROWS = 8


def _models_section(changes: Changes, width: int = WIDTH) -> list[str]:
    if not changes.models:
        return []
    ordered = sorted(
        changes.models,
        key=lambda m: (m.free_after == m.free_before and m.gpus_after == m.gpus_before, m.model),
    )
    rows: list[tuple[str, ...]] = [("model", "free whole GPUs", "GPUs")]
    for m in ordered[:MAX_MODEL_ROWS]:
        free = f"{m.free_before} -> {m.free_after}"
        if m.free_after != m.free_before:
            free += f" ({signed(m.free_after - m.free_before)})"
        gpus = (
            f"{m.gpus_before} -> {m.gpus_after}"
            if m.gpus_after != m.gpus_before
            else str(m.gpus_after)
        )
        rows.append((short_type(m.model), free, gpus))
    left_out = len(ordered) - MAX_MODEL_ROWS
    more = (
        [f"  ... and {left_out:,} more models, unchanged"]
        if left_out > 0
        and all(
            m.free_after == m.free_before and m.gpus_after == m.gpus_before
            for m in ordered[MAX_MODEL_ROWS:]
        )
        else _more(len(ordered), min(len(ordered), MAX_MODEL_ROWS))
    )
    return ["Free whole GPUs per model, then -> now:", *_columns(rows, width), *more]


def _inconsistent_section(changes: Changes, top: int, width: int = WIDTH) -> list[str]:
    out: list[str] = []
    if changes.became_inconsistent:
        names = tuple(
            f"{g.node}/{g.device_index} {short_type(g.model)}" for g in changes.became_inconsistent
        )
        out += _wrap(
            f"GPUs that became inconsistent (memory without cores, or cores without memory): "
            f"{len(names):,} ({_names(names, top)})",
            width,
        )
    if changes.no_longer_inconsistent:
        out.append(f"GPUs no longer inconsistent: {len(changes.no_longer_inconsistent):,}")
    return out


def _quota_lines(crossings: tuple[QuotaCrossing, ...], top: int, width: int = WIDTH) -> list[str]:
    """One line per quota and direction, naming every threshold it crossed."""
    grouped: dict[tuple[str, str, str], list[QuotaCrossing]] = {}
    for c in crossings:
        grouped.setdefault((c.namespace, c.resource, c.direction), []).append(c)
    lines = []
    for (namespace, resource, direction), group in list(grouped.items())[:top]:
        verb = "passed" if direction == "up" else "fell below"
        marks = " and ".join(f"{c.threshold_percent:g}%" for c in group)
        c = group[0]
        unit = quota_unit(resource)
        amount = f"{whole(c.used)} of {whole(c.limit)}" + (f" {unit}" if unit else "")
        lines += _wrap(
            f"{namespace} {resource} {verb} {marks} "
            f"({number_style.percent(c.before_percent)} -> "
            f"{number_style.percent(c.after_percent)}; {amount})",
            width,
            indent="  ",
        )
    lines += _more(len(grouped), min(len(grouped), top))
    return ["Quota thresholds crossed:", *lines] if lines else []


def _outcome_lines(changes: Changes, width: int = WIDTH) -> list[str]:
    """What the scheduler counted between the two, with failures an hour."""
    if changes.outcomes is None:
        return []
    seconds = changes.after_at - changes.before_at
    return _wrap(
        f"Scheduler outcomes in these {span_text(seconds)}: "
        + increase_words(changes.outcomes, seconds),
        width,
    )


def render_text(
    changes: Changes, top: int = TOP_ROWS, *, subject: str | None = None, width: int = WIDTH
) -> str:
    """One screen: the header, then only the sections where something changed; no line is
    wider than ``width``."""
    out = header_lines(changes, subject, width)
    out += _namespaces_section(changes, top, width)
    out += _pods_section("Started holding GPUs", changes.pods_started, top, width)
    out += _pods_section("Stopped holding GPUs", changes.pods_stopped, top, width)
    out += _nodes_section(changes, top, width)
    out += _models_section(changes, width)
    out += _inconsistent_section(changes, top, width)
    out += _quota_lines(changes.quota_crossings, top, width)
    out += _outcome_lines(changes, width)
    if not changes.allocation_changed:
        out.append("Nothing changed in the allocation between the two.")
    # Every line is one line: a newline or escape sequence in a name is shown, not obeyed.
    return "\n".join(map(visible, out)) + "\n"


def changes_to_json(changes: Changes) -> dict[str, Any]:
    """Every row of ``changes`` as plain JSON data (times as ISO 8601 UTC)."""
    data = asdict(changes)
    data["before_at"] = datetime.fromtimestamp(changes.before_at, UTC).isoformat()
    data["after_at"] = datetime.fromtimestamp(changes.after_at, UTC).isoformat()
    for row, change in zip(data["namespaces"], changes.namespaces, strict=True):
        row.update(
            cores_delta=change.cores_delta,
            mem_delta_mib=change.mem_delta_mib,
            gpus_delta=change.gpus_delta,
        )
    return data


def pods_csv(changes: Changes) -> str:
    """Every pod that started or stopped holding GPUs, for the file the text's top rows cut."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(("change", "namespace", "pod", "node", "gpus", "cores", "memory_mib"))
    for change, pods in (("started", changes.pods_started), ("stopped", changes.pods_stopped)):
        for p in pods:
            row = (change, p.namespace, p.pod, p.node, p.gpus, p.cores, p.mem_mib)
            writer.writerow(tuple(map(spreadsheet_cell, row)))
    return buffer.getvalue()
