"""The report's tables and sections as plain rows, shared by the text and Markdown views.

Both views show the same top-N rows in the same order (SPEC.md section 12) and say how many rows
were left out; the CSV view carries the full tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from heapq import nsmallest

from core.model import GpuSummary, Summary
from core.summary.workloads import is_core_resource, is_memory_resource
from core.views.visible_text import visible

GPU_INTEREST = {"inconsistent": 0, "full": 1, "partial": 2, "idle": 3}


@dataclass(frozen=True, slots=True)
class Table:
    title: str
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    omitted: int = 0
    omitted_hint: str = ""
    empty_reason: str = ""
    # columns cut first when a row is too wide for the terminal (long names, types)
    elastic: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        # Cells hold label values: a newline in one must not end its row in any view.
        object.__setattr__(self, "rows", tuple(tuple(map(visible, row)) for row in self.rows))


def num(value: float, digits: int = 0) -> str:
    if digits == 0 or abs(value - round(value)) < 1e-9:
        return f"{value:,.0f}"
    return f"{value:,.{digits}f}"


def pct(value: float) -> str:
    return f"{value:.1f}%"


def pct0(value: float) -> str:
    """Whole percent for table cells; the overview keeps one decimal."""
    return f"{value:.0f}%"


def short_uuid(uuid: str) -> str:
    return uuid if len(uuid) <= 14 else uuid[:13] + "…"


def mib(value: float) -> str:
    return f"{value:,.0f} MiB"


def gib(value_mib: float) -> str:
    return f"{value_mib / 1024:,.1f} GiB"


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
    incomplete = sum(1 for gpu in summary.gpus if "incomplete" in gpu.flags)
    # Free capacity is known only for GPUs with every series; say which the figure leaves out.
    unknown = f" (not counting {incomplete} incomplete GPU(s))" if incomplete else ""
    return [
        f"Nodes {c.nodes:,}, GPUs {c.gpus:,}, pods {c.pods:,}, namespaces {c.namespaces:,}",
        f"Cores allocated {num(c.core_allocated)} / {num(c.core_limit)} "
        f"({pct(c.core_allocated_percent)})",
        f"Memory allocated {mib(c.mem_allocated_mib)} / {mib(c.mem_limit_mib)} "
        f"({gib(c.mem_allocated_mib)} / {gib(c.mem_limit_mib)}, {pct(c.mem_allocated_percent)})",
        f"GPUs idle {c.idle_gpus}, partial {c.partial_gpus}, full {c.full_gpus}, "
        f"inconsistent {c.inconsistent_gpus}; shared {c.shared_gpus}, exclusive {c.exclusive_gpus}",
        f"Free: {c.free_whole_gpus} whole GPU(s), {num(c.free_cores)} cores, "
        f"{mib(c.free_mem_mib)} ({gib(c.free_mem_mib)}){unknown}",
        f"Distribution: {c.distribution}",
        f"Free capacity: {c.capacity_answer}",
    ]


def _limit(rows: Sequence[tuple[str, ...]], top: int) -> tuple[tuple[tuple[str, ...], ...], int]:
    return tuple(rows[:top]), max(len(rows) - top, 0)


def nodes_table(summary: Summary, top: int) -> Table:
    nodes = list(summary.nodes)
    ordered = (
        nodes
        if len(nodes) <= top
        else nsmallest(top, nodes, key=lambda n: (-n.free_cores, -n.free_mem_mib, n.node))
    )
    rows: list[tuple[str, ...]] = [
        (
            n.node,
            str(n.gpus),
            n.verdict,
            f"{num(n.core_allocated)}/{num(n.core_limit)} {pct0(n.core_allocated_percent)}",
            f"{n.mem_allocated_mib / 1024:,.0f}/{n.mem_limit_mib / 1024:,.0f} "
            f"{pct0(n.mem_allocated_percent)}",
            f"{n.idle_gpus}/{n.partial_gpus}/{n.full_gpus}/{n.inconsistent_gpus}",
            f"{num(n.free_cores)}c {n.free_mem_mib / 1024:,.0f}GiB",
            f"{num(n.largest_free_cores)}c {n.largest_free_mem_mib / 1024:,.0f}GiB",
        )
        for n in ordered[:top]  # only the rows shown are formatted
    ]
    shown, omitted = tuple(rows), max(len(nodes) - top, 0)
    title = "Nodes" if not omitted else f"Nodes ({len(shown)} of {len(nodes)}, most free first)"
    return Table(
        title,
        ("node", "GPUs", "verdict", "cores", "memory GiB", "I/P/F/X", "free", "largest slice"),
        shown,
        omitted,
        "full table: --format csv --csv-table nodes",
        "no GPU device series in the input",
    )


def short_type(device_type: str) -> str:
    """ "NVIDIA A100-PCIE-40GB" -> "A100-PCIE-40GB": the vendor word adds nothing in a table."""
    for prefix in ("NVIDIA-", "NVIDIA "):
        if device_type.startswith(prefix) and len(device_type) > len(prefix):
            return device_type[len(prefix) :]
    return device_type


def _gpu_order(g: GpuSummary) -> tuple[int, int, str, int]:
    interest = GPU_INTEREST.get(g.state, 9)
    if "overcommitted" in g.flags:
        interest = -1
    return (interest, 0 if "shared" in g.flags else 1, g.node, g.device_index)


def gpus_table(summary: Summary, top: int) -> Table:
    gpus = list(summary.gpus)
    # nsmallest is sorted(...)[:top] without sorting the rows that are not shown.
    ordered = gpus if len(gpus) <= top else nsmallest(top, gpus, key=_gpu_order)
    rows: list[tuple[str, ...]] = [
        (
            f"{g.node}/{g.device_index}",
            short_type(g.device_type),
            f"{num(g.core_allocated)}/{num(g.core_limit)} {pct0(g.core_allocated_percent)}",
            f"{num(g.mem_allocated_mib)}/{num(g.mem_limit_mib)} {pct0(g.mem_allocated_percent)}",
            str(g.shared_count),
            g.state,
            ", ".join(g.flags) or "-",
        )
        for g in ordered[:top]  # only the rows shown are formatted
    ]
    shown, omitted = tuple(rows), max(len(gpus) - top, 0)
    title = (
        "GPUs"
        if not omitted
        else (f"GPUs ({len(shown)} of {len(gpus)}: inconsistent, full and shared first)")
    )
    return Table(
        title,
        ("node/GPU", "type", "cores", "memory MiB", "shared", "state", "flags"),
        shown,
        omitted,
        "full table: --format csv",
        "no GPU device series in the input",
        elastic=(1,),
    )


def workloads_table(summary: Summary, top: int) -> Table:
    workloads = summary.workloads
    largest = nsmallest(top, workloads, key=lambda w: (-w.cores, -w.mem_mib, w.namespace, w.pod))
    # A GPU is easier to find by node and index than by its 40-character UUID.
    shown_uuids = {w.device_uuid for w in largest}
    index_of = {g.device_uuid: g.device_index for g in summary.gpus if g.device_uuid in shown_uuids}
    rows: list[tuple[str, ...]] = []
    for w in largest:
        marks = ["whole" if w.whole_gpu else "fraction"]
        if w.multi_gpu:
            marks.append("multi-GPU")
        if w.shares_gpu:
            marks.append("shared")
        index = index_of.get(w.device_uuid)
        # HAMi v2.10 always exports container index 0 (reference 2.4); older ones may not.
        pod = w.pod if w.container_index in ("0", "") else f"{w.pod} [{w.container_index}]"
        rows.append(
            (
                w.namespace,
                pod,
                f"{w.node}/{index}" if index is not None else short_uuid(w.device_uuid),
                num(w.cores),
                mib(w.mem_mib),
                ", ".join(marks),
            )
        )
    omitted = len(workloads) - len(rows)
    title = (
        "Workloads"
        if not omitted
        else f"Workloads ({len(rows)} of {len(workloads)}, largest first)"
    )
    return Table(
        title,
        ("namespace", "pod", "node/GPU", "cores", "memory", "marks"),
        tuple(rows),
        omitted,
        "full list: --format csv",
        "no per-pod allocation series (hami_vgpu_*) in the input",
        elastic=(0, 2, 1),
    )


def namespaces_table(summary: Summary, top: int) -> Table:
    namespaces = sorted(summary.namespaces, key=lambda n: (-n.cores, -n.mem_mib, n.namespace))
    rows: list[tuple[str, ...]] = [
        (
            ns.namespace,
            f"{num(ns.cores)} ({pct(ns.core_share_percent)})",
            f"{ns.mem_mib / 1024:,.1f} GiB ({pct(ns.mem_share_percent)})",
            f"{len(ns.pods)}/{ns.gpus_touched}",
            f"{ns.whole_gpu_allocations}/{ns.fractional_allocations}",
            ns.usage_class,
        )
        for ns in namespaces
    ]
    shown, omitted = _limit(rows, top)
    return Table(
        "Namespaces" if not omitted else f"Namespaces ({len(shown)} of {len(rows)})",
        ("namespace", "cores (share)", "memory (share)", "pods/GPUs", "whole/frac", "class"),
        shown,
        omitted,
        "full table: --format csv --csv-table namespaces",
        "no per-pod allocation or quota series in the input",
        elastic=(0,),
    )


def top_pods_table(summary: Summary, top: int, per_namespace: int = 3) -> Table:
    """The largest pods of the largest namespaces (SPEC 8, "top pods")."""
    namespaces = sorted(summary.namespaces, key=lambda n: (-n.cores, -n.mem_mib, n.namespace))
    rows: list[tuple[str, ...]] = [
        (ns.namespace, num(cores), mib(mem), pod)
        for ns in namespaces
        for pod, cores, mem in ns.top_pods[:per_namespace]
    ]
    shown, omitted = _limit(rows, top)
    return Table(
        f"Top pods per namespace (up to {per_namespace} each)",
        ("namespace", "cores", "memory", "pod"),
        shown,
        omitted,
        "every pod: --format csv --csv-table workloads",
        "no per-pod allocation series (hami_vgpu_*) in the input",
    )


def quota_unit(resource: str) -> str:
    """Quota figures are MiB for memory resources and share points for core ones (ref. 2.6)."""
    if is_memory_resource(resource):
        return "MiB"
    return "cores" if is_core_resource(resource) else ""


def quota_table(summary: Summary, top: int) -> Table:
    rows: list[tuple[str, ...]] = []
    for ns in summary.namespaces:
        for figure in ns.quota:
            unit = quota_unit(figure.resource)
            if figure.limit is None:
                status = "no limit set"
            elif figure.used > figure.limit:
                status = "EXCEEDED"
            else:
                status = f"{pct(figure.used / figure.limit * 100.0)} of limit"
            rows.append(
                (
                    ns.namespace,
                    figure.resource,
                    f"{num(figure.used)} {unit}".strip(),
                    f"{num(figure.limit)} {unit}".strip() if figure.limit is not None else "-",
                    status,
                )
            )
    shown, omitted = _limit(rows, top)
    return Table(
        "Quotas (HAMi accounting; limit 0 or none means no limit)",
        ("namespace", "resource", "used", "limit", "status"),
        shown,
        omitted,
        "full table: --format csv --csv-table namespaces",
        "no hami_resource_quota_used series in the input",
    )


def runtime_tables(summary: Summary, top: int) -> list[Table]:
    rt = summary.runtime
    if rt is None:
        return []
    hosts: list[tuple[str, ...]] = [
        (
            h.node,
            str(h.device_index),
            h.device_uuid,
            mib(h.mem_used_mib) if h.mem_used_mib is not None else "n/a",
            pct(h.utilization_percent) if h.utilization_percent is not None else "n/a",
            ("yes" if h.scheduler_device_known else "no") if summary.gpus else "n/a",
        )
        for h in rt.host_gpus
    ]
    host_rows, host_omitted = _limit(hosts, top)
    containers: list[tuple[str, ...]] = [
        (
            c.namespace,
            c.pod,
            c.container,
            (mib(c.mem_used_mib) if c.mem_used_mib is not None else "n/a")
            + " / "
            + (mib(c.mem_limit_mib) if c.mem_limit_mib is not None else "n/a"),
            pct(c.mem_used_percent) if c.mem_used_percent is not None else "n/a",
            pct(c.sm_utilization_percent) if c.sm_utilization_percent is not None else "n/a",
            f"{c.seconds_since_last_kernel:,.0f} s"
            if c.seconds_since_last_kernel is not None
            else "none yet",
        )
        for c in rt.containers
    ]
    ctr_rows, ctr_omitted = _limit(containers, top)
    return [
        Table(
            "Host GPUs (vGPU monitor)",
            ("node", "idx", "GPU", "memory used", "utilisation", "scheduled"),
            host_rows,
            host_omitted,
            "full table: --format csv --csv-table runtime",
            "no host GPU series from the vGPU monitor",
        ),
        Table(
            "Containers (vGPU monitor)",
            (
                "namespace",
                "pod",
                "container",
                "memory used / limit",
                "used",
                "SM util",
                "last kernel",
            ),
            ctr_rows,
            ctr_omitted,
            "full table: --format csv --csv-table runtime",
            "no container series from the vGPU monitor",
        ),
    ]


def real_usage_table(summary: Summary, top: int) -> Table | None:
    if summary.real_usage is None:
        return None
    rows: list[tuple[str, ...]] = []
    for u in summary.real_usage:
        if u.failure is not None:
            rows.append((u.namespace, u.pod, u.container or "-", "-", "-", "-", u.failure))
            continue
        rows.append(
            (
                u.namespace,
                u.pod,
                u.container or "-",
                pct(u.utilization_percent) if u.utilization_percent is not None else "n/a",
                (mib(u.mem_used_mib) if u.mem_used_mib is not None else "n/a")
                + f" of {mib(u.allocated_mem_mib)}",
                pct(u.mem_efficiency_percent) if u.mem_efficiency_percent is not None else "n/a",
                u.usage_class or "-",
            )
        )
    shown, omitted = _limit(rows, top)
    return Table(
        "Real usage (nvidia-smi, point in time)",
        (
            "namespace",
            "pod",
            "container",
            "utilisation",
            "memory used",
            "efficiency",
            "class / problem",
        ),
        shown,
        omitted,
        "",
        "no pod could be read",
    )


def capacity_table(summary: Summary) -> Table:
    rows: list[tuple[str, ...]] = []
    for s in summary.capacity:
        if s.mem_per_gpu_mib is None:
            shape = f"{s.gpus} GPU x {num(s.cores_per_gpu)} cores, " + (
                "whole memory" if s.cores_per_gpu >= 100 else f"{num(s.cores_per_gpu)}% memory"
            )
        else:
            shape = f"1 GPU, {mib(s.mem_per_gpu_mib)}, no core share"
        where = ", ".join(f"{n} ({c})" for n, c in s.nodes) or "nowhere"
        if s.node_count > len(s.nodes):
            where += f" and {s.node_count - len(s.nodes)} more node(s)"
        rows.append((s.name, shape, str(s.placements), where))
    return Table(
        "Capacity outlook (which job shapes fit now)",
        ("job", "shape", "placements", "where (top nodes)"),
        tuple(rows),
        0,
        "",
        "no GPU device series in the input",
    )
