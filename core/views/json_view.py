"""The JSON contract of DESIGN.md, schema_version 1.

Memory in MiB (``*_mib``), cores in share units (100 = one GPU), percentages 0-100 rounded to
4 decimals. Lists are sorted: nodes by name; gpus by node, index; workloads by namespace, pod,
device; namespaces by name.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from core import json_text
from core.families import FAMILIES
from core.model import (
    ClusterOverview,
    Focus,
    GpuSummary,
    ModelSummary,
    NamespaceSummary,
    NodeSummary,
    ShapeFit,
    Summary,
    Workload,
)
from core.views.digest_tables import MODEL_RECORDS

SCHEMA_VERSION = 1


def _r(value: float) -> float:
    return round(value, 4)


def _cluster(c: ClusterOverview) -> dict[str, Any]:
    return {
        "nodes": c.nodes,
        "gpus": c.gpus,
        "core_limit": c.core_limit,
        "core_allocated": c.core_allocated,
        "core_allocated_percent": _r(c.core_allocated_percent),
        "mem_limit_mib": c.mem_limit_mib,
        "mem_allocated_mib": c.mem_allocated_mib,
        "mem_allocated_percent": _r(c.mem_allocated_percent),
        "idle_gpus": c.idle_gpus,
        "partial_gpus": c.partial_gpus,
        "full_gpus": c.full_gpus,
        "inconsistent_gpus": c.inconsistent_gpus,
        "shared_gpus": c.shared_gpus,
        "exclusive_gpus": c.exclusive_gpus,
        "free_whole_gpus": c.free_whole_gpus,
        "free_cores": c.free_cores,
        "free_mem_mib": c.free_mem_mib,
        "pods": c.pods,
        "namespaces": c.namespaces,
        "distribution": c.distribution,
        "capacity_answer": c.capacity_answer,
    }


# Cluster figures that come from the scheduler's device series; without them (vGPU monitor
# metrics only) they are not known: null, never 0.
_DEVICE_FIGURES = (
    "nodes",
    "gpus",
    "core_limit",
    "core_allocated",
    "core_allocated_percent",
    "mem_limit_mib",
    "mem_allocated_mib",
    "mem_allocated_percent",
    "idle_gpus",
    "partial_gpus",
    "full_gpus",
    "inconsistent_gpus",
    "shared_gpus",
    "exclusive_gpus",
    "free_whole_gpus",
    "free_cores",
    "free_mem_mib",
)
_ALLOCATION_ROLES = frozenset({"pod_core_allocated", "pod_mem_allocated_bytes", "quota_used"})


def _cluster_known(summary: Summary) -> dict[str, Any]:
    """The cluster object with what the input cannot tell as null."""
    cluster = _cluster(summary.cluster)
    if not summary.gpus and not summary.cluster.gpus:
        cluster.update(dict.fromkeys(_DEVICE_FIGURES))
    roles = {FAMILIES[name].role for name, _ in summary.input.families if name in FAMILIES}
    if not roles & _ALLOCATION_ROLES:
        cluster.update(pods=None, namespaces=None)
    return cluster


def _node(n: NodeSummary) -> dict[str, Any]:
    return {
        "node": n.node,
        "gpus": n.gpus,
        "device_types": list(n.device_types),
        "core_limit": n.core_limit,
        "core_allocated": n.core_allocated,
        "core_allocated_percent": _r(n.core_allocated_percent),
        "mem_limit_mib": n.mem_limit_mib,
        "mem_allocated_mib": n.mem_allocated_mib,
        "mem_allocated_percent": _r(n.mem_allocated_percent),
        "idle_gpus": n.idle_gpus,
        "partial_gpus": n.partial_gpus,
        "full_gpus": n.full_gpus,
        "inconsistent_gpus": n.inconsistent_gpus,
        "shared_gpus": n.shared_gpus,
        "free_whole_gpus": n.free_whole_gpus,
        "free_cores": n.free_cores,
        "free_mem_mib": n.free_mem_mib,
        "largest_free_cores": n.largest_free_cores,
        "largest_free_mem_mib": n.largest_free_mem_mib,
        "pods": n.pods,
        "verdict": n.verdict,
    }


def _gpus(gpus: Iterable[GpuSummary]) -> list[dict[str, Any]]:
    # Unpacking the rows (NamedTuples) in the comprehension avoids a call and 17 attribute
    # lookups per GPU (a 1,000-node cluster has 8,000), and a dict display is the fastest way
    # to build a dict (faster than dict(zip(keys, row)) in C).
    return [
        {
            "node": node,
            "device_index": index,
            "device_uuid": uuid,
            "device_type": device_type,
            "core_limit": core_limit,
            "core_allocated": cores,
            "core_allocated_percent": round(core_pct, 4),
            "mem_limit_mib": mem_limit,
            "mem_allocated_mib": mem,
            "mem_allocated_percent": round(mem_pct, 4),
            "shared_count": shared,
            "containers": containers,
            "free_cores": free_cores,
            "free_mem_mib": free_mem,
            "namespaces": list(namespaces),
            "state": state,
            "flags": list(flags),
        }
        for (
            node,
            index,
            uuid,
            device_type,
            core_limit,
            cores,
            core_pct,
            mem_limit,
            mem,
            mem_pct,
            shared,
            containers,
            state,
            flags,
            free_cores,
            free_mem,
            namespaces,
            _,
        ) in gpus
    ]


def _workloads(workloads: Iterable[Workload]) -> list[dict[str, Any]]:
    return [
        {
            "namespace": namespace,
            "pod": pod,
            "container_index": container_index,
            "node": node,
            "device_uuid": uuid,
            "cores": cores,
            "mem_mib": mem,
            "whole_gpu": whole_gpu,
            "multi_gpu": multi_gpu,
            "shares_gpu": shares_gpu,
        }
        for (
            namespace,
            pod,
            container_index,
            node,
            uuid,
            cores,
            mem,
            whole_gpu,
            multi_gpu,
            shares_gpu,
        ) in workloads
    ]


def _namespace(ns: NamespaceSummary) -> dict[str, Any]:
    return {
        "namespace": ns.namespace,
        "cores": ns.cores,
        "mem_mib": ns.mem_mib,
        "core_share_percent": _r(ns.core_share_percent),
        "mem_share_percent": _r(ns.mem_share_percent),
        "pods": list(ns.pods),
        "gpus_touched": ns.gpus_touched,
        "allocations": ns.allocations,
        "whole_gpu_allocations": ns.whole_gpu_allocations,
        "fractional_allocations": ns.fractional_allocations,
        "quota": {f.resource: {"used": f.used, "limit": f.limit} for f in ns.quota},
        "totals_from": ns.totals_from,
        "class": ns.usage_class,
        "size_class": ns.size_class or None,
        "shape": ns.shape or None,
        "nodes_touched": ns.nodes_touched,
        "footprint_percent": _r(ns.footprint_percent),
        "quota_use_percent": None if ns.quota_use_percent is None else _r(ns.quota_use_percent),
        "quota_state": ns.quota_state,
    }


def _shape(s: ShapeFit) -> dict[str, Any]:
    return {
        "name": s.name,
        "gpus": s.gpus,
        "cores_per_gpu": s.cores_per_gpu,
        "mem_per_gpu_mib": s.mem_per_gpu_mib,
        "placements": s.placements,
        "nodes": [{"node": n, "placements": c} for n, c in s.nodes],
        "node_count": s.node_count,
    }


def _model(m: ModelSummary) -> dict[str, Any]:
    record = MODEL_RECORDS.records([m])[0]
    record["capacity"] = [_shape(s) for s in m.capacity]
    return record


def to_document(summary: Summary) -> dict[str, Any]:
    src, inp = summary.source, summary.input
    runtime = None
    if summary.runtime is not None:
        runtime = {
            "host_gpus": [
                {
                    "node": h.node,
                    "device_index": h.device_index,
                    "device_uuid": h.device_uuid,
                    "device_type": h.device_type,
                    "mem_used_mib": h.mem_used_mib,
                    "utilization_percent": h.utilization_percent,
                    "memory_controller_utilization_percent": (
                        h.memory_controller_utilization_percent
                    ),
                    "scheduler_device_known": h.scheduler_device_known,
                }
                for h in summary.runtime.host_gpus
            ],
            "containers": [
                {
                    "namespace": c.namespace,
                    "pod": c.pod,
                    "container": c.container,
                    "vdevice_index": c.vdevice_index,
                    "device_uuid": c.device_uuid,
                    "mem_used_mib": c.mem_used_mib,
                    "mem_limit_mib": c.mem_limit_mib,
                    "mem_used_percent": None
                    if c.mem_used_percent is None
                    else _r(c.mem_used_percent),
                    "sm_utilization_percent": c.sm_utilization_percent,
                    "seconds_since_last_kernel": c.seconds_since_last_kernel,
                }
                for c in summary.runtime.containers
            ],
            "missing_monitors": list(summary.runtime.missing_monitors),
        }
    real_usage = None
    if summary.real_usage is not None:
        real_usage = [
            {
                "namespace": u.namespace,
                "pod": u.pod,
                "container": u.container,
                "gpus": [
                    {
                        "index": r.index,
                        "uuid": r.uuid,
                        "utilization_percent": r.utilization_percent,
                        "mem_used_mib": r.mem_used_mib,
                        "mem_total_mib": r.mem_total_mib,
                    }
                    for r in u.readings
                ],
                "allocated_mem_mib": u.allocated_mem_mib,
                "utilization_percent": u.utilization_percent,
                "mem_used_mib": u.mem_used_mib,
                "mem_efficiency_percent": None
                if u.mem_efficiency_percent is None
                else _r(u.mem_efficiency_percent),
                "class": u.usage_class,
                "failure": u.failure,
                "detail": u.detail,
            }
            for u in summary.real_usage
        ]
    return {
        "schema_version": SCHEMA_VERSION,
        "source": {
            "kind": src.kind,
            "label": src.label,
            "cluster": src.cluster,
            "context": src.context,
            "fetched_at": src.fetched_at.isoformat() if src.fetched_at else None,
            "surface": inp.surface,
            "components": list(inp.components),
            "families": dict(inp.families),
            "ignored_series": inp.ignored_series,
            "hami_version": inp.hami_version,
        },
        "cluster": _cluster_known(summary),
        "nodes": [_node(n) for n in summary.nodes],
        "gpus": _gpus(summary.gpus),
        "workloads": _workloads(summary.workloads),
        "namespaces": [_namespace(ns) for ns in summary.namespaces],
        "findings": [
            {
                "kind": f.kind,
                "severity": f.severity,
                "message": f.message,
                "subjects": list(f.subjects),
            }
            for f in summary.findings
        ],
        "checks": [
            {"name": c.name, "status": c.status, "message": c.message} for c in summary.checks
        ],
        "capacity": [_shape(s) for s in summary.capacity],
        "models": [_model(m) for m in summary.models],
        "largest_whole_job": {
            "gpus": summary.largest_whole_job.gpus,
            "nodes": summary.largest_whole_job.nodes,
            "model": summary.largest_whole_job.model,
        },
        "runtime": runtime,
        "real_usage": real_usage,
        "filters": dict(summary.filters),
        "focus": _focus(summary.focus),
        "notes": list(summary.notes),
    }


def _focus(focus: Focus | None) -> dict[str, Any] | None:
    """What a filter narrows to, every row with exact figures; None without a filter."""
    if focus is None:
        return None
    return {
        "namespace": focus.namespace,
        "node": focus.node,
        "cores": _r(focus.cores),
        "mem_mib": _r(focus.mem_mib),
        "pods": [
            {
                "namespace": p.namespace,
                "pod": p.pod,
                "cores": _r(p.cores),
                "mem_mib": _r(p.mem_mib),
                "gpus": [{"node": node, "device_index": index} for node, index in p.devices],
                "whole_gpus": p.whole_gpus,
            }
            for p in focus.pods
        ],
        "gpus": [
            {
                "node": s.gpu.node,
                "device_index": s.gpu.device_index,
                "device_uuid": s.gpu.device_uuid,
                "cores": _r(s.cores),
                "mem_mib": _r(s.mem_mib),
                "pods": s.pods,
            }
            for s in focus.gpus
        ],
        "nodes": [
            {
                "node": s.node.node,
                "gpus": s.gpus,
                "cores": _r(s.cores),
                "mem_mib": _r(s.mem_mib),
                "pods": s.pods,
            }
            for s in focus.nodes
        ],
        "namespaces": [
            {
                "namespace": s.namespace,
                "cores": _r(s.cores),
                "mem_mib": _r(s.mem_mib),
                "gpus": s.gpus,
                "pods": s.pods,
                "core_percent": _r(s.core_percent),
                "mem_percent": _r(s.mem_percent),
            }
            for s in focus.namespaces
        ],
    }


def render(summary: Summary, *, pretty: bool = False) -> str:
    """The document as strict JSON (no NaN or Infinity), one line unless ``pretty``."""
    return dumps(to_document(summary), pretty=pretty)


def render_utf8(summary: Summary, *, pretty: bool = False) -> bytes | str:
    """``render`` without its final newline, as ``json_text.dumps_utf8`` gives it: UTF-8 bytes
    for a writer to send as they are, or a string."""
    return json_text.dumps_utf8(to_document(summary), pretty=pretty)


def dumps(document: object, *, pretty: bool = False) -> str:
    """``document`` as strict JSON plus a newline: compact, or indented by two if ``pretty``."""
    return json_text.dumps(document, pretty=pretty) + "\n"
