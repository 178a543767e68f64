"""The first page of every answer: one screen at any cluster size, the same in every view.

In this order: the headline (GPUs, nodes, cores and memory allocated, free whole GPUs, the
largest job that fits now and on how many nodes); capacity by GPU model; every GPU when there
are only a few; the top namespaces with their share and quota use, over quota and near it
first; runtime and real usage when they were collected; what needs attention, counted, with a
few examples; the capacity outlook per model.
Input with only runtime (vGPU monitor) metrics is answered runtime first: what was measured,
and that allocation is not known.

The page is built once here as plain parts (facts, tables, lines); the text and Markdown
reports and the Slack message each lay it out. Every table is bounded (top rows, then how many
more and where they are), so the page stays one screen from 6 to 8,000 GPUs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from core import number_style
from core.model import ModelSummary, NamespaceSummary, Summary
from core.summary.input_notes import ALLOCATION_ONLY_NOTE
from core.views import digest_tables
from core.views.attention import EXAMPLES, Fact, Hints, Line, attention
from core.views.names import gpu_name, short_type
from core.views.table_spec import Table
from core.views.usage_lines import usage_failure_lines

# Every GPU is listed up to this many; above, the per-model table stands for them.
ALL_GPUS_UP_TO = 16
# A cluster of at most this many nodes has every node's name in full on the first page.
FULL_NODE_NAMES_UP_TO = 12
# The attention line that says nothing needs attention (and gives way to one that does).
NOTHING_FOUND = "Nothing found"
TOP_NAMESPACES = 8
TOP_MODELS = 8
TOP_RUNTIME_ROWS = 5
# Real usage was asked for by name (`usage`): more of its pods are shown than of runtime.
TOP_USAGE_ROWS = 6
# Pods named for each cause nvidia-smi could not read (the files list every one).
USAGE_FAILURE_EXAMPLES = 1
# Beside what was measured (runtime, real usage) the allocation part of the page is shorter, so
# the page stays near one screen: fewer namespaces and runtime rows, and the capacity outlook
# in the full report (the CSV button's tables file) instead of on the page.
TOP_NAMESPACES_MEASURED = 5
TOP_RUNTIME_ROWS_MEASURED = 3
# Real-usage classes, the most actionable first: idle and over-allocated pods hold memory they
# do not use.
_USAGE_RANK = {"idle": 0, "low / over-allocated": 1, "normal": 2, "high": 3}


@dataclass(frozen=True, slots=True)
class Section:
    key: str
    title: str
    note: str = ""
    table: Table | None = None
    lines: tuple[Line, ...] = ()
    after: str = ""  # said after the table: how many more rows, and where
    lines_title: str = ""  # said before the lines
    # Names the reader must be able to read whole (a small cluster's nodes): when the table, laid
    # out to a width, shortens or lacks one, the view says them after it (``names_in_full``).
    full_names: tuple[str, ...] = ()


def names_in_full(section: Section, table_lines: Sequence[str]) -> tuple[str, ...]:
    """``section.full_names`` when the laid-out table does not show every one of them whole
    (a view then says them after it, "Nodes: ..."); () when it does."""
    shown = "\n".join(table_lines)
    if all(name in shown for name in section.full_names):
        return ()
    return section.full_names


@dataclass(frozen=True, slots=True)
class Digest:
    title: str
    warnings: tuple[str, ...]  # what the reader must see first (runtime only, incomplete input)
    basis: str | None  # "allocation, not utilisation", when the answer rests on allocation only
    headline: tuple[Line, ...]
    sections: tuple[Section, ...]
    more: str  # where every full table is
    scope: str = ""  # under a filter: what it narrows and what stays the whole cluster


def plain(line: Line) -> str:
    """A headline or attention line as plain text."""
    return " · ".join(fact.plain() for fact in line)


def _devices_known(summary: Summary) -> bool:
    return bool(summary.gpus) or summary.cluster.gpus > 0


def _largest_job(summary: Summary) -> Fact:
    job = summary.largest_whole_job
    if job.gpus:
        what = (
            f"{number_style.count(job.gpus)} × {short_type(job.model)}"
            if job.model
            else number_style.counted(job.gpus, "whole GPU")
        )
        return Fact(
            what, f" on {number_style.counted(job.nodes, 'node')}", "largest job that fits: "
        )
    for shape in summary.capacity:
        if shape.placements and shape.name in ("half GPU", "quarter GPU"):
            return Fact(
                f"a {shape.name}",
                f" ({number_style.counted(shape.placements, 'place')})",
                "no whole GPU job fits; largest that fits now: ",
            )
    if summary.cluster.free_cores > 0 or summary.cluster.free_mem_mib > 0:
        return Fact("slivers", " of cores or memory", "what fits now: only ")
    incomplete = sum(1 for g in summary.gpus if "incomplete" in g.flags)
    if incomplete and incomplete >= len(summary.gpus):
        return Fact(number_style.NOT_KNOWN, ": no GPU has every series", "what fits now: ")
    if incomplete:
        return Fact(
            "nothing",
            f" on the {number_style.counted(len(summary.gpus) - incomplete, 'GPU')} "
            "with every series",
            "what fits now: ",
        )
    return Fact("nothing", ": every GPU is fully allocated", "what fits now: ")


def _allocated(what: str, percent: float, amounts: str, incomplete: int) -> Fact:
    """``cores 45.8% allocated (275 / 600 cores)``; with GPUs that lack a series, the share is
    not known (their missing figures would count as 0)."""
    if incomplete:
        verb = "lacks" if incomplete == 1 else "lack"
        lacking = (
            f" ({number_style.counted(incomplete, 'GPU')} {verb} a limit or allocation series)"
        )
        return Fact(number_style.NOT_KNOWN, lacking, f"{what} allocated: ")
    return Fact(number_style.percent(percent), f" allocated ({amounts})", f"{what} ")


def _allocation_headline(summary: Summary) -> list[Line]:
    c = summary.cluster
    incomplete = sum(1 for g in summary.gpus if "incomplete" in g.flags)
    unknown = f", {number_style.counted(incomplete, 'GPU')} not known" if incomplete else ""
    cores = number_style.cores_pair(c.core_allocated, c.core_limit)
    memory = number_style.mem_total_pair(c.mem_allocated_mib, c.mem_limit_mib)
    noun = "whole GPU" if c.free_whole_gpus == 1 else "whole GPUs"
    return [
        (
            Fact(
                number_style.counted(c.gpus, "GPU"), f" on {number_style.counted(c.nodes, 'node')}"
            ),
            _allocated("cores", c.core_allocated_percent, cores, incomplete),
        ),
        (
            _allocated("memory", c.mem_allocated_percent, memory, incomplete),
            Fact(number_style.count(c.free_whole_gpus), f" {noun} free{unknown}"),
        ),
        (_largest_job(summary),),
    ]


def _runtime_headline(summary: Summary) -> list[Line]:
    runtime = summary.runtime
    hosts = runtime.host_gpus if runtime is not None else ()
    containers = runtime.containers if runtime is not None else ()
    nodes = len({h.node for h in hosts})
    # A monitor that names no node (the Ascend device plugin's) leaves the count unknown.
    on = f" on {number_style.counted(nodes, 'node')}" if all(h.node for h in hosts) else ""
    return [
        (
            Fact(
                number_style.counted(len(hosts), "GPU"),
                f"{on} measured by the vGPU monitor",
            ),
            Fact(number_style.counted(len(containers), "container"), " measured"),
        ),
        (
            Fact(
                "not known",
                ": no scheduler device series in the input (nodes, GPUs, cores "
                "and memory allocated)",
                "allocation ",
            ),
        ),
    ]


def measured(summary: Summary) -> bool:
    """Whether the page shows measurements beside the allocation (runtime, real usage)."""
    return _devices_known(summary) and (
        summary.runtime is not None or summary.real_usage is not None
    )


def models_sections(summary: Summary, hints: Hints) -> list[Section]:
    models: Sequence[ModelSummary] = summary.models
    if not models:
        return []
    shown = models[:TOP_MODELS]
    more = len(models) - len(shown)
    parts = [f"{number_style.counted(more, 'more model')}: {hints.everything}"] if more else []
    if measured(summary):
        parts.append(f"capacity outlook per model: {hints.everything}, or {hints.fit}")
    after = " · ".join(parts)
    return [
        Section(
            "models",
            "By GPU model",
            digest_tables.MODELS_NOTE,
            digest_tables.MODELS.table("By GPU model", shown, more),
            after=after,
        ),
    ]


def _outlook_section(summary: Summary, hints: Hints) -> Section | None:
    models = summary.models[:TOP_MODELS]
    if not models:
        return None
    return Section(
        "outlook",
        "Capacity outlook by GPU model",
        digest_tables.OUTLOOK_NOTE,
        digest_tables.OUTLOOK.table("Capacity outlook", models),
        after=f"{digest_tables.OUTLOOK_SHAPES} · where: {hints.fit}",
    )


def _gpus_section(summary: Summary) -> Section | None:
    if not summary.gpus or len(summary.gpus) > ALL_GPUS_UP_TO:
        return None
    return Section(
        "gpus",
        "Every GPU",
        digest_tables.ALL_GPUS_NOTE,
        digest_tables.ALL_GPUS.table("GPUs", summary.gpus),
        full_names=_small_cluster_nodes(summary),
    )


def _small_cluster_nodes(summary: Summary) -> tuple[str, ...]:
    """Every node's name, when the cluster is small enough to name them all on one page."""
    nodes = tuple(dict.fromkeys(gpu.node for gpu in summary.gpus))
    return nodes if len(nodes) <= FULL_NODE_NAMES_UP_TO else ()


