"""The runtime tables, defined once as columns like those of ``core.views.columns``: the
vGPU monitor's host GPUs and containers (each joined to the scheduler's device of the same
UUID) and the real usage nvidia-smi measured in the pods.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from core import number_style
from core.model import ContainerRuntime, GpuSummary, HostGpuRuntime, PodRealUsage
from core.views import table_spec as col
from core.views.names import pod_name
from core.views.table_spec import TableSpec, rounded

# -- the vGPU monitor's measurements ----------------------------------------------------------

# A runtime row with the scheduler's device of the same UUID, when it lists one: device type
# strings differ between the monitor and the scheduler, UUIDs do not.
HostRow = tuple[HostGpuRuntime, GpuSummary | None]
ContainerRow = tuple[ContainerRuntime, GpuSummary | None]


def gpus_by_uuid(gpus: tuple[GpuSummary, ...]) -> dict[str, GpuSummary]:
    """The scheduler's devices by UUID: how runtime rows are joined to allocation."""
    return {gpu.device_uuid: gpu for gpu in gpus}


def _scheduler(key: str, attribute: str) -> col.Column[HostRow]:
    """The scheduler's figure for a host GPU, in the CSV only; empty without its device."""

    def get(r: HostRow) -> object:
        return getattr(r[1], attribute) if r[1] is not None else None

    return col.exact(key, get, in_json=False)


_Row = TypeVar("_Row")


def _measured_percent(
    header: str, key: str, get: Callable[[_Row], float | None]
) -> col.Column[_Row]:
    """A percentage the vGPU monitor measured: shown with one decimal, exact in the JSON,
    rounded in the CSV."""
    return col.Column(
        header,
        key,
        lambda r: number_style.percent(get(r)),
        get,
        "right",
        csv=lambda r: rounded(get(r)),
    )


def _health_shown(shown: bool) -> tuple[col.Column[HostRow], ...]:
    """Temperature and power on the page, when the monitor writes them (HAMi after v2.10);
    left out before any name is cut (a hot GPU is also under "Needs attention"). The files
    carry them in ``HEALTH_FILE_COLUMNS``."""
    if not shown:
        return ()
    return (
        col.Column(
            "temp",
            "",
            lambda r: number_style.measured(r[0].temperature_celsius, "°C"),
            align="right",
            optional=1,
        ),
        col.Column(
            "power",
            "",
            lambda r: number_style.measured(r[0].power_watts, "W"),
            align="right",
            optional=2,
        ),
    )


# Last in the files, so the columns files had before HAMi wrote these keep their places.
HEALTH_FILE_COLUMNS: tuple[col.Column[HostRow], ...] = (
    col.exact("temperature_celsius", lambda r: r[0].temperature_celsius),
    col.exact("power_watts", lambda r: r[0].power_watts),
    col.exact("ecc_corrected_errors", lambda r: r[0].ecc_corrected_errors),
    col.exact("ecc_uncorrected_errors", lambda r: r[0].ecc_uncorrected_errors),
)


def host_gpus_spec(scheduler_listed: bool, health: bool = False) -> TableSpec[HostRow]:
    """The host GPUs the vGPU monitor measured; ``scheduler_listed``: the input has the
    scheduler's devices, so "scheduled" is known for each GPU; ``health``: the monitor writes
    temperatures or power, which are then shown."""

    def scheduled(r: HostRow) -> str:
        if not scheduler_listed:
            return number_style.NOT_KNOWN
        return "yes" if r[0].scheduler_device_known else "no"

    return TableSpec(
        (
            col.text("node", "node", lambda r: r[0].node, name=True),
            col.count("idx", "device_index", lambda r: r[0].device_index),
            col.text("GPU", "device_uuid", lambda r: r[0].device_uuid, name=True),
            col.exact("device_type", lambda r: r[0].device_type),
            col.mem_each("memory used", "mem_used_mib", lambda r: r[0].mem_used_mib),
            _measured_percent(
                "utilisation", "utilization_percent", lambda r: r[0].utilization_percent
            ),
            col.exact(
                "memory_controller_utilization_percent",
                lambda r: r[0].memory_controller_utilization_percent,
                csv=lambda r: rounded(r[0].memory_controller_utilization_percent),
            ),
            *_health_shown(health),
            col.text("scheduled", "", scheduled),
            col.exact("scheduler_device_known", lambda r: r[0].scheduler_device_known),
            _scheduler("scheduler_core_allocated", "core_allocated"),
            _scheduler("scheduler_core_limit", "core_limit"),
            _scheduler("scheduler_mem_allocated_mib", "mem_allocated_mib"),
            _scheduler("scheduler_mem_limit_mib", "mem_limit_mib"),
            _scheduler("scheduler_state", "state"),
            *HEALTH_FILE_COLUMNS,
        ),
        empty_reason="no host GPU series from the vGPU monitor",
        omitted_hint="full table: --format csv --csv-table runtime",
    )


