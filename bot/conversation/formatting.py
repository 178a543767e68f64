"""Formatting shared by the Slack view and the chat mode (formatting only, no new numbers).

Full tables reuse ``core.views.tables`` rows so every surface shows the same cells; short
figures use its helpers too (``num``, ``pct``, ``age_text``), so a number reads the same in
Slack, the terminal and the text report.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from core.model import ExecFailure, PodRealUsage, Summary, UsageClass
from core.views import tables
from core.views.tables import age_text, num, pct
from core.views.text_view import format_table
from core.views.visible_text import visible

# Wide enough that no column is cut: these tables go into files or code blocks, not a terminal.
_NO_WRAP_WIDTH = 10_000


def given_text(age_seconds: float, now: datetime | None = None) -> str:
    """When metrics were given to the bot, ``given 2025-05-01 09:30:00 UTC (3 min ago)``, worded
    like the report's scrape time (``core.views.tables.age_text``)."""
    now = now or datetime.now(UTC)
    return age_text(now - timedelta(seconds=max(0.0, age_seconds)), now, verb="given")


# Inside a code block, Slack (like Markdown) ends the block at the next run of three backticks:
# a name holding them would let the rest of the table out as formatting. Backticks of the data
# are shown as the look-alike MODIFIER LETTER GRAVE ACCENT there.
_BACKTICK = "`"
_BACKTICK_LOOKALIKE = "\u02cb"


def code_block(body: str) -> str:
    """``body`` as a Slack/Markdown code block that only its own fences open and close."""
    return f"```{body.replace(_BACKTICK, _BACKTICK_LOOKALIKE)}```"


def fixed_width(header: Sequence[str], rows: Sequence[Sequence[str]], right: set[int]) -> str:
    """Rows as aligned columns (numbers right-aligned) for a code block; control characters in
    names (a newline in a label value) are shown escaped, so each row stays one line."""
    rows = [[visible(cell) for cell in row] for row in rows]
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


def real_usage_full_table(summary: Summary) -> str | None:
    """Every pod's real usage (nvidia-smi), titled; None for a summary without real usage."""
    if summary.real_usage is None:
        return None
    table = tables.real_usage_table(summary, top=len(summary.real_usage))
    return None if table is None else _whole(table, titled=True)


def all_tables(summary: Summary) -> str:
    """Nodes, GPUs, namespaces, workloads, runtime (vGPU monitor) and real usage in full: what
    a Slack message had no room for."""
    parts = [
        tables.nodes_table(summary, top=len(summary.nodes)),
        tables.gpus_table(summary, top=len(summary.gpus)),
        tables.namespaces_table(summary, top=len(summary.namespaces)),
        tables.workloads_table(summary, top=len(summary.workloads)),
    ]
    runtime = summary.runtime
    if runtime is not None:
        every_row = max(len(runtime.host_gpus), len(runtime.containers))
        parts.extend(tables.runtime_tables(summary, top=every_row))
    if summary.real_usage is not None:
        usage = tables.real_usage_table(summary, top=len(summary.real_usage))
        if usage is not None:
            parts.append(usage)
    header = "\n".join(tables.header_lines(summary))
    text = header + "\n\n" + "\n\n".join(_whole(table, titled=True) for table in parts) + "\n"
    if runtime is not None and runtime.missing_monitors:
        title = f"vGPU monitors not reached ({len(runtime.missing_monitors)})"
        text += "\n" + "\n".join([title, "-" * len(title),
                                  *(f"- {m}" for m in runtime.missing_monitors)]) + "\n"
    return text


def filter_text(summary: Summary) -> str:
    """``ns=team-a node=gpu-node-1`` for a filtered summary; empty otherwise."""
    return " ".join(f"{key}={value}" for key, value in summary.filters)


# -- real usage (nvidia-smi in the pods) ----------------------------------------------------------

USAGE_CLASSES: tuple[UsageClass, ...] = ("idle", "low / over-allocated", "normal", "high")
# Most actionable first: idle and over-allocated pods hold GPU memory they do not use.
_CLASS_RANK: dict[str, int] = {name: rank for rank, name in enumerate(USAGE_CLASSES)}


def usage_pod_name(usage: PodRealUsage) -> str:
    return f"{usage.namespace}/{usage.pod}"


def usage_read(summary: Summary) -> list[PodRealUsage]:
    """Pods whose nvidia-smi answered, most actionable first (idle, low, normal, high)."""
    read = [u for u in summary.real_usage or () if u.failure is None]
    return sorted(
        read,
        key=lambda u: (_CLASS_RANK.get(u.usage_class or "", len(USAGE_CLASSES)),
                       u.mem_efficiency_percent if u.mem_efficiency_percent is not None else 0.0,
                       u.namespace, u.pod),
    )


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
    return (f"Real usage (nvidia-smi, point in time): {read:,} of {len(summary.real_usage):,} "
            f"pods read{classes}")


def usage_failures_by_cause(summary: Summary) -> list[tuple[ExecFailure, list[PodRealUsage]]]:
    """Pods that could not be read, grouped by cause (the fix differs per cause), largest group
    first."""
    groups: dict[ExecFailure, list[PodRealUsage]] = {}
    for usage in summary.real_usage or ():
        if usage.failure is not None:
            groups.setdefault(usage.failure, []).append(usage)
    return sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))


def usage_row(usage: PodRealUsage) -> list[str]:
    """One read pod: pod, utilisation, memory used of allocated, efficiency, class."""
    util = pct(usage.utilization_percent) if usage.utilization_percent is not None else "n/a"
    used = num(usage.mem_used_mib) if usage.mem_used_mib is not None else "n/a"
    efficiency = (
        pct(usage.mem_efficiency_percent)
        if usage.mem_efficiency_percent is not None
        else "n/a"
    )
    return [
        usage_pod_name(usage),
        util,
        f"{used}/{num(usage.allocated_mem_mib)}",
        efficiency,
        usage.usage_class or "-",
    ]


USAGE_HEADER = ("pod", "util", "mem used/alloc MiB", "efficiency", "class")


def usage_failure_lines(summary: Summary, *, pods_shown: int = 6) -> list[str]:
    """``cause (n): pods — detail`` per failure cause, plain text (no markup)."""
    lines = []
    for cause, pods in usage_failures_by_cause(summary):
        names = ", ".join(usage_pod_name(u) for u in pods[:pods_shown])
        if len(pods) > pods_shown:
            names += f" and {len(pods) - pods_shown:,} more"
        detail = next((u.detail for u in pods if u.detail), "")
        if detail:
            # Details name the pod's container or namespace: one stands for the group.
            names += f" — {'e.g. ' if len(pods) > 1 else ''}{detail}"
        lines.append(f"{cause} ({len(pods):,}): {names}")
    return lines