_QUOTA_ORDER = {"over": 0, "near": 1, "within": 2, "no limit": 2}


def namespace_order(ns: NamespaceSummary) -> tuple[int, float, float, str]:
    """Over quota first, then near it, then by allocated cores and memory."""
    return (_QUOTA_ORDER[ns.quota_state], -ns.cores, -ns.mem_mib, ns.namespace)


def _namespaces_section(summary: Summary, hints: Hints) -> Section | None:
    namespaces = sorted(
        (ns for ns in summary.namespaces if ns.cores > 0 or ns.mem_mib > 0 or ns.quota),
        key=namespace_order,
    )
    if not namespaces:
        return None
    shown = namespaces[: TOP_NAMESPACES_MEASURED if measured(summary) else TOP_NAMESPACES]
    more = len(namespaces) - len(shown)
    pods = sum(len(ns.pods) for ns in namespaces)
    title = "Namespaces" + (f": top {len(shown)} of {len(namespaces)}" if more else "")
    return Section(
        "namespaces",
        f"{title} ({number_style.counted(pods, 'pod')})",
        digest_tables.TOP_NAMESPACES_NOTE,
        digest_tables.TOP_NAMESPACES.table("Namespaces", shown, more),
        after=f"{number_style.count(more)} more: {hints.namespaces}" if more else "",
    )


