"""CSV tables (full, never cut): GPUs, workloads, nodes and namespaces.

``render`` gives the GPU table, a blank line, then the workload table (the two tables SPEC.md
asks for); ``table_csv`` gives any one table on its own for spreadsheets.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable

from core.model import Summary
from core.views import CSV_TABLES
from core.views.digest_tables import MODEL_RECORDS
from core.views.runtime_csv import runtime_csv
from core.views.spreadsheet import may_start_a_formula, spreadsheet_cell

TABLES = CSV_TABLES


def _write(headers: tuple[str, ...], rows: Iterable[tuple[object, ...]]) -> str:
    rows = list(rows)
    text = _csv_text(headers, rows)
    if not may_start_a_formula(text):
        return text
    return _csv_text(headers, [tuple(map(spreadsheet_cell, row)) for row in rows])


def _csv_text(headers: tuple[str, ...], rows: Iterable[tuple[object, ...]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(headers)
    writer.writerows(rows)
    return buffer.getvalue()


def gpus_csv(summary: Summary) -> str:
    return _write(
        (
            "node",
            "device_index",
            "device_uuid",
            "device_type",
            "core_allocated",
            "core_limit",
            "core_allocated_percent",
            "mem_allocated_mib",
            "mem_limit_mib",
            "mem_allocated_percent",
            "shared_count",
            "state",
            "flags",
            "free_cores",
            "free_mem_mib",
            "namespaces",
        ),
        (
            (
                g.node,
                g.device_index,
                g.device_uuid,
                g.device_type,
                g.core_allocated,
                g.core_limit,
                round(g.core_allocated_percent, 4),
                g.mem_allocated_mib,
                g.mem_limit_mib,
                round(g.mem_allocated_percent, 4),
                g.shared_count,
                g.state,
                " ".join(g.flags),
                g.free_cores,
                g.free_mem_mib,
                " ".join(g.namespaces),
            )
            for g in summary.gpus
        ),
    )


def workloads_csv(summary: Summary) -> str:
    return _write(
        (
            "namespace",
            "pod",
            "container_index",
            "node",
            "device_uuid",
            "cores",
            "mem_mib",
            "whole_gpu",
            "multi_gpu",
            "shares_gpu",
        ),
        (
            (
                w.namespace,
                w.pod,
                w.container_index,
                w.node,
                w.device_uuid,
                w.cores,
                w.mem_mib,
                w.whole_gpu,
                w.multi_gpu,
                w.shares_gpu,
            )
            for w in summary.workloads
        ),
    )


def nodes_csv(summary: Summary) -> str:
    return _write(
        (
            "node",
            "gpus",
            "core_allocated",
            "core_limit",
            "mem_allocated_mib",
            "mem_limit_mib",
            "idle_gpus",
            "partial_gpus",
            "full_gpus",
            "inconsistent_gpus",
            "free_cores",
            "free_mem_mib",
            "largest_free_cores",
            "largest_free_mem_mib",
            "verdict",
        ),
        (
            (
                n.node,
                n.gpus,
                n.core_allocated,
                n.core_limit,
                n.mem_allocated_mib,
                n.mem_limit_mib,
                n.idle_gpus,
                n.partial_gpus,
                n.full_gpus,
                n.inconsistent_gpus,
                n.free_cores,
                n.free_mem_mib,
                n.largest_free_cores,
                n.largest_free_mem_mib,
                n.verdict,
            )
            for n in summary.nodes
        ),
    )


def namespaces_csv(summary: Summary) -> str:
    return _write(
        (
            "namespace",
            "cores",
            "mem_mib",
            "core_share_percent",
            "mem_share_percent",
            "pods",
            "gpus_touched",
            "allocations",
            "class",
            "nodes_touched",
            "footprint_percent",
            "quota_use_percent",
            # resource=used/limit ("-": no limit); gpumem figures in MiB, gpucores in cores
            "quota_used/limit_mib_or_cores",
        ),
        (
            (
                ns.namespace,
                ns.cores,
                ns.mem_mib,
                round(ns.core_share_percent, 4),
                round(ns.mem_share_percent, 4),
                len(ns.pods),
                ns.gpus_touched,
                ns.allocations,
                ns.usage_class,
                ns.nodes_touched,
                round(ns.footprint_percent, 4),
                "" if ns.quota_use_percent is None else round(ns.quota_use_percent, 4),
                " ".join(
                    f"{f.resource}={f.used:g}/{'-' if f.limit is None else f'{f.limit:g}'}"
                    for f in ns.quota
                ),
            )
            for ns in summary.namespaces
        ),
    )


def models_csv(summary: Summary) -> str:
    """One row per GPU model: exact figures, memory in MiB (``*_mib``)."""
    return _write(MODEL_RECORDS.csv_header(), MODEL_RECORDS.csv_rows(summary.models))


_BY_NAME: dict[str, Callable[[Summary], str]] = {
    "gpus": gpus_csv,
    "workloads": workloads_csv,
    "nodes": nodes_csv,
    "namespaces": namespaces_csv,
    "models": models_csv,
    # host GPUs, containers and unreachable monitors of the vGPU monitor section
    "runtime": runtime_csv,
}


def table_csv(summary: Summary, table: str) -> str:
    if table not in _BY_NAME:
        raise ValueError(f"unknown table {table!r}; choose one of {', '.join(TABLES)}")
    return _BY_NAME[table](summary)


def render(summary: Summary) -> str:
    return gpus_csv(summary) + "\n" + workloads_csv(summary)
