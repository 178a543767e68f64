"""The runtime (vGPU monitor) section, kept apart from allocation.

What containers use at run time is measured by the vGPU monitor, not granted by the scheduler:
the two are shown side by side and never summed into one figure.

Monitor and scheduler data are joined on device UUID only: the monitor writes ``device_type`` as
``"NVIDIA-" + NVML name`` while the scheduler does not.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from core.model import ContainerRuntime, HostGpuRuntime, RuntimeSection
from core.readings import BYTES_PER_MIB, ContainerRuntimeReading, HostGpuReading
from core.settings import Thresholds


def _mib(value: float | None) -> float | None:
    return value / BYTES_PER_MIB if value is not None else None


def _index(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        return -1


def health(host: HostGpuReading, t: Thresholds) -> tuple[str, ...]:
    """What needs attention about one GPU's hardware: hot, or uncorrected ECC errors (which
    NVML counts since the driver loaded; corrected ones are the ECC doing its job)."""
    flags = []
    if (
        host.temperature_celsius is not None
        and host.temperature_celsius >= t.hot_temperature_celsius
    ):
        flags.append("hot")
    if host.ecc_uncorrected:
        flags.append("ecc")
    return tuple(flags)


def build_runtime(
    hosts: Iterable[HostGpuReading],
    containers: Iterable[ContainerRuntimeReading],
    scheduler_nodes: Mapping[str, str],
    missing_monitors: Sequence[str],
    t: Thresholds,
    *,
    last_kernel_written: bool = True,
    partial_collections: Sequence[str] = (),
) -> RuntimeSection | None:
    """``scheduler_nodes``: the node of each device UUID the scheduler lists, which also names
    the node of a host GPU the monitor writes without one (the Ascend device plugin's);
    ``last_kernel_written``: the input has a last-kernel family."""
    host_rows = [
        HostGpuRuntime(
            node=h.node or scheduler_nodes.get(h.device_uuid, ""),
            device_index=_index(h.device_index),
            device_uuid=h.device_uuid,
            device_type=h.device_type,
            mem_used_mib=_mib(h.mem_used_bytes),
            utilization_percent=h.utilization,
            memory_controller_utilization_percent=h.memctl_utilization,
            scheduler_device_known=h.device_uuid in scheduler_nodes,
            temperature_celsius=h.temperature_celsius,
            power_watts=h.power_watts,
            ecc_corrected_errors=h.ecc_corrected,
            ecc_uncorrected_errors=h.ecc_uncorrected,
            health=health(h, t),
        )
        for h in hosts
    ]
    container_rows = []
    for c in containers:
        used = _mib(c.mem_used_bytes)
        limit = _mib(c.mem_limit_bytes)
        container_rows.append(
            ContainerRuntime(
                namespace=c.namespace,
                pod=c.pod,
                container=c.container,
                vdevice_index=c.vdevice_index,
                device_uuid=c.device_uuid,
                mem_used_mib=used,
                mem_limit_mib=limit,
                mem_used_percent=(used / limit * 100.0) if used is not None and limit else None,
                sm_utilization_percent=c.sm_utilization,
                seconds_since_last_kernel=c.last_kernel_seconds,
                last_kernel_written=last_kernel_written,
            )
        )
    if not (host_rows or container_rows or missing_monitors or partial_collections):
        return None
    host_rows.sort(key=lambda h: (h.node, h.device_index, h.device_uuid))
    container_rows.sort(key=lambda c: (c.namespace, c.pod, c.container, c.device_uuid))
    return RuntimeSection(
        tuple(host_rows),
        tuple(container_rows),
        tuple(missing_monitors),
        tuple(partial_collections),
    )
