"""The report's detail tables and sections, shared by the text and Markdown views and the files.

Both views show the same top-N rows in the same order (the rows that most need a look first)
and say how many rows were left out; the tables file and the CSV view carry every row. The
columns of each table are defined once: those that also go to CSV and JSON in
``core.views.columns``, the report's own (top pods, quotas, capacity) here, all in the one
number style (``core.number_style``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from heapq import nlargest, nsmallest
from operator import attrgetter, itemgetter

from core import number_style
from core.model import (
    GpuSummary,
    NamespaceSummary,
    QuotaFigure,
    RuntimeSection,
    Summary,
    Workload,
)
from core.summary.input_notes import scheduler_state_words
from core.summary.workloads import is_core_resource, is_memory_resource
from core.views import columns, runtime_columns
from core.views import table_spec as col
from core.views.digest import namespace_order
from core.views.digest_tables import OUTLOOK
from core.views.names import short_type
from core.views.outcome_words import SINCE_START, lifetime_words
from core.views.table_spec import Table, TableSpec

__all__ = ["Table", "short_type"]

GPU_INTEREST = {"inconsistent": 0, "full": 1, "partial": 2, "idle": 3}


def age_text(
    fetched_at: datetime | None, now: datetime | None = None, verb: str = "scraped"
) -> str:
    """When the data was taken and how old it is; "scraped" for clusters, "saved" for files."""
    if fetched_at is None:
        return "time of scrape unknown (pasted or exported text)"
    now = now or datetime.now(UTC)
    stamp = fetched_at if fetched_at.tzinfo else fetched_at.replace(tzinfo=UTC)
    seconds = max((now - stamp).total_seconds(), 0.0)
    if seconds < 120:
        age = f"{seconds:.0f} s ago"
    elif seconds < 7200:
        age = f"{seconds / 60:.0f} min ago"
    else:
        age = f"{seconds / 3600:.1f} h ago"
    return f"{verb} {stamp.strftime('%Y-%m-%d %H:%M:%S UTC')} ({age})"


def source_line(summary: Summary) -> str:
    src = summary.source
    where = src.label
    if src.kind == "cluster":
        where = f"cluster {src.cluster}" + (f", context {src.context}" if src.context else "")
    return where


def header_lines(summary: Summary, now: datetime | None = None) -> list[str]:
    inp = summary.input
    series = sum(count for _, count in inp.families)
    lines = [
        f"Source: {source_line(summary)}; "
        + age_text(
            summary.source.fetched_at, now, "saved" if summary.source.kind == "file" else "scraped"
        ),
        f"Metrics: {inp.surface} names; from {', '.join(inp.components) or 'nothing'}; "
        f"{series:,} series in {len(inp.families)} families"
        + (f", {inp.ignored_series:,} unrelated series ignored" if inp.ignored_series else "")
        + (f"; HAMi {inp.hami_version}" if inp.hami_version else "")
        + (f"; {state}" if (state := scheduler_state_words(inp)) else ""),
    ]
    if summary.outcomes is not None:
        lines.append(f"{SINCE_START}: {lifetime_words(summary.outcomes)}")
    if summary.filters:
        lines.append("Filter: " + ", ".join(f"{k}={v}" for k, v in summary.filters))
    return lines


def other_notes(summary: Summary) -> list[str]:
    """The notes not already shown in the header."""
    return [note for note in summary.notes if note not in summary.headline]


def _incomplete(summary: Summary) -> int:
    return sum(1 for gpu in summary.gpus if "incomplete" in gpu.flags)


def overview_lines(summary: Summary) -> list[str]:
    c = summary.cluster
    if not summary.gpus and not summary.filters:
        # Monitor-only input: zeros here would read as facts about allocation.
        return [
            "No scheduler device series in the input: nodes, GPUs, cores and memory allocated "
            "are not known from these metrics.",
            f"Distribution: {c.distribution}",
            f"Free capacity: {c.capacity_answer}",
        ]
    incomplete = _incomplete(summary)
    # Free capacity is known only for GPUs with every series; say which the figure leaves out.
    unknown = ""
    if incomplete:
        unknown = f" (not counting {number_style.counted(incomplete, 'incomplete GPU')})"
    count = number_style.count
    return [
        f"Nodes {count(c.nodes)}, GPUs {count(c.gpus)}, pods {count(c.pods)}, namespaces "
        f"{count(c.namespaces)}",
        f"Cores allocated {number_style.cores_pair(c.core_allocated, c.core_limit)} "
        f"({number_style.percent(c.core_allocated_percent)})",
        f"Memory allocated {number_style.mem_total_pair(c.mem_allocated_mib, c.mem_limit_mib)} "
        f"({number_style.percent(c.mem_allocated_percent)})",
        f"GPUs idle {count(c.idle_gpus)}, partial {count(c.partial_gpus)}, full "
        f"{count(c.full_gpus)}, inconsistent {count(c.inconsistent_gpus)}; shared "
        f"{count(c.shared_gpus)}, exclusive {count(c.exclusive_gpus)}",
        f"Free: {number_style.counted(c.free_whole_gpus, 'whole GPU')}, "
        f"{number_style.cores(c.free_cores)}, {number_style.mem_total(c.free_mem_mib)}{unknown}",
        f"Distribution: {c.distribution}",
        f"Free capacity: {c.capacity_answer}",
    ]


def _top(rows: Sequence[object], top: int) -> int:
    return max(len(rows) - top, 0)


def nodes_table(summary: Summary, top: int) -> Table:
    nodes = list(summary.nodes)
    ordered = (
        nodes
        if len(nodes) <= top
        else nsmallest(top, nodes, key=lambda n: (-n.free_cores, -n.free_mem_mib, n.node))
    )
    omitted = _top(nodes, top)
    title = (
        "Nodes (I/P/F/X = idle/partial/full/inconsistent GPUs)"
        if not omitted
        else f"Nodes ({top:,} of {len(nodes):,}, most free first; I/P/F/X = idle/partial/full/"
        "inconsistent GPUs)"
    )
    return columns.NODES.table(title, ordered[:top], omitted)


def _gpu_order(g: GpuSummary) -> tuple[int, int, str, int]:
    interest = GPU_INTEREST.get(g.state, 9)
    if "overcommitted" in g.flags:
        interest = -1
    return (interest, 0 if "shared" in g.flags else 1, g.node, g.device_index)


def first_gpus(gpus: Sequence[GpuSummary], top: int) -> list[GpuSummary]:
    """``gpus`` as they are when all fit, else ``nsmallest(top, gpus, key=_gpu_order)``, with
    the key computed only for GPUs that can be among them.

    The first rows are the overcommitted GPUs and then the states in ``GPU_INTEREST`` order: the
    states whose GPUs (counted in C) reach ``top`` bound the candidates, and of 8,000 GPUs
    usually a few hundred remain to be ordered.
    """
    if len(gpus) <= top:
        return list(gpus)
    per_state = Counter(map(_STATE, gpus))
    reached, bound = 0, 9
    for state, interest in sorted(GPU_INTEREST.items(), key=itemgetter(1)):
        reached += per_state.get(state, 0)
        if reached >= top:
            bound = interest
            break
    candidates = [
        g for g in gpus if GPU_INTEREST.get(g.state, 9) <= bound or "overcommitted" in g.flags
    ]
    return nsmallest(top, candidates, key=_gpu_order)


_STATE = attrgetter("state")


def _workload_order(w: Workload) -> tuple[float, float, str, str]:
    return (-w.cores, -w.mem_mib, w.namespace, w.pod)


def largest_workloads(workloads: Sequence[Workload], top: int) -> list[Workload]:
    """``nsmallest(top, workloads, key=_workload_order)``, with the key computed only for
    workloads that can be among them: none with fewer cores than the ``top``-th most (found
    among the bare numbers, without a key call per workload)."""
    if len(workloads) <= top:
        return sorted(workloads, key=_workload_order)
    if top <= 0:
        return []
    least = nlargest(top, map(_CORES, workloads))[-1]
    return nsmallest(top, [w for w in workloads if w.cores >= least], key=_workload_order)


_CORES = attrgetter("cores")


def gpus_table(summary: Summary, top: int) -> Table:
    gpus = list(summary.gpus)
    ordered = first_gpus(gpus, top)
    omitted = _top(gpus, top)
    title = (
        "GPUs"
        if not omitted
        else f"GPUs ({top:,} of {len(gpus):,}: inconsistent, full and shared first)"
    )
    return columns.GPUS.table(title, ordered[:top], omitted)


def workloads_table(summary: Summary, top: int) -> Table:
    workloads = summary.workloads
    omitted = _top(workloads, top)
    largest = largest_workloads(workloads, top)
    title = (
        "Workloads" if not omitted else f"Workloads ({top:,} of {len(workloads):,}, largest first)"
    )
    # Only the GPUs of the rows shown are looked up: a large cluster has 8,000.
    shown_uuids = {w.device_uuid for w in largest}
    spec = columns.workloads_spec(
        {g.device_uuid: g.device_index for g in summary.gpus if g.device_uuid in shown_uuids}
    )
    return spec.table(title, largest, omitted)


def namespaces_table(summary: Summary, top: int) -> Table:
    namespaces = sorted(summary.namespaces, key=namespace_order)
    omitted = _top(namespaces, top)
    title = (
        "Namespaces (over quota and near it first; quota = highest use of a limit)"
        if not omitted
        else f"Namespaces ({top:,} of {len(namespaces):,}, over quota and near it first)"
    )
    return columns.NAMESPACES.table(title, namespaces[:top], omitted)


TOP_PODS: TableSpec[tuple[str, str, float, float]] = TableSpec(
    (
        col.text("namespace", "namespace", lambda r: r[0], name=True),
        col.cores("cores", "cores", lambda r: r[2]),
        col.mem_each("memory", "mem_mib", lambda r: r[3]),
        col.text("pod", "pod", lambda r: r[1], name=True),
    ),
    empty_reason="no per-pod allocation series (hami_vgpu_*) in the input",
    omitted_hint="every pod: --format csv --csv-table workloads",
)


def top_pods_table(summary: Summary, top: int, per_namespace: int = 3) -> Table:
    """The largest pods of the largest namespaces: up to ``per_namespace`` each, largest
    namespaces first, at most ``top`` rows."""
    namespaces = sorted(summary.namespaces, key=lambda n: (-n.cores, -n.mem_mib, n.namespace))
    rows = [
        (ns.namespace, pod, cores, mem)
        for ns in namespaces
        for pod, cores, mem in ns.top_pods[:per_namespace]
    ]
    return TOP_PODS.table(
        f"Top pods per namespace (up to {per_namespace} each)", rows[:top], _top(rows, top)
    )


def quota_unit(resource: str) -> str:
    """The unit of a quota figure: HAMi reports memory quotas (``gpumem``) in MiB and core quotas
    (``gpucores``) in share points, 100 to a GPU."""
    if is_memory_resource(resource):
        return "MiB"
    return "cores" if is_core_resource(resource) else ""


def quota_amount(resource: str, value: float) -> str:
    """A quota figure in the number style: memory as a total, cores as cores."""
    if is_memory_resource(resource):
        return number_style.mem_total(value)
    if is_core_resource(resource):
        return number_style.cores(value)
    return number_style.count(value)


def _quota_status(figure: QuotaFigure) -> str:
    if figure.limit is None:
        return "no limit set"
    use = number_style.percent(figure.used / figure.limit * 100.0)
    return f"EXCEEDED ({use})" if figure.used > figure.limit else f"{use} of limit"


QUOTAS: TableSpec[tuple[NamespaceSummary, QuotaFigure]] = TableSpec(
    (
        col.text("namespace", "namespace", lambda r: r[0].namespace, name=True),
        col.text("resource", "resource", lambda r: r[1].resource),
        col.Column(
            "used",
            "used",
            lambda r: quota_amount(r[1].resource, r[1].used),
            lambda r: r[1].used,
            "right",
        ),
        col.Column(
            "limit",
            "limit",
            lambda r: "-" if r[1].limit is None else quota_amount(r[1].resource, r[1].limit),
            lambda r: r[1].limit,
            "right",
        ),
        col.text("status", "status", lambda r: _quota_status(r[1])),
    ),
    empty_reason="no hami_resource_quota_used series in the input",
    omitted_hint="full table: --format csv --csv-table namespaces",
)


def _quota_order(row: tuple[NamespaceSummary, QuotaFigure]) -> tuple[int, float, str, str]:
    ns, figure = row
    use = figure.used / figure.limit * 100.0 if figure.limit else -1.0
    rank = 0 if ns.quota_state == "over" else 1 if ns.quota_state == "near" else 2
    return (rank, -use if rank < 2 else 0.0, ns.namespace, figure.resource)


def quota_table(summary: Summary, top: int) -> Table:
    rows = sorted(
        ((ns, figure) for ns in summary.namespaces for figure in ns.quota), key=_quota_order
    )
    return QUOTAS.table(
        "Quotas (over and near the limit first; limit 0 or none means no limit)",
        rows[:top],
        _top(rows, top),
    )


def _health_known(runtime: RuntimeSection) -> bool:
    return any(
        h.temperature_celsius is not None or h.power_watts is not None for h in runtime.host_gpus
    )


def runtime_tables(summary: Summary, top: int) -> list[Table]:
    rt = summary.runtime
    if rt is None:
        return []
    scheduler = runtime_columns.gpus_by_uuid(summary.gpus)
    hosts = [(h, scheduler.get(h.device_uuid)) for h in rt.host_gpus[:top]]
    containers = [(c, scheduler.get(c.device_uuid)) for c in rt.containers[:top]]
    return [
        runtime_columns.host_gpus_spec(bool(summary.gpus), _health_known(rt)).table(
            "Host GPUs (vGPU monitor)", hosts, _top(rt.host_gpus, top)
        ),
        runtime_columns.CONTAINERS.table(
            "Containers (vGPU monitor)", containers, _top(rt.containers, top)
        ),
    ]


def real_usage_table(summary: Summary, top: int) -> Table | None:
    if summary.real_usage is None:
        return None
    usage = summary.real_usage
    return runtime_columns.REAL_USAGE.table(
        "Real usage (nvidia-smi, point in time)", usage[:top], _top(usage, top)
    )


def capacity_table(summary: Summary) -> Table:
    return columns.CAPACITY.table(
        "Capacity outlook, whole cluster (which job shapes fit now)", summary.capacity
    )


def model_outlook_table(summary: Summary) -> Table | None:
    """How many jobs of each shape every GPU model could start now (the first page shows the
    largest models, or none beside runtime and real usage); None without device series."""
    if not summary.models:
        return None
    return OUTLOOK.table("Capacity outlook by GPU model (every model)", summary.models)
