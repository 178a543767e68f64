"""The tables that go to files as well as to people, each defined once, as columns.

Nodes, GPUs, workloads, namespaces, GPU models and the job shapes that fit (the vGPU
monitor's host GPUs and containers, and real usage, are in ``core.views.runtime_columns``):
each ``TableSpec`` here is that table in every output. Its shown columns (with a header) are
the text and Markdown reports and the Slack messages and files; its exact columns (with a key)
are the CSV table and the JSON document's list, in this order (the JSON keys in ``json_order``
where the document has always written them in another). A column with both is in all of
them. To add a column to a table, add it here.

The shown columns and the exact ones are interleaved so that each keeps its own order: a
column shown in one place but written elsewhere in the files is two columns, one shown only
(no key) and one exact only (``col.exact``). Percentages in the files have four decimals, where
the JSON contract has them rounded; the CSV has every percentage rounded (``csv=``).
"""

from __future__ import annotations

from collections.abc import Mapping

from core import number_style
from core.model import (
    GpuSummary,
    ModelSummary,
    NamespaceSummary,
    NodeSummary,
    ShapeFit,
    Workload,
)
from core.views import table_spec as col
from core.views.names import gpu_name, short_type
from core.views.table_spec import TableSpec, rounded

NO_DEVICE_SERIES = "no GPU device series in the input"


def _words(values: tuple[str, ...]) -> str:
    """A list in a CSV cell: its items separated by spaces."""
    return " ".join(values)


# -- nodes ------------------------------------------------------------------------------------


def _states(n: NodeSummary) -> str:
    return f"{n.idle_gpus}/{n.partial_gpus}/{n.full_gpus}/{n.inconsistent_gpus}"


def _largest_slice(n: NodeSummary) -> str:
    cores = number_style.cores(n.largest_free_cores)
    return f"{cores}, {number_style.mem_each(n.largest_free_mem_mib)}"


# The JSON document's order of a node's keys.
_NODE_KEYS = (
    "node", "gpus", "device_types", "core_limit", "core_allocated",
    "core_allocated_percent", "mem_limit_mib", "mem_allocated_mib", "mem_allocated_percent",
    "idle_gpus", "partial_gpus", "full_gpus", "inconsistent_gpus", "shared_gpus",
    "free_whole_gpus", "free_cores", "free_mem_mib", "largest_free_cores",
    "largest_free_mem_mib", "pods", "verdict",
)  # fmt: skip
NODES: TableSpec[NodeSummary] = TableSpec(
    (
        col.text("node", "node", name=True),
        col.Column(
            "model",
            "device_types",
            lambda n: ", ".join(map(short_type, n.device_types)),
            col.Field("device_types"),
            width="name",
            optional=1,
            in_csv=False,
        ),
        col.count("GPUs", "gpus"),
        col.text("I/P/F/X", "", _states),
        col.exact("core_allocated"),
        col.exact("core_limit"),
        col.Column(
            "cores",
            "core_allocated_percent",
            lambda n: number_style.percent(n.core_allocated_percent),
            col.Field("core_allocated_percent", rounded),
            "right",
            in_csv=False,
        ),
        col.exact("mem_allocated_mib"),
        col.exact("mem_limit_mib"),
        col.Column(
            "memory",
            "mem_allocated_percent",
            lambda n: number_style.percent(n.mem_allocated_percent),
            col.Field("mem_allocated_percent", rounded),
            "right",
            in_csv=False,
        ),
        col.exact("idle_gpus"),
        col.exact("partial_gpus"),
        col.exact("full_gpus"),
        col.exact("inconsistent_gpus"),
        col.exact("shared_gpus", in_csv=False),
        col.exact("free_whole_gpus", in_csv=False),
        col.cores("free cores", "free_cores"),
        col.mem_total("free mem", "free_mem_mib"),
        col.Column("largest free slice", "", _largest_slice, optional=2),
        col.Column(
            "cores used",
            "",
            lambda n: number_style.cores_pair(n.core_allocated, n.core_limit),
            align="right",
            optional=3,
        ),
        col.Column(
            "memory used",
            "",
            lambda n: number_style.mem_total_pair(n.mem_allocated_mib, n.mem_limit_mib),
            align="right",
            optional=3,
        ),
        col.exact("largest_free_cores"),
        col.exact("largest_free_mem_mib"),
        col.exact("pods", in_csv=False),
        col.wrapped("verdict", "verdict"),
    ),
    empty_reason=NO_DEVICE_SERIES,
    omitted_hint="full table: --format csv --csv-table nodes",
    json_order=_NODE_KEYS,
)


# -- GPUs -------------------------------------------------------------------------------------


def _known(g: GpuSummary, value: float) -> float | None:
    """A GPU figure, or None while one of its series is missing (its figures not known)."""
    return None if "incomplete" in g.flags else value