def _more(count: int, plural: str, where: str) -> str:
    """``2,392 more host GPUs: CSV button``; nothing when none is left out."""
    return f"{number_style.count(count)} more {plural}: {where}" if count else ""


def _runtime_rows(summary: Summary) -> int:
    return TOP_RUNTIME_ROWS_MEASURED if measured(summary) else TOP_RUNTIME_ROWS


def host_section(summary: Summary, hints: Hints) -> Section | None:
    runtime = summary.runtime
    if runtime is None:
        return None
    hosts = list(runtime.host_gpus)
    missing = len(runtime.missing_monitors)
    title = (
        "Runtime (vGPU monitor, measured at scrape time): "
        + number_style.counted(len(hosts), "host GPU")
        + ", "
        + number_style.counted(len(runtime.containers), "container")
        + (f", {number_style.counted(missing, 'monitor')} not reached" if missing else "")
    )
    if len(hosts) > ALL_GPUS_UP_TO:
        # The busiest first: where the measured use is.
        hosts.sort(key=lambda h: (-(h.mem_used_mib or 0.0), h.node, h.device_index))
    shown = hosts[: _runtime_rows(summary)] if len(hosts) > ALL_GPUS_UP_TO else hosts
    more = _more(len(hosts) - len(shown), "host GPUs", hints.runtime)
    if not _devices_known(summary):
        table = digest_tables.HOST_GPUS.table("GPUs", shown, len(hosts) - len(shown))
        note = "memory used and utilisation now"
    else:
        by_uuid = {g.device_uuid: g for g in summary.gpus}
        rows = [(h, by_uuid.get(h.device_uuid)) for h in shown]
        table = digest_tables.HOST_GPUS_WITH_ALLOCATION.table("GPUs", rows, len(hosts) - len(shown))
        note = digest_tables.HOST_GPUS_NOTE
    return Section("hosts", title, note, table if hosts else None, after=more)


def containers_section(summary: Summary, hints: Hints) -> Section | None:
    runtime = summary.runtime
    if runtime is None or not runtime.containers:
        return None
    idle = {(i.namespace, i.pod) for i in summary.idle_allocations or ()}
    containers = sorted(
        runtime.containers,
        key=lambda c: (
            (c.namespace, c.pod) not in idle,
            -(c.mem_used_mib or 0.0),
            c.namespace,
            c.pod,
        ),
    )
    shown = containers[: _runtime_rows(summary)]
    where = {g.device_uuid: gpu_name(g.node, g.device_index) for g in summary.gpus}
    for h in runtime.host_gpus:
        where.setdefault(h.device_uuid, gpu_name(h.node, h.device_index))
    return Section(
        "containers",
        f"Containers ({number_style.count(len(containers))}), idle first",
        digest_tables.CONTAINERS_NOTE,
        digest_tables.containers_spec(where).table(
            "Containers", shown, len(containers) - len(shown)
        ),
        after=_more(len(containers) - len(shown), "containers", hints.runtime),
    )


