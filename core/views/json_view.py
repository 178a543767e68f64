"""The JSON document, schema_version 1: the machine-readable summary, every row.

Memory in MiB (``*_mib``), cores in share units (100 = one GPU), percentages 0-100 rounded to
4 decimals. Lists are sorted: nodes by name; gpus by node, index; workloads by namespace, pod,
device; namespaces by name.
"""

from __future__ import annotations

from typing import Any

from core import json_text
from core.families import FAMILIES
from core.model import (
    ClusterOverview,
    Focus,
    ModelSummary,
    Summary,
)
from core.outcomes import KIND_WORDS, Outcomes
from core.views import columns, focus_tables, runtime_columns

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


def _model(m: ModelSummary) -> dict[str, Any]:
    record = columns.MODELS.records([m])[0]
    record["capacity"] = columns.CAPACITY.records(m.capacity)
    return record


def _runtime(summary: Summary) -> dict[str, Any] | None:
    """The vGPU monitor's measurements; None without them (not an empty section)."""
    runtime = summary.runtime
    if runtime is None:
        return None
    return {
        "host_gpus": runtime_columns.HOST_GPUS.records((h, None) for h in runtime.host_gpus),
        "containers": runtime_columns.CONTAINERS.records((c, None) for c in runtime.containers),
        "missing_monitors": list(runtime.missing_monitors),
        "partial_collections": list(runtime.partial_collections),
    }


def _source(summary: Summary) -> dict[str, Any]:
    src, inp = summary.source, summary.input
    return {
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
        "scheduler_is_leader": inp.scheduler_is_leader,
        "scheduler_cache_synced": inp.scheduler_cache_synced,
    }


def _judgements(summary: Summary) -> dict[str, Any]:
    """Findings and consistency checks."""
    return {
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
    }


def to_document(summary: Summary) -> dict[str, Any]:
    real_usage = summary.real_usage
    largest = summary.largest_whole_job
    return {
        "schema_version": SCHEMA_VERSION,
        "source": _source(summary),
        "cluster": _cluster_known(summary),
        "nodes": columns.NODES.records(summary.nodes),
        "gpus": columns.GPUS.records(summary.gpus),
        "workloads": columns.WORKLOADS.records(summary.workloads),
        "namespaces": columns.NAMESPACES.records(summary.namespaces),
        **_judgements(summary),
        "capacity": columns.CAPACITY.records(summary.capacity),
        "models": [_model(m) for m in summary.models],
        "largest_whole_job": {"gpus": largest.gpus, "nodes": largest.nodes, "model": largest.model},
        "runtime": _runtime(summary),
        "scheduler_outcomes": _outcomes(summary.outcomes),
        "real_usage": None
        if real_usage is None
        else runtime_columns.REAL_USAGE.records(real_usage),
        "filters": dict(summary.filters),
        "focus": _focus(summary.focus),
        "notes": list(summary.notes),
    }


def _outcomes(outcomes: Outcomes | None) -> dict[str, Any] | None:
    """The scheduler's outcome counters (events since it started); None without them. Every
    count is whole: the sample screen sets aside any other value."""
    if outcomes is None:
        return None
    share = outcomes.failure_percent
    return {
        "totals": {kind: int(outcomes.total(kind)) for kind in KIND_WORDS},
        "failure_percent": None if share is None else _r(share),
        "failures_by_reason": [
            {"phase": r.phase, "failure_reason": r.failure_reason, "count": int(r.count)}
            for r in outcomes.failures_by_reason()
        ],
        "series": [
            {
                "kind": s.kind,
                "phase": s.phase,
                "device_type": s.device_type,
                "failure_reason": s.failure_reason,
                "count": int(s.count),
            }
            for s in outcomes.series
        ],
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
        "pods": focus_tables.PODS.records(focus.pods),
        "gpus": focus_tables.SHARE_GPUS.records(focus.gpus),
        "nodes": focus_tables.SHARE_NODES.records(focus.nodes),
        "namespaces": focus_tables.NODE_NAMESPACES.records(focus.namespaces),
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
