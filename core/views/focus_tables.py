"""The tables of a filtered answer (``ns=``, ``node=``), each defined once as columns.

A namespace's pods, the GPUs and nodes it uses with its share of each, and a node's
namespaces with their totals there. Like the first page's tables (``digest_tables``) they fit
72 characters, so one table is a Slack code block and a terminal table. Their exact columns
are the JSON document's ``focus``: the same rows, every one, figures to four decimals.
"""

from __future__ import annotations

from core import number_style
from core.model import GpuShare, NamespaceShare, NodeShare, PodShare, Summary
from core.views import table_spec as col
from core.views.names import gpu_name, pod_name, short_type
from core.views.table_spec import Table, TableSpec, rounded


def where(p: PodShare) -> str:
    """``gpu-node-047/2`` for one GPU, the node for several on one node, else how many."""
    nodes = {node for node, _ in p.devices}
    if len(p.devices) == 1:
        node, index = p.devices[0]
        return gpu_name(node, index) if index >= 0 else node
    if len(nodes) == 1:
        return next(iter(nodes))
    return number_style.counted(len(nodes), "node")


def kind(p: PodShare) -> str:
    """Whole GPUs, fractions of GPUs, memory only, or some of each."""
    if p.devices and p.whole_gpus == len(p.devices):
        return "whole"
    if p.cores <= 0:
        return "memory only"
    return "fraction" if p.whole_gpus == 0 else "mixed"


def _devices(p: PodShare) -> list[dict[str, object]]:
    return [{"node": node, "device_index": index} for node, index in p.devices]


def pods_spec(with_namespace: bool) -> TableSpec[PodShare]:
    """A filter's pods; ``with_namespace`` names each pod with its namespace (a node's pods
    belong to several)."""
    return TableSpec(
        (
            col.exact("namespace"),
            col.Column(
                "pod",
                "pod",
                (lambda p: pod_name(p.namespace, p.pod)) if with_namespace else (lambda p: p.pod),
                lambda p: p.pod,
                width="name",
            ),
            col.count("GPUs", "", lambda p: len(p.devices)),
            col.text("where", "", where, name=True),
            col.cores("cores", "cores", lambda p: p.cores, value=lambda p: rounded(p.cores)),
            col.mem_each(
                "memory", "mem_mib", lambda p: p.mem_mib, value=lambda p: rounded(p.mem_mib)
            ),
            col.exact("gpus", _devices),
            col.exact("whole_gpus"),
            col.Column("kind", "", kind, optional=1),
        ),
        empty_reason="no per-pod allocation series (hami_vgpu_*) in the filter",
    )


PODS = pods_spec(with_namespace=False)
NODE_PODS = pods_spec(with_namespace=True)


def _of_gpu(s: GpuShare) -> float | None:
    limit = s.gpu.core_limit
    return s.cores / limit * 100.0 if limit > 0 else None


SHARE_GPUS: TableSpec[GpuShare] = TableSpec(
    (
        col.text("GPU", "", lambda s: gpu_name(s.gpu.node, s.gpu.device_index), name=True),
        col.exact("node", lambda s: s.gpu.node),
        col.exact("device_index", lambda s: s.gpu.device_index),
        col.exact("device_uuid", lambda s: s.gpu.device_uuid),
        col.Column(
            "model",
            "",
            lambda s: short_type(s.gpu.device_type),
            width="name",
            optional=1,
        ),
        col.percent("its cores", "", _of_gpu),
        col.exact("cores", lambda s: rounded(s.cores)),
        col.Column(
            "its memory",
            "mem_mib",
            lambda s: number_style.mem_each_pair(s.mem_mib, s.gpu.mem_limit_mib),
            lambda s: rounded(s.mem_mib),
            "right",
        ),
        col.percent("all cores", "", lambda s: s.gpu.core_allocated_percent),
        col.Column(
            "its pods",
            "pods",
            lambda s: f"{s.pods:,}/{s.gpu.shared_count:,}",
            lambda s: s.pods,
            "right",
        ),
    ),
    empty_reason="no GPU device series for the namespace's pods",
)
SHARE_GPUS_NOTE = "its = the namespace's part · all = every pod's"


def _of_node(part: float, whole: float) -> float | None:
    return part / whole * 100.0 if whole > 0 else None


SHARE_NODES: TableSpec[NodeShare] = TableSpec(
    (
        col.text("node", "node", lambda s: s.node.node, name=True),
        col.Column(
            "model",
            "",
            lambda s: ", ".join(map(short_type, s.node.device_types)),
            width="name",
            optional=1,
        ),
        col.Column(
            "its GPUs",
            "gpus",
            lambda s: f"{s.gpus:,}/{s.node.gpus:,}",
            lambda s: s.gpus,
            "right",
        ),
        col.percent("its cores", "", lambda s: _of_node(s.cores, s.node.core_limit)),
        col.exact("cores", lambda s: rounded(s.cores)),
        col.percent("its memory", "", lambda s: _of_node(s.mem_mib, s.node.mem_limit_mib)),
        col.exact("mem_mib", lambda s: rounded(s.mem_mib)),
        col.count("free", "", lambda s: s.node.free_whole_gpus),
        col.exact("pods"),
    ),
    empty_reason="no GPU device series for the namespace's pods",
)
SHARE_NODES_NOTE = "its = its part of the node · free = whole GPUs"


NODE_NAMESPACES: TableSpec[NamespaceShare] = TableSpec(
    (
        col.text("namespace", "namespace", lambda s: s.namespace, name=True),
        col.cores("cores", "cores", lambda s: s.cores, value=lambda s: rounded(s.cores)),
        col.percent("cores %", "core_percent", lambda s: s.core_percent),
        col.mem_total("memory", "mem_mib", lambda s: s.mem_mib, value=lambda s: rounded(s.mem_mib)),
        col.percent("mem %", "mem_percent", lambda s: s.mem_percent),
        col.count("GPUs", "gpus", lambda s: s.gpus),
        col.count("pods", "pods", lambda s: s.pods),
    ),
    empty_reason="no per-pod allocation series (hami_vgpu_*) on the node",
    json_order=("namespace", "cores", "mem_mib", "gpus", "pods", "core_percent", "mem_percent"),
)
NODE_NAMESPACES_NOTE = "totals here · % of the node's"


def share_tables(summary: Summary, top: int) -> list[Table]:
    """The filter's share tables for a report's details (``top`` rows each): a namespace's
    GPUs and nodes with its share of each, a node's namespaces with their totals there."""
    focus = summary.focus
    if focus is None:
        return []
    if focus.namespace is None:
        return [
            NODE_NAMESPACES.table(
                f"Namespaces on node {focus.node} (totals there)",
                focus.namespaces[:top],
                max(len(focus.namespaces) - top, 0),
            )
        ]
    whose = f"namespace {focus.namespace}"
    out = [
        SHARE_GPUS.table(
            f"GPUs {whose} uses, its share of each",
            focus.gpus[:top],
            max(len(focus.gpus) - top, 0),
        )
    ]
    if focus.node is None:
        out.append(
            SHARE_NODES.table(
                f"Nodes {whose} uses, its share of each",
                focus.nodes[:top],
                max(len(focus.nodes) - top, 0),
            )
        )
    return out
