"""The report's detail tables and sections, shared by the text and Markdown views and the files.

Both views show the same top-N rows in the same order (SPEC.md section 12) and say how many rows
were left out; the tables file and the CSV view carry every row. Each table's columns are
defined once (``core.views.table_spec``) in the one number style (``core.views.numbers``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from heapq import nsmallest

from core.model import (
    ContainerRuntime,
    GpuSummary,
    HostGpuRuntime,
    NamespaceSummary,
    NodeSummary,
    PodRealUsage,
    QuotaFigure,
    ShapeFit,
    Summary,
    Workload,
)
from core.summary.workloads import is_core_resource, is_memory_resource
from core.views import numbers
from core.views import table_spec as col
from core.views.names import gpu_name, pod_name, short_type
from core.views.table_spec import Table, TableSpec

__all__ = ["Table", "short_type"]

GPU_INTEREST = {"inconsistent": 0, "full": 1, "partial": 2, "idle": 3}


def num(value: float, digits: int = 0) -> str:
    """A count or share-point figure with thousands separators (``numbers.cores_value``)."""
    return numbers.cores_value(value) if digits else numbers.count(round(value))


def pct(value: float) -> str:
    return numbers.percent(value)


def short_uuid(uuid: str) -> str:
    return uuid if len(uuid) <= 14 else uuid[:13] + "…"


def mib(value: float) -> str:
    """Memory of one GPU or pod (GiB with one decimal, MiB below 1 GiB)."""
    return numbers.mem_each(value)


def gib(value_mib: float) -> str:
    """A memory total (GiB or TiB, three significant digits)."""
    return numbers.mem_total(value_mib)


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
        + (f"; HAMi {inp.hami_version}" if inp.hami_version else ""),
    ]
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
        unknown = f" (not counting {numbers.counted(incomplete, 'incomplete GPU')})"
    count = numbers.count
    return [
        f"Nodes {count(c.nodes)}, GPUs {count(c.gpus)}, pods {count(c.pods)}, namespaces "
        f"{count(c.namespaces)}",
        f"Cores allocated {numbers.cores_pair(c.core_allocated, c.core_limit)} "
        f"({numbers.percent(c.core_allocated_percent)})",
        f"Memory allocated {numbers.mem_total_pair(c.mem_allocated_mib, c.mem_limit_mib)} "
        f"({numbers.percent(c.mem_allocated_percent)})",
        f"GPUs idle {count(c.idle_gpus)}, partial {count(c.partial_gpus)}, full "
        f"{count(c.full_gpus)}, inconsistent {count(c.inconsistent_gpus)}; shared "
        f"{count(c.shared_gpus)}, exclusive {count(c.exclusive_gpus)}",
        f"Free: {numbers.counted(c.free_whole_gpus, 'whole GPU')}, {numbers.cores(c.free_cores)}, "
        f"{numbers.mem_total(c.free_mem_mib)}{unknown}",
        f"Distribution: {c.distribution}",
        f"Free capacity: {c.capacity_answer}",
    ]


def _top(rows: Sequence[object], top: int) -> int:
    return max(len(rows) - top, 0)


def _states(n: NodeSummary) -> str:
    return f"{n.idle_gpus}/{n.partial_gpus}/{n.full_gpus}/{n.inconsistent_gpus}"


def _largest_slice(n: NodeSummary) -> str:
    return f"{numbers.cores(n.largest_free_cores)}, {numbers.mem_each(n.largest_free_mem_mib)}"


NODES: TableSpec[NodeSummary] = TableSpec(
    (
        col.text("node", "node", lambda n: n.node, name=True),
        col.Column(
            "model",
            "device_types",
            lambda n: ", ".join(map(short_type, n.device_types)),
            width="name",
            optional=1,
        ),
        col.count("GPUs", "gpus", lambda n: n.gpus),
        col.text("I/P/F/X", "states", _states),
        col.percent("cores", "core_allocated_percent", lambda n: n.core_allocated_percent),
        col.percent("memory", "mem_allocated_percent", lambda n: n.mem_allocated_percent),
        col.cores("free cores", "free_cores", lambda n: n.free_cores),
        col.mem_total("free mem", "free_mem_mib", lambda n: n.free_mem_mib),
        col.Column("largest free slice", "largest_free", _largest_slice, optional=2),
        col.Column(
            "cores used",
            "core_allocated",
            lambda n: numbers.cores_pair(n.core_allocated, n.core_limit),
            lambda n: n.core_allocated,
            "right",
            optional=3,
        ),
        col.Column(
            "memory used",
            "mem_allocated_mib",
            lambda n: numbers.mem_total_pair(n.mem_allocated_mib, n.mem_limit_mib),
            lambda n: n.mem_allocated_mib,
            "right",
            optional=3,
        ),
        col.wrapped("verdict", "verdict", lambda n: n.verdict),
    ),
    empty_reason="no GPU device series in the input",
    omitted_hint="full table: --format csv --csv-table nodes",
)


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
    return NODES.table(title, ordered[:top], omitted)


def _gpu_order(g: GpuSummary) -> tuple[int, int, str, int]:
    interest = GPU_INTEREST.get(g.state, 9)
    if "overcommitted" in g.flags:
        interest = -1
    return (interest, 0 if "shared" in g.flags else 1, g.node, g.device_index)


def _known(g: GpuSummary, value: float) -> float | None:
    """A GPU figure, or None while one of its series is missing (its figures not known)."""
    return None if "incomplete" in g.flags else value


GPUS: TableSpec[GpuSummary] = TableSpec(
    (
        col.text("GPU", "gpu", lambda g: gpu_name(g.node, g.device_index), name=True),
        col.Column(
            "model", "device_type", lambda g: short_type(g.device_type), width="name", optional=1
        ),
        col.percent(
            "cores", "core_allocated_percent", lambda g: _known(g, g.core_allocated_percent)
        ),
        col.Column(
            "memory",
            "mem_allocated_mib",
            lambda g: numbers.mem_each_pair(
                _known(g, g.mem_allocated_mib), _known(g, g.mem_limit_mib)
            ),
            lambda g: g.mem_allocated_mib,
            "right",
        ),
        col.Column(
            "mem %",
            "mem_allocated_percent",
            lambda g: numbers.percent(_known(g, g.mem_allocated_percent)),
            lambda g: g.mem_allocated_percent,
            "right",
            optional=2,
        ),
        col.Column(
            "core shares",
            "core_allocated",
            lambda g: numbers.cores_pair(g.core_allocated, g.core_limit),
            lambda g: g.core_allocated,
            "right",
            optional=3,
        ),
        col.count("pods", "shared_count", lambda g: g.shared_count),
        col.text("state", "state", lambda g: g.state),
        col.wrapped("flags", "flags", lambda g: ", ".join(g.flags) or "-"),
    ),
    empty_reason="no GPU device series in the input",
    omitted_hint="full table: --format csv",
)


def gpus_table(summary: Summary, top: int) -> Table:
    gpus = list(summary.gpus)
    ordered = gpus if len(gpus) <= top else nsmallest(top, gpus, key=_gpu_order)
    omitted = _top(gpus, top)
    title = (
        "GPUs"
        if not omitted
        else f"GPUs ({top:,} of {len(gpus):,}: inconsistent, full and shared first)"
    )
    return GPUS.table(title, ordered[:top], omitted)


def _marks(w: Workload) -> str:
    marks = ["whole" if w.whole_gpu else "fraction"]
    if w.multi_gpu:
        marks.append("multi-GPU")
    if w.shares_gpu:
        marks.append("shared")
    return ", ".join(marks)


def _pod(w: Workload) -> str:
    # HAMi v2.10 always exports container index 0 (reference 2.4); older ones may not.
    return w.pod if w.container_index in ("0", "") else f"{w.pod} [{w.container_index}]"


def workloads_spec(index_of: dict[str, int]) -> TableSpec[Workload]:
    """The workloads table; ``index_of`` names each GPU by node and index (easier to find than
    its 40-character UUID)."""

    def where(w: Workload) -> str:
        index = index_of.get(w.device_uuid)
        return gpu_name(w.node, index) if index is not None else short_uuid(w.device_uuid)

    return TableSpec(
        (
            col.text("namespace", "namespace", lambda w: w.namespace, name=True),
            col.text("pod", "pod", _pod, name=True),
            col.text("GPU", "gpu", where, name=True),
            col.cores("cores", "cores", lambda w: w.cores),
            col.mem_each("memory", "mem_mib", lambda w: w.mem_mib),
            col.wrapped("marks", "marks", _marks),
        ),
        empty_reason="no per-pod allocation series (hami_vgpu_*) in the input",
        omitted_hint="full list: --format csv",
    )


def workloads_table(summary: Summary, top: int) -> Table:
    workloads = summary.workloads
    omitted = _top(workloads, top)
    largest = nsmallest(top, workloads, key=lambda w: (-w.cores, -w.mem_mib, w.namespace, w.pod))
    title = (
        "Workloads" if not omitted else f"Workloads ({top:,} of {len(workloads):,}, largest first)"
    )
    # Only the GPUs of the rows shown are looked up: a large cluster has 8,000.
    shown_uuids = {w.device_uuid for w in largest}
    spec = workloads_spec(
        {g.device_uuid: g.device_index for g in summary.gpus if g.device_uuid in shown_uuids}
    )
    return spec.table(title, largest, omitted)


def _quota_use(ns: NamespaceSummary) -> str:
    return "no limit" if ns.quota_use_percent is None else numbers.percent(ns.quota_use_percent)


def _with_share(value: str, share: float) -> str:
    return f"{value} ({numbers.percent(share)})"


NAMESPACES: TableSpec[NamespaceSummary] = TableSpec(
    (
        col.text("namespace", "namespace", lambda ns: ns.namespace, name=True),
        col.Column(
            "cores (share)",
            "cores",
            lambda ns: _with_share(numbers.cores_value(ns.cores), ns.core_share_percent),
            lambda ns: ns.cores,
            "right",
        ),
        col.Column(
            "memory (share)",
            "mem_mib",
            lambda ns: _with_share(numbers.mem_total(ns.mem_mib), ns.mem_share_percent),
            lambda ns: ns.mem_mib,
            "right",
        ),
        col.count("pods", "pods", lambda ns: len(ns.pods)),
        col.count("GPUs", "gpus_touched", lambda ns: ns.gpus_touched),
        col.count("nodes", "nodes_touched", lambda ns: ns.nodes_touched),
        col.Column(
            "whole/frac",
            "allocations",
            lambda ns: f"{ns.whole_gpu_allocations:,}/{ns.fractional_allocations:,}",
            optional=1,
        ),
        col.Column(
            "quota", "quota_use_percent", _quota_use, lambda ns: ns.quota_use_percent, "right"
        ),
        col.wrapped("class", "class", lambda ns: ns.usage_class),
    ),
    empty_reason="no per-pod allocation or quota series in the input",
    omitted_hint="full table: --format csv --csv-table namespaces",
)


def namespaces_table(summary: Summary, top: int) -> Table:
    from core.views.digest import namespace_order

    namespaces = sorted(summary.namespaces, key=namespace_order)
    omitted = _top(namespaces, top)
    title = (
        "Namespaces (over quota and near it first; quota = highest use of a limit)"
        if not omitted
        else f"Namespaces ({top:,} of {len(namespaces):,}, over quota and near it first)"
    )
    return NAMESPACES.table(title, namespaces[:top], omitted)


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
    """The largest pods of the largest namespaces (SPEC 8, "top pods")."""
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
    """Quota figures are MiB for memory resources and share points for core ones (ref. 2.6)."""
    if is_memory_resource(resource):
        return "MiB"
    return "cores" if is_core_resource(resource) else ""


def quota_amount(resource: str, value: float) -> str:
    """A quota figure in the number style: memory as a total, cores as cores."""
    if is_memory_resource(resource):
        return numbers.mem_total(value)
    if is_core_resource(resource):
        return numbers.cores(value)
    return numbers.count(value)


def _quota_status(figure: QuotaFigure) -> str:
    if figure.limit is None:
        return "no limit set"
    use = numbers.percent(figure.used / figure.limit * 100.0)
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


def _scheduled(summary: Summary, h: HostGpuRuntime) -> str:
    if not summary.gpus:
        return numbers.NOT_KNOWN
    return "yes" if h.scheduler_device_known else "no"


def _last_kernel(c: ContainerRuntime) -> str:
    if c.seconds_since_last_kernel is None:
        return "none yet"
    return numbers.seconds(c.seconds_since_last_kernel)


CONTAINERS: TableSpec[ContainerRuntime] = TableSpec(
    (
        col.text("namespace", "namespace", lambda c: c.namespace, name=True),
        col.text("pod", "pod", lambda c: c.pod, name=True),
        col.text("container", "container", lambda c: c.container, name=True),
        col.Column(
            "memory used / limit",
            "mem_used_mib",
            lambda c: numbers.mem_each_pair(c.mem_used_mib, c.mem_limit_mib),
            lambda c: c.mem_used_mib,
            "right",
        ),
        col.percent("used", "mem_used_percent", lambda c: c.mem_used_percent),
        col.percent("SM util", "sm_utilization_percent", lambda c: c.sm_utilization_percent),
        col.Column(
            "last kernel",
            "seconds_since_last_kernel",
            _last_kernel,
            lambda c: c.seconds_since_last_kernel,
            "right",
        ),
    ),
    empty_reason="no container series from the vGPU monitor",
    omitted_hint="full table: --format csv --csv-table runtime",
)


def runtime_tables(summary: Summary, top: int) -> list[Table]:
    rt = summary.runtime
    if rt is None:
        return []
    hosts: TableSpec[HostGpuRuntime] = TableSpec(
        (
            col.text("node", "node", lambda h: h.node, name=True),
            col.count("idx", "device_index", lambda h: h.device_index),
            col.text("GPU", "device_uuid", lambda h: h.device_uuid, name=True),
            col.mem_each("memory used", "mem_used_mib", lambda h: h.mem_used_mib),
            col.percent("utilisation", "utilization_percent", lambda h: h.utilization_percent),
            col.text("scheduled", "scheduled", lambda h: _scheduled(summary, h)),
        ),
        empty_reason="no host GPU series from the vGPU monitor",
        omitted_hint="full table: --format csv --csv-table runtime",
    )
    return [
        hosts.table("Host GPUs (vGPU monitor)", rt.host_gpus[:top], _top(rt.host_gpus, top)),
        CONTAINERS.table(
            "Containers (vGPU monitor)", rt.containers[:top], _top(rt.containers, top)
        ),
    ]


def _usage_or_failure(u: PodRealUsage, shown: str) -> str:
    return "-" if u.failure is not None else shown


REAL_USAGE: TableSpec[PodRealUsage] = TableSpec(
    (
        col.text("pod", "pod", lambda u: pod_name(u.namespace, u.pod), name=True),
        col.Column(
            "container", "container", lambda u: u.container or "-", width="name", optional=1
        ),
        col.Column(
            "util",
            "utilization_percent",
            lambda u: _usage_or_failure(u, numbers.percent(u.utilization_percent)),
            lambda u: u.utilization_percent,
            "right",
        ),
        col.Column(
            "memory used",
            "mem_used_mib",
            lambda u: _usage_or_failure(
                u, numbers.mem_each_pair(u.mem_used_mib, u.allocated_mem_mib)
            ),
            lambda u: u.mem_used_mib,
            "right",
        ),
        col.Column(
            "efficiency",
            "mem_efficiency_percent",
            lambda u: _usage_or_failure(u, numbers.percent(u.mem_efficiency_percent)),
            lambda u: u.mem_efficiency_percent,
            "right",
        ),
        col.wrapped("class / problem", "class", lambda u: u.failure or u.usage_class or "-"),
    ),
    empty_reason="no pod could be read",
)


def real_usage_table(summary: Summary, top: int) -> Table | None:
    if summary.real_usage is None:
        return None
    usage = summary.real_usage
    return REAL_USAGE.table("Real usage (nvidia-smi, point in time)", usage[:top], _top(usage, top))


def _shape(s: ShapeFit) -> str:
    if s.mem_per_gpu_mib is None:
        share = numbers.percent(s.cores_per_gpu)
        memory = "whole memory" if s.cores_per_gpu >= 100 else f"{share} memory"
        return f"{s.gpus} GPU x {numbers.cores(s.cores_per_gpu)}, {memory}"
    return f"1 GPU, {numbers.mem_each(s.mem_per_gpu_mib)}, no core share"


def _where(s: ShapeFit) -> str:
    where = ", ".join(f"{n} ({c:,})" for n, c in s.nodes) or "nowhere"
    if s.node_count > len(s.nodes):
        where += f" and {s.node_count - len(s.nodes):,} more node(s)"
    return where


CAPACITY: TableSpec[ShapeFit] = TableSpec(
    (
        col.text("job", "name", lambda s: s.name),
        col.text("shape", "shape", _shape),
        col.count("placements", "placements", lambda s: s.placements),
        col.wrapped("where (top nodes)", "nodes", _where),
    ),
    empty_reason="no GPU device series in the input",
)


def capacity_table(summary: Summary) -> Table:
    return CAPACITY.table(
        "Capacity outlook, whole cluster (which job shapes fit now)", summary.capacity
    )


def model_outlook_table(summary: Summary) -> Table | None:
    """How many jobs of each shape every GPU model could start now (the first page shows the
    largest models, or none beside runtime and real usage); None without device series."""
    from core.views.digest_tables import OUTLOOK

    if not summary.models:
        return None
    return OUTLOOK.table("Capacity outlook by GPU model (every model)", summary.models)
