"""CSV tables (full, never cut): GPUs, workloads, nodes, namespaces, GPU models and runtime.

Each table is the exact columns of its definition in ``core.views.columns``; ``render`` gives
the GPU table, a blank line, then the workload table; ``table_csv`` gives any one table on its
own for spreadsheets. None (a figure not reported) is an empty cell, as spreadsheets expect.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable
from typing import TypeVar

from core.model import Summary
from core.views import columns, runtime_columns
from core.views.spreadsheet import may_start_a_formula, spreadsheet_cell
from core.views.table_spec import TableSpec

R = TypeVar("R")

# The tables of the CSV view, each printable on its own.
CSV_TABLES = ("gpus", "workloads", "nodes", "namespaces", "models", "runtime")


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


def spec_csv(spec: TableSpec[R], rows: Iterable[R]) -> str:
    """The exact columns of ``spec`` (``core.views.columns``) for ``rows``, as one CSV table."""
    return _write(spec.csv_header(), spec.csv_rows(rows))


def gpus_csv(summary: Summary) -> str:
    return spec_csv(columns.GPUS, summary.gpus)


def workloads_csv(summary: Summary) -> str:
    return spec_csv(columns.WORKLOADS, summary.workloads)


def nodes_csv(summary: Summary) -> str:
    return spec_csv(columns.NODES, summary.nodes)


def namespaces_csv(summary: Summary) -> str:
    """One row per namespace; its quotas in one cell, ``resource=used/limit`` (``-``: no
    limit; memory figures in MiB, core figures in cores)."""
    return spec_csv(columns.NAMESPACES, summary.namespaces)


def models_csv(summary: Summary) -> str:
    """One row per GPU model: exact figures, memory in MiB (``*_mib``)."""
    return spec_csv(columns.MODELS, summary.models)


def runtime_csv(summary: Summary) -> str:
    """The vGPU monitor's section, three tables separated by a blank line: host GPUs (with the
    scheduler's allocation of the same device beside what was measured), containers, and the
    monitors that could not be reached; empty tables when there is no runtime section."""
    runtime = summary.runtime
    if runtime is None:
        return (
            spec_csv(runtime_columns.HOST_GPUS, ())
            + "\n"
            + spec_csv(runtime_columns.CONTAINERS, ())
        )
    scheduler = runtime_columns.gpus_by_uuid(summary.gpus)
    hosts = [(h, scheduler.get(h.device_uuid)) for h in runtime.host_gpus]
    containers = [(c, scheduler.get(c.device_uuid)) for c in runtime.containers]
    missing = _write(("missing_monitor",), ((m,) for m in runtime.missing_monitors))
    return (
        spec_csv(runtime_columns.HOST_GPUS, hosts)
        + "\n"
        + spec_csv(runtime_columns.CONTAINERS, containers)
        + "\n"
        + missing
    )


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
        raise ValueError(f"unknown table {table!r}; choose one of {', '.join(CSV_TABLES)}")
    return _BY_NAME[table](summary)


def render(summary: Summary) -> str:
    return gpus_csv(summary) + "\n" + workloads_csv(summary)