# The host GPUs in the files (the shown "scheduled" column is not in them).
HOST_GPUS = host_gpus_spec(scheduler_listed=True)


def _last_kernel(r: ContainerRow) -> str:
    seconds = r[0].seconds_since_last_kernel
    if seconds is None:
        return "none yet" if r[0].last_kernel_written else number_style.NOT_KNOWN
    return number_style.seconds(seconds)


CONTAINERS: TableSpec[ContainerRow] = TableSpec(
    (
        col.text("namespace", "namespace", lambda r: r[0].namespace, name=True),
        col.text("pod", "pod", lambda r: r[0].pod, name=True),
        col.text("container", "container", lambda r: r[0].container, name=True),
        col.exact("vdevice_index", lambda r: r[0].vdevice_index),
        col.exact("device_uuid", lambda r: r[0].device_uuid),
        col.exact("node", lambda r: r[1].node if r[1] else None, in_json=False),
        col.exact("device_index", lambda r: r[1].device_index if r[1] else None, in_json=False),
        col.Column(
            "memory used / limit",
            "mem_used_mib",
            lambda r: number_style.mem_each_pair(r[0].mem_used_mib, r[0].mem_limit_mib),
            lambda r: r[0].mem_used_mib,
            "right",
        ),
        col.exact("mem_limit_mib", lambda r: r[0].mem_limit_mib),
        col.percent("used", "mem_used_percent", lambda r: r[0].mem_used_percent),
        _measured_percent(
            "SM util", "sm_utilization_percent", lambda r: r[0].sm_utilization_percent
        ),
        col.Column(
            "last kernel",
            "seconds_since_last_kernel",
            _last_kernel,
            lambda r: r[0].seconds_since_last_kernel,
            "right",
        ),
    ),
    empty_reason="no container series from the vGPU monitor",
    omitted_hint="full table: --format csv --csv-table runtime",
)


# -- real usage (nvidia-smi in the pods) ------------------------------------------------------


def _usage_or_failure(u: PodRealUsage, shown: str) -> str:
    return "-" if u.failure is not None else shown


def _readings(u: PodRealUsage) -> list[dict[str, object]]:
    return [
        {
            "index": r.index,
            "uuid": r.uuid,
            "utilization_percent": r.utilization_percent,
            "mem_used_mib": r.mem_used_mib,
            "mem_total_mib": r.mem_total_mib,
        }
        for r in u.readings
    ]


REAL_USAGE: TableSpec[PodRealUsage] = TableSpec(
    (
        col.text("pod", "", lambda u: pod_name(u.namespace, u.pod), name=True),
        col.exact("namespace"),
        col.exact("pod"),
        col.Column("container", "", lambda u: u.container or "-", width="name", optional=1),
        col.exact("container"),
        col.exact("gpus", _readings),
        col.exact("allocated_mem_mib"),
        col.Column(
            "util",
            "utilization_percent",
            lambda u: _usage_or_failure(u, number_style.percent(u.utilization_percent)),
            lambda u: u.utilization_percent,
            "right",
        ),
        col.Column(
            "memory used",
            "mem_used_mib",
            lambda u: _usage_or_failure(
                u, number_style.mem_each_pair(u.mem_used_mib, u.allocated_mem_mib)
            ),
            lambda u: u.mem_used_mib,
            "right",
        ),
        col.Column(
            "efficiency",
            "mem_efficiency_percent",
            lambda u: _usage_or_failure(u, number_style.percent(u.mem_efficiency_percent)),
            lambda u: rounded(u.mem_efficiency_percent),
            "right",
        ),
        col.wrapped("class / problem", "", lambda u: u.failure or u.usage_class or "-"),
        col.exact("class", lambda u: u.usage_class),
        col.exact("failure"),
        col.exact("detail"),
    ),
    empty_reason="no pod could be read",
)