def real_usage_section(summary: Summary, hints: Hints) -> Section | None:
    usage = summary.real_usage
    if usage is None:
        return None
    read = sorted(
        (u for u in usage if u.failure is None),
        key=lambda u: (
            _USAGE_RANK.get(u.usage_class or "", 9),
            u.mem_efficiency_percent or 0.0,
            u.namespace,
            u.pod,
        ),
    )
    shown = read[:TOP_USAGE_ROWS]
    classes = " · ".join(
        f"{name} {sum(1 for u in read if u.usage_class == name):,}" for name in _USAGE_RANK
    )
    note = f"{number_style.counted(len(read), 'pod')} read of {len(usage):,}" + (
        f" · {classes}" if read else ""
    )
    unread = len(usage) - len(read)
    causes = tuple(
        (Fact(line.split(":", 1)[0], ":" + line.split(":", 1)[1]),)
        for line in usage_failure_lines(summary, pods_shown=USAGE_FAILURE_EXAMPLES)[:EXAMPLES]
    )
    return Section(
        "real usage",
        "Real usage (nvidia-smi, point in time)",
        note,
        digest_tables.REAL_USAGE.table("Real usage", shown, len(read) - len(shown))
        if read
        else None,
        lines=causes,
        after=_more(len(read) - len(shown), "pods read", hints.workloads),
        lines_title=f"Could not read {number_style.counted(unread, 'pod')}, by cause:"
        if unread
        else "",
    )


def _nothing_found(summary: Summary) -> Fact:
    """What was checked and found clear, and what could not be checked (never "none" for a
    figure the input does not give)."""
    clear, unknown = [], []
    if any(ns.quota for ns in summary.namespaces):
        clear.append("no namespace over quota")
    else:
        unknown.append("quota use (no quota series)")
    if _devices_known(summary):
        clear.append("no inconsistent or overcommitted GPU, no fragmented node")
    else:
        unknown.append("GPU states (no scheduler device series)")
    if any(check.status == "pass" for check in summary.checks):
        clear.append("no failed check")
    if summary.idle_allocations is None:
        unknown.append("idle allocations (no runtime data)")
    else:
        clear.append("no idle allocation measured")
    text = "; ".join(clear)
    if unknown:
        text += ("; " if text else "") + "not known: " + ", ".join(unknown)
    return Fact(NOTHING_FOUND, f": {text}")


def attention_section(summary: Summary, hints: Hints, *, nodes: bool = True) -> Section:
    """``nodes`` False: fragmented nodes are left out (a namespace's page is about it, not
    about the nodes it shares)."""
    items = attention(summary, hints, nodes=nodes)
    if not items:
        return Section("attention", "Needs attention", lines=((_nothing_found(summary),),))
    return Section("attention", "Needs attention", lines=tuple(items))


def cluster_headline(summary: Summary) -> list[Line]:
    """The headline of the whole cluster: allocation, or what runtime metrics measured, or
    that the input tells neither."""
    if _devices_known(summary):
        return _allocation_headline(summary)
    if summary.runtime is not None:
        return _runtime_headline(summary)
    return [
        (
            Fact(
                "not known",
                ": the input has no scheduler device series",
                "nodes, GPUs and allocation: ",
            ),
        )
    ]


def more_line(hints: Hints) -> str:
    """The page's last line: where every full list is."""
    return hints.more or (
        f"Every GPU: {hints.gpus} · every pod: {hints.workloads} · every table: {hints.everything}."
    )


def warnings_of(summary: Summary) -> tuple[str, ...]:
    """What the reader must see first (runtime only, incomplete input)."""
    return tuple(note for note in summary.headline if note != ALLOCATION_ONLY_NOTE)


def cluster_digest(summary: Summary, hints: Hints) -> Digest:
    """The first page of an unfiltered ``summary``; ``hints`` say where the full lists are."""
    known = _devices_known(summary)
    sections: list[Section] = []
    if known:
        sections += models_sections(summary, hints)
        gpus = _gpus_section(summary)
        if gpus is not None:
            sections.append(gpus)
        elif sections:  # too many GPUs to list: the models table names the nodes after it
            sections[-1] = replace(sections[-1], full_names=_small_cluster_nodes(summary))
    for section in (
        _namespaces_section(summary, hints),
        host_section(summary, hints),
        containers_section(summary, hints),
        real_usage_section(summary, hints),
        attention_section(summary, hints),
        _outlook_section(summary, hints) if known and not measured(summary) else None,
    ):
        if section is not None:
            sections.append(section)
    return Digest(
        title=summary.source.cluster or summary.source.label,
        warnings=warnings_of(summary),
        basis=ALLOCATION_ONLY_NOTE if ALLOCATION_ONLY_NOTE in summary.headline else None,
        headline=tuple(cluster_headline(summary)),
        sections=tuple(sections),
        more=more_line(hints),
    )