# The JSON document's order of a GPU's keys.
_GPU_KEYS = (
    "node", "device_index", "device_uuid", "device_type", "core_limit", "core_allocated",
    "core_allocated_percent", "mem_limit_mib", "mem_allocated_mib", "mem_allocated_percent",
    "shared_count", "containers", "free_cores", "free_mem_mib", "namespaces", "state",
    "flags",
)  # fmt: skip
GPUS: TableSpec[GpuSummary] = TableSpec(
    (
        col.text("GPU", "", lambda g: gpu_name(g.node, g.device_index), name=True),
        col.exact("node"),
        col.exact("device_index"),
        col.exact("device_uuid"),
        col.Column(
            "model",
            "device_type",
            lambda g: short_type(g.device_type),
            col.Field("device_type"),
            width="name",
            optional=1,
        ),
        col.exact("core_allocated"),
        col.exact("core_limit"),
        col.percent(
            "cores",
            "core_allocated_percent",
            lambda g: _known(g, g.core_allocated_percent),
            value=col.Field("core_allocated_percent"),
        ),
        col.Column(
            "memory",
            "mem_allocated_mib",
            lambda g: number_style.mem_each_pair(
                _known(g, g.mem_allocated_mib), _known(g, g.mem_limit_mib)
            ),
            col.Field("mem_allocated_mib"),
            "right",
        ),
        col.exact("mem_limit_mib"),
        col.percent(
            "mem %",
            "mem_allocated_percent",
            lambda g: _known(g, g.mem_allocated_percent),
            value=col.Field("mem_allocated_percent"),
            optional=2,
        ),
        col.Column(
            "core shares",
            "",
            lambda g: number_style.cores_pair(g.core_allocated, g.core_limit),
            align="right",
            optional=3,
        ),
        col.count("pods", "shared_count"),
        col.exact("containers", in_csv=False),
        col.text("state", "state"),
        col.Column(
            "flags",
            "flags",
            lambda g: ", ".join(g.flags) or "-",
            col.Field("flags"),
            width="wrap",
            csv=col.Field("flags", _words),
        ),
        col.exact("free_cores"),
        col.exact("free_mem_mib"),
        col.exact("namespaces", csv=col.Field("namespaces", _words)),
    ),
    empty_reason=NO_DEVICE_SERIES,
    omitted_hint="full table: --format csv",
    json_order=_GPU_KEYS,
)


# -- workloads --------------------------------------------------------------------------------


def short_uuid(uuid: str) -> str:
    return uuid if len(uuid) <= 14 else uuid[:13] + "…"


def _marks(w: Workload) -> str:
    marks = ["whole" if w.whole_gpu else "fraction"]
    if w.multi_gpu:
        marks.append("multi-GPU")
    if w.shares_gpu:
        marks.append("shared")
    return ", ".join(marks)


def _pod(w: Workload) -> str:
    # HAMi v2.10 always exports container index 0; older ones may not.
    return w.pod if w.container_index in ("0", "") else f"{w.pod} [{w.container_index}]"


def workloads_spec(index_of: Mapping[str, int]) -> TableSpec[Workload]:
    """The workloads table; ``index_of`` names each GPU by node and index (easier to find than
    its 40-character UUID) in the shown table; the files have the UUID."""

    def where(w: Workload) -> str:
        index = index_of.get(w.device_uuid)
        return gpu_name(w.node, index) if index is not None else short_uuid(w.device_uuid)

    return TableSpec(
        (
            col.text("namespace", "namespace", name=True),
            col.Column("pod", "pod", _pod, col.Field("pod"), width="name"),
            col.exact("container_index"),
            col.exact("node"),
            col.exact("device_uuid"),
            col.text("GPU", "", where, name=True),
            col.cores("cores", "cores"),
            col.mem_each("memory", "mem_mib"),
            col.exact("whole_gpu"),
            col.exact("multi_gpu"),
            col.exact("shares_gpu"),
            col.wrapped("marks", "", _marks),
        ),
        empty_reason="no per-pod allocation series (hami_vgpu_*) in the input",
        omitted_hint="full list: --format csv",
    )


# The workloads in the files, which name GPUs by UUID.
WORKLOADS = workloads_spec({})


# -- namespaces -------------------------------------------------------------------------------


def _quota_use(ns: NamespaceSummary) -> str:
    return (
        "no limit" if ns.quota_use_percent is None else number_style.percent(ns.quota_use_percent)
    )


def _with_share(value: str, share: float) -> str:
    return f"{value} ({number_style.percent(share)})"


def _quota_words(ns: NamespaceSummary) -> str:
    """``resource=used/limit`` for each quota, ``-`` for no limit (memory in MiB, cores)."""
    return " ".join(
        f"{f.resource}={f.used:g}/{'-' if f.limit is None else f'{f.limit:g}'}" for f in ns.quota
    )


