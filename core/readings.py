"""From parsed samples to typed readings: devices, pod allocations, quotas and runtime values.

Identity rules (SPEC.md section 3): devices by (node, device UUID); pods by (namespace, pod); an
allocation by (namespace, pod, container index, device UUID). Labels that do not identify are
ignored, in particular ``device_cores``, whose meaning changed in HAMi v2.10 (reference 2.9).

When an input holds both the current and the legacy surface (``--legacy-metrics=true``), every
value appears twice; the current reading wins and the legacy one only fills what is missing, so
each allocation is counted once.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from core.families import FAMILIES, SCHEDULER_ALLOCATION_ROLES, FamilySpec

BYTES_PER_MIB = 1024.0 * 1024.0

DeviceKey = tuple[str, str]  # (node, device_uuid)
AllocationKey = tuple[str, str, str, str]  # (namespace, pod, container_index, device_uuid)
QuotaKey = tuple[str, str]  # (namespace, resource)
ContainerKey = tuple[str, str, str, str, str]  # (ns, pod, container, vdevice_index, uuid)


@dataclass(slots=True)
class DeviceReading:
    node: str
    device_uuid: str
    device_index: str = ""
    device_type: str = ""
    mem_limit_bytes: float | None = None
    core_limit: float | None = None
    mem_allocated_bytes: float | None = None
    core_allocated: float | None = None
    shared_count: float | None = None
    mem_ratio: float | None = None
    overview_mem_allocated_bytes: float | None = None
    overview_mem_limit_mib: float | None = None


@dataclass(slots=True)
class AllocationReading:
    namespace: str
    pod: str
    container_index: str
    device_uuid: str
    node: str = ""
    mem_allocated_bytes: float | None = None
    cores: float | None = None


@dataclass(slots=True)
class QuotaReading:
    namespace: str
    resource: str
    used: float | None = None
    limit_label: str | None = None
    limit_metric: float | None = None


@dataclass(slots=True)
class HostGpuReading:
    node: str
    device_uuid: str
    device_index: str = ""
    device_type: str = ""
    mem_used_bytes: float | None = None
    utilization: float | None = None
    memctl_utilization: float | None = None


@dataclass(slots=True)
class ContainerRuntimeReading:
    namespace: str
    pod: str
    container: str
    vdevice_index: str
    device_uuid: str
    mem_used_bytes: float | None = None
    mem_limit_bytes: float | None = None
    sm_utilization: float | None = None
    last_kernel_seconds: float | None = None


@dataclass(slots=True)
class SurfaceReadings:
    """Readings of one surface (current or legacy names)."""

    devices: dict[DeviceKey, DeviceReading] = field(default_factory=dict)
    allocations: dict[AllocationKey, AllocationReading] = field(default_factory=dict)
    quotas: dict[QuotaKey, QuotaReading] = field(default_factory=dict)
    host_gpus: dict[DeviceKey, HostGpuReading] = field(default_factory=dict)
    containers: dict[ContainerKey, ContainerRuntimeReading] = field(default_factory=dict)
    memctl_by_uuid: dict[str, float] = field(default_factory=dict)
    quota_limit_family_seen: bool = False


@dataclass(slots=True)
class MetricsReadings:
    """Everything read from one or more expositions, surfaces already merged."""

    devices: dict[DeviceKey, DeviceReading]
    allocations: dict[AllocationKey, AllocationReading]
    quotas: dict[QuotaKey, QuotaReading]
    host_gpus: dict[DeviceKey, HostGpuReading]
    containers: dict[ContainerKey, ContainerRuntimeReading]
    quota_limit_family_seen: bool
    surfaces_seen: frozenset[str]
    components: frozenset[str]
    family_counts: dict[str, int]
    ignored_series: int
    foreign_families: tuple[str, ...]
    hami_version: str | None
    has_allocation_families: bool
    has_workload_series: bool
    legacy_device_cores_versions: bool = False
    mig_instances: int = 0


class _SampleLike:
    """Structural type of a parsed sample (``core.exposition.Sample``)."""

    name: str
    labels: dict[str, str]
    value: float


def _canonical(spec: FamilySpec, labels: dict[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for own, canonical in spec.labels:
        value = labels.get(own)
        if value is not None:
            out[canonical] = value
    return out


def _device(readings: SurfaceReadings, lab: dict[str, str]) -> DeviceReading:
    key = (lab.get("node", ""), lab.get("device_uuid", ""))
    dev = readings.devices.get(key)
    if dev is None:
        dev = DeviceReading(node=key[0], device_uuid=key[1])
        readings.devices[key] = dev
    if not dev.device_index and "device_index" in lab:
        dev.device_index = lab["device_index"]
    if not dev.device_type and "device_type" in lab:
        dev.device_type = lab["device_type"]
    return dev


def _allocation(readings: SurfaceReadings, lab: dict[str, str]) -> AllocationReading:
    key = (
        lab.get("namespace", ""),
        lab.get("pod", ""),
        lab.get("container_index", "0"),
        lab.get("device_uuid", ""),
    )
    alloc = readings.allocations.get(key)
    if alloc is None:
        alloc = AllocationReading(*key, node=lab.get("node", ""))
        readings.allocations[key] = alloc
    return alloc


def _quota(readings: SurfaceReadings, lab: dict[str, str]) -> QuotaReading:
    key = (lab.get("namespace", ""), lab.get("resource", ""))
    quota = readings.quotas.get(key)
    if quota is None:
        quota = QuotaReading(*key)
        readings.quotas[key] = quota
    return quota


def _host(readings: SurfaceReadings, lab: dict[str, str]) -> HostGpuReading:
    key = (lab.get("node", ""), lab.get("device_uuid", ""))
    host = readings.host_gpus.get(key)
    if host is None:
        host = HostGpuReading(node=key[0], device_uuid=key[1])
        readings.host_gpus[key] = host
    if not host.device_index and "device_index" in lab:
        host.device_index = lab["device_index"]
    if not host.device_type and "device_type" in lab:
        host.device_type = lab["device_type"]
    return host


def _container(readings: SurfaceReadings, lab: dict[str, str]) -> ContainerRuntimeReading:
    key = (
        lab.get("namespace", ""),
        lab.get("pod", ""),
        lab.get("container", ""),
        lab.get("vdevice_index", ""),
        lab.get("device_uuid", ""),
    )
    row = readings.containers.get(key)
    if row is None:
        row = ContainerRuntimeReading(*key)
        readings.containers[key] = row
    return row


def _apply(readings: SurfaceReadings, role: str, lab: dict[str, str], value: float) -> None:
    if role == "mem_limit_bytes":
        _device(readings, lab).mem_limit_bytes = value
    elif role == "core_limit":
        _device(readings, lab).core_limit = value
    elif role == "mem_allocated_bytes":
        _device(readings, lab).mem_allocated_bytes = value
    elif role == "core_allocated":
        _device(readings, lab).core_allocated = value
    elif role == "shared_count":
        _device(readings, lab).shared_count = value
    elif role == "mem_ratio":
        _device(readings, lab).mem_ratio = value
    elif role == "overview_mem_allocated_bytes":
        dev = _device(readings, lab)
        dev.overview_mem_allocated_bytes = value
        # The overview's device_memory_limit label is MiB as a decimal string (reference 2.1).
        limit = lab.get("device_memory_limit")
        if limit:
            try:
                dev.overview_mem_limit_mib = float(limit)
            except ValueError:
                pass
    elif role == "pod_mem_allocated_bytes":
        _allocation(readings, lab).mem_allocated_bytes = value
    elif role == "pod_core_allocated":
        _allocation(readings, lab).cores = value
    elif role == "quota_used":
        quota = _quota(readings, lab)
        quota.used = value
        quota.limit_label = lab.get("limit")
    elif role == "quota_limit":
        readings.quota_limit_family_seen = True
        _quota(readings, lab).limit_metric = value
    elif role == "host_mem_used_bytes":
        _host(readings, lab).mem_used_bytes = value
    elif role == "host_utilization":
        _host(readings, lab).utilization = value
    elif role == "host_memctl_utilization":
        # This family has no node label (HAMi #2616): join on device UUID later.
        readings.memctl_by_uuid[lab.get("device_uuid", "")] = value
    elif role in ("container_mem_used_bytes", "container_mem_desc_bytes"):
        row = _container(readings, lab)
        if role == "container_mem_used_bytes" or row.mem_used_bytes is None:
            row.mem_used_bytes = value
    elif role == "container_mem_limit_bytes":
        _container(readings, lab).mem_limit_bytes = value
    elif role == "container_sm_utilization":
        _container(readings, lab).sm_utilization = value
    elif role == "container_last_kernel_seconds":
        _container(readings, lab).last_kernel_seconds = value


def _fill(target: object, source: object, names: Iterable[str]) -> None:
    for name in names:
        if getattr(target, name) is None:
            setattr(target, name, getattr(source, name))


def _merge(current: dict, legacy: dict, fields: tuple[str, ...]) -> dict:  # type: ignore[type-arg]
    """Current readings win; legacy ones fill gaps and add keys current does not have."""
    merged = dict(current)
    for key, leg in legacy.items():
        cur = merged.get(key)
        if cur is None:
            merged[key] = leg
        else:
            _fill(cur, leg, fields)
    return merged


_DEVICE_FIELDS = (
    "mem_limit_bytes", "core_limit", "mem_allocated_bytes", "core_allocated", "shared_count",
    "mem_ratio", "overview_mem_allocated_bytes", "overview_mem_limit_mib",
)
_ALLOC_FIELDS = ("mem_allocated_bytes", "cores")
_QUOTA_FIELDS = ("used", "limit_label", "limit_metric")
_HOST_FIELDS = ("mem_used_bytes", "utilization", "memctl_utilization")
_CONTAINER_FIELDS = ("mem_used_bytes", "mem_limit_bytes", "sm_utilization", "last_kernel_seconds")


# Descriptive families: recognised and counted, but no value of theirs enters a total.
_NOT_SUMMED_ROLES = frozenset(
    {
        "deprecated",
        "container_mig_info",
        "container_mem_context_bytes",
        "container_mem_module_bytes",
        "container_mem_buffer_bytes",
    }
)


def read_samples(samples: Iterable[_SampleLike]) -> MetricsReadings:
    """Sort samples into typed readings. Unknown families are counted, never fatal."""
    surfaces = {"current": SurfaceReadings(), "legacy": SurfaceReadings()}
    family_counts: dict[str, int] = {}
    foreign: dict[str, None] = {}
    ignored = 0
    surfaces_seen: set[str] = set()
    components: set[str] = set()
    hami_version: str | None = None
    has_allocation = False
    mig_instances = 0
    label_cache: dict[tuple[int, int], tuple[dict[str, str], dict[str, str]]] = {}
    last_spec: FamilySpec | None = None
    last_name = ""
    for sample in samples:
        name = sample.name
        if name != last_name:
            last_spec = FAMILIES.get(name)
            last_name = name
        spec = last_spec
        family_counts[name] = family_counts.get(name, 0) + 1
        if spec is None:
            ignored += 1
            foreign[name] = None
            continue
        if spec.component == "build":
            hami_version = hami_version or sample.labels.get("version")
            continue
        components.add(spec.component)
        surfaces_seen.add(spec.surface)
        if spec.role in SCHEDULER_ALLOCATION_ROLES:
            has_allocation = True
        if spec.role == "mig_instance":
            mig_instances += 1
            continue
        if spec.role in _NOT_SUMMED_ROLES:
            continue
        # Parsers may share one labels dict between series with the same label block; the
        # canonical form is cached per (labels object, label map), holding the object so its
        # id cannot be reused while cached.
        labels = sample.labels
        cache_key = (id(labels), id(spec.labels))
        hit = label_cache.get(cache_key)
        if hit is not None and hit[0] is labels:
            lab = hit[1]
        else:
            lab = _canonical(spec, labels)
            label_cache[cache_key] = (labels, lab)
        _apply(surfaces[spec.surface], spec.role, lab, sample.value)

    cur, leg = surfaces["current"], surfaces["legacy"]
    for surface in (cur, leg):
        for host in surface.host_gpus.values():
            if host.memctl_utilization is None:
                host.memctl_utilization = surface.memctl_by_uuid.get(host.device_uuid)
    has_workloads = bool(cur.allocations or leg.allocations)
    return MetricsReadings(
        devices=_merge(cur.devices, leg.devices, _DEVICE_FIELDS),
        allocations=_merge(cur.allocations, leg.allocations, _ALLOC_FIELDS),
        quotas=_merge(cur.quotas, leg.quotas, _QUOTA_FIELDS),
        host_gpus=_merge(cur.host_gpus, leg.host_gpus, _HOST_FIELDS),
        containers=_merge(cur.containers, leg.containers, _CONTAINER_FIELDS),
        quota_limit_family_seen=cur.quota_limit_family_seen,
        surfaces_seen=frozenset(surfaces_seen),
        components=frozenset(components),
        family_counts=family_counts,
        ignored_series=ignored,
        foreign_families=tuple(foreign),
        hami_version=hami_version,
        has_allocation_families=has_allocation,
        has_workload_series=has_workloads,
        mig_instances=mig_instances,
    )
