"""The runtime section (vGPU monitor) as CSV, every row (what a Slack message has no room for).

Three tables separated by a blank line, like ``core.views.csv_view.render``: host GPUs (joined
to the scheduler's device by UUID, so allocation sits next to use), containers, and the vGPU
monitors that could not be reached. Numbers are copied from ``Summary.runtime`` and
``Summary.gpus``; nothing is recomputed.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable

from core.model import GpuSummary, Summary
from core.views.spreadsheet import spreadsheet_cell

HOST_GPU_HEADER = (
    "node",
    "device_index",
    "device_uuid",
    "device_type",
    "mem_used_mib",
    "utilization_percent",
    "memory_controller_utilization_percent",
    "scheduler_device_known",
    "scheduler_core_allocated",
    "scheduler_core_limit",
    "scheduler_mem_allocated_mib",
    "scheduler_mem_limit_mib",
    "scheduler_state",
)

CONTAINER_HEADER = (
    "namespace",
    "pod",
    "container",
    "vdevice_index",
    "device_uuid",
    "node",
    "device_index",
    "mem_used_mib",
    "mem_limit_mib",
    "mem_used_percent",
    "sm_utilization_percent",
    "seconds_since_last_kernel",
)

MISSING_HEADER = ("missing_monitor",)


def _table(header: tuple[str, ...], rows: Iterable[tuple[object, ...]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    # None (not reported) is an empty cell, as spreadsheets expect.
    writer.writerows(
        tuple("" if cell is None else spreadsheet_cell(cell) for cell in row) for row in rows
    )
    return buffer.getvalue()


def _percent(value: float | None) -> float | None:
    # Four decimals, like core's CSV view: enough for any chart, no float noise.
    return None if value is None else round(value, 4)


def gpus_by_uuid(summary: Summary) -> dict[str, GpuSummary]:
    """The scheduler's devices by UUID: how runtime rows are joined to allocation (device type
    strings differ between the monitor and the scheduler, UUIDs do not; reference 3.3)."""
    return {gpu.device_uuid: gpu for gpu in summary.gpus}


def runtime_csv(summary: Summary) -> str:
    """Host GPUs, containers and unreachable monitors; empty tables when there is no runtime."""
    runtime = summary.runtime
    if runtime is None:
        return _table(HOST_GPU_HEADER, ()) + "\n" + _table(CONTAINER_HEADER, ())
    scheduler = gpus_by_uuid(summary)
    hosts = []
    for host in runtime.host_gpus:
        gpu = scheduler.get(host.device_uuid)
        hosts.append(
            (
                host.node,
                host.device_index,
                host.device_uuid,
                host.device_type,
                host.mem_used_mib,
                _percent(host.utilization_percent),
                _percent(host.memory_controller_utilization_percent),
                host.scheduler_device_known,
                gpu.core_allocated if gpu else None,
                gpu.core_limit if gpu else None,
                gpu.mem_allocated_mib if gpu else None,
                gpu.mem_limit_mib if gpu else None,
                gpu.state if gpu else None,
            )
        )
    containers = []
    for container in runtime.containers:
        gpu = scheduler.get(container.device_uuid)
        containers.append(
            (
                container.namespace,
                container.pod,
                container.container,
                container.vdevice_index,
                container.device_uuid,
                gpu.node if gpu else None,
                gpu.device_index if gpu else None,
                container.mem_used_mib,
                container.mem_limit_mib,
                _percent(container.mem_used_percent),
                _percent(container.sm_utilization_percent),
                container.seconds_since_last_kernel,
            )
        )
    return (
        _table(HOST_GPU_HEADER, hosts)
        + "\n"
        + _table(CONTAINER_HEADER, containers)
        + "\n"
        + _table(MISSING_HEADER, ((m,) for m in runtime.missing_monitors))
    )