NAMESPACES: TableSpec[NamespaceSummary] = TableSpec(
    (
        col.text("namespace", "namespace", lambda ns: ns.namespace, name=True),
        col.Column(
            "cores (share)",
            "cores",
            lambda ns: _with_share(number_style.cores_value(ns.cores), ns.core_share_percent),
            lambda ns: ns.cores,
            "right",
        ),
        col.Column(
            "memory (share)",
            "mem_mib",
            lambda ns: _with_share(number_style.mem_total(ns.mem_mib), ns.mem_share_percent),
            lambda ns: ns.mem_mib,
            "right",
        ),
        col.exact("core_share_percent", lambda ns: rounded(ns.core_share_percent)),
        col.exact("mem_share_percent", lambda ns: rounded(ns.mem_share_percent)),
        col.Column(
            "pods",
            "pods",
            lambda ns: number_style.count(len(ns.pods)),
            lambda ns: list(ns.pods),
            "right",
            csv=lambda ns: len(ns.pods),
        ),
        col.count("GPUs", "gpus_touched", lambda ns: ns.gpus_touched),
        col.count("nodes", "", lambda ns: ns.nodes_touched),
        col.Column(
            "whole/frac",
            "",
            lambda ns: f"{ns.whole_gpu_allocations:,}/{ns.fractional_allocations:,}",
            optional=1,
        ),
        col.Column("quota", "", _quota_use, align="right"),
        col.exact("allocations"),
        col.exact("whole_gpu_allocations", in_csv=False),
        col.exact("fractional_allocations", in_csv=False),
        col.exact(
            "quota",
            lambda ns: {f.resource: {"used": f.used, "limit": f.limit} for f in ns.quota},
            in_csv=False,
        ),
        col.exact("totals_from", in_csv=False),
        col.wrapped("class", "class", lambda ns: ns.usage_class),
        col.exact("size_class", lambda ns: ns.size_class or None, in_csv=False),
        col.exact("shape", lambda ns: ns.shape or None, in_csv=False),
        col.exact("nodes_touched"),
        col.exact("footprint_percent", lambda ns: rounded(ns.footprint_percent)),
        col.exact("quota_use_percent", lambda ns: rounded(ns.quota_use_percent)),
        col.exact("quota_state", in_csv=False),
        col.exact("quota_used/limit_mib_or_cores", _quota_words, in_json=False),
    ),
    empty_reason="no per-pod allocation or quota series in the input",
    omitted_hint="full table: --format csv --csv-table namespaces",
)


# -- GPU models -------------------------------------------------------------------------------


def _not_known_if_incomplete(m: ModelSummary, value: float) -> float | None:
    """A model's percentage is not known while any of its GPUs lacks a series."""
    return None if m.incomplete_gpus else value


MODELS: TableSpec[ModelSummary] = TableSpec(
    (
        col.Column(
            "model", "model", lambda m: short_type(m.model), lambda m: m.model, width="name"
        ),
        col.count("nodes", "nodes", lambda m: m.nodes),
        col.count("GPUs", "gpus", lambda m: m.gpus),
        col.count("idle", "idle_gpus", lambda m: m.idle_gpus),
        col.count("part", "partial_gpus", lambda m: m.partial_gpus),
        col.count("full", "full_gpus", lambda m: m.full_gpus),
        col.exact("inconsistent_gpus"),
        col.exact("incomplete_gpus"),
        col.exact("core_allocated"),
        col.exact("core_limit"),
        col.percent(
            "cores",
            "core_allocated_percent",
            lambda m: _not_known_if_incomplete(m, m.core_allocated_percent),
            value=lambda m: m.core_allocated_percent,
        ),
        col.exact("mem_allocated_mib"),
        col.exact("mem_limit_mib"),
        col.percent(
            "mem",
            "mem_allocated_percent",
            lambda m: _not_known_if_incomplete(m, m.mem_allocated_percent),
            value=lambda m: m.mem_allocated_percent,
        ),
        col.exact("mem_per_gpu_mib"),
        col.count("free", "free_whole_gpus", lambda m: m.free_whole_gpus),
        col.count("max job", "largest_whole_job_gpus", lambda m: m.largest_whole_job),
        col.exact("largest_whole_job_nodes"),
    ),
    empty_reason=NO_DEVICE_SERIES,
)
MODELS_NOTE = "free = whole GPUs free · max job = most of them free on one node"


# -- capacity: which job shapes fit now ------------------------------------------------------


def _shape(s: ShapeFit) -> str:
    if s.mem_per_gpu_mib is None:
        share = number_style.percent(s.cores_per_gpu)
        memory = "whole memory" if s.cores_per_gpu >= 100 else f"{share} memory"
        return f"{s.gpus} GPU x {number_style.cores(s.cores_per_gpu)}, {memory}"
    return f"1 GPU, {number_style.mem_each(s.mem_per_gpu_mib)}, no core share"


def _where(s: ShapeFit) -> str:
    where = ", ".join(f"{n} ({c:,})" for n, c in s.nodes) or "nowhere"
    if s.node_count > len(s.nodes):
        where += f" and {s.node_count - len(s.nodes):,} more node(s)"
    return where


CAPACITY: TableSpec[ShapeFit] = TableSpec(
    (
        col.text("job", "name", lambda s: s.name),
        col.text("shape", "", _shape),
        col.exact("gpus"),
        col.exact("cores_per_gpu"),
        col.exact("mem_per_gpu_mib"),
        col.count("placements", "placements", lambda s: s.placements),
        col.wrapped("where (top nodes)", "", _where),
        col.exact("nodes", lambda s: [{"node": n, "placements": c} for n, c in s.nodes]),
        col.exact("node_count"),
    ),
    empty_reason=NO_DEVICE_SERIES,
)
