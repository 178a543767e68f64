"""From parsed samples to typed readings: devices, pod allocations, quotas and runtime values.

Identity: a device is (node, device UUID); a pod is (namespace, pod); an allocation is
(namespace, pod, container index, device UUID). Labels that do not identify are ignored, in
particular ``device_cores``, which HAMi up to v2.9 filled with the cores in use and v2.10 with
the device's total cores.

When an input holds both the current and the legacy surface (``--legacy-metrics=true``), every
value appears twice; the current reading wins and the legacy one only fills what is missing, so
each allocation is counted once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import starmap
from operator import attrgetter, itemgetter
from typing import cast

from core.families import ERROR_TYPES, FAMILIES, FamilySpec
from core.family_rows import Columns, FamilyRows
from core.model import InputProblem
from core.outcomes import OutcomeCount
from core.sample_screen import UniqueColumns, screen_family
from core.value_ranges import BYTES_PER_MIB as BYTES_PER_MIB

DeviceKey = tuple[str, str]  # (node, device_uuid)
AllocationKey = tuple[str, str, str, str]  # (namespace, pod, container_index, device_uuid)
QuotaKey = tuple[str, str]  # (namespace, resource)
ContainerKey = tuple[str, str, str, str, str]  # (ns, pod, container, vdevice_index, uuid)
# Joins a repeated UUID and its device index in the key of the second and later devices that
# carry it; the reading keeps the UUID as written.
_REPEATED_UUID_SEPARATOR = "\x00#"


# The readings are filled in family by family as the rows are read: mutable, slotted
# dataclasses. Each starts with what identifies it; its values start unknown (None).


@dataclass(slots=True)
class DeviceReading:
    node: str
    device_uuid: str
    device_index: str
    device_type: str
    mem_limit_bytes: float | None = None
    core_limit: float | None = None
    mem_allocated_bytes: float | None = None
    core_allocated: float | None = None
    shared_count: float | None = None
    mem_ratio: float | None = None
    overview_mem_allocated_bytes: float | None = None
    overview_mem_limit_mib: float | None = None
    overview_shared_count: float | None = None


@dataclass(slots=True)
class AllocationReading:
    namespace: str
    pod: str
    container_index: str
    device_uuid: str
    node: str
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
    device_index: str
    device_type: str
    mem_used_bytes: float | None = None
    utilization: float | None = None
    memctl_utilization: float | None = None
    temperature_celsius: float | None = None
    power_watts: float | None = None
    # ECC errors since the driver loaded, by NVML's error type.
    ecc_corrected: float | None = None
    ecc_uncorrected: float | None = None


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
class SchedulerReading:
    """The scheduler replica's own state: 1 or 0, None when it does not say."""

    is_leader: float | None = None
    cache_synced: float | None = None


OutcomeKey = tuple[str, str, str, str]  # kind, phase, device type, failure reason


@dataclass(slots=True)
class SurfaceReadings:
    """Readings of one surface (current or legacy names)."""

    devices: dict[DeviceKey, DeviceReading] = field(default_factory=dict)
    allocations: dict[AllocationKey, AllocationReading] = field(default_factory=dict)
    quotas: dict[QuotaKey, QuotaReading] = field(default_factory=dict)
    host_gpus: dict[DeviceKey, HostGpuReading] = field(default_factory=dict)
    containers: dict[ContainerKey, ContainerRuntimeReading] = field(default_factory=dict)
    scheduler: SchedulerReading = field(default_factory=SchedulerReading)
    outcomes: dict[OutcomeKey, float] = field(default_factory=dict)
    # Each node's vGPU monitor: 1 when its last collection fully succeeded, 0 when not.
    collect_success: dict[str, float] = field(default_factory=dict)
    # Host values of series without a node label: field -> device UUID -> (fields, value).
    host_values_by_uuid: dict[str, dict[str, tuple[tuple[str, ...], float]]] = field(
        default_factory=dict
    )
    repeated_uuids: dict[DeviceKey, None] = field(default_factory=dict)
    quota_limit_family_seen: bool = False
    # The field column and devices of the last device family read (see ``_devices``).
    last_device_rows: tuple[list[tuple[str, ...]], list[DeviceReading]] = ([], [])
    last_allocation_rows: tuple[list[tuple[str, ...]], list[AllocationReading]] = ([], [])


@dataclass(frozen=True, slots=True)
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
    mig_instances: int = 0
    # (node, UUID) pairs that more than one device index of that node reported.
    repeated_device_uuids: tuple[DeviceKey, ...] = ()
    # Samples left out of every figure: values no exporter writes, and repeated series.
    problems: tuple[InputProblem, ...] = ()
    scheduler: SchedulerReading = field(default_factory=SchedulerReading)
    # The scheduler's outcome counters, sorted by kind, phase, device type and reason.
    outcomes: tuple[OutcomeCount, ...] = ()
    # Nodes whose vGPU monitor says part of its last collection failed, sorted.
    partial_collections: tuple[str, ...] = ()


def _set_column(readings: Sequence[object], attr: str, values: Sequence[float]) -> None:
    """Set one field of each reading to the value in the same place."""
    for reading, value in zip(readings, values, strict=True):
        setattr(reading, attr, value)


@lru_cache(maxsize=1024)
def _label_number(text: str) -> float | None:
    """A number written in a label, or None when it is not one. A cluster has a few memory
    sizes and share counts: each is read once, not once per GPU."""
    try:
        return float(text)
    except ValueError:
        return None


# Identity keys of a family's rows, or None (see ``ScreenedFamily.keys``).
_Keys = list[tuple[str, ...]] | None
_NODE_UUID = itemgetter(0, 1)
_DEVICE_NAMING = itemgetter(0, 1, 2, 3)  # node, UUID, index, type: DeviceReading's arguments
_INDEX = itemgetter(2)
_MEMORY_LIMIT = itemgetter(4)
_SHARED = itemgetter(5)
_INDEX_OF = attrgetter("device_index")
_TYPE_OF = attrgetter("device_type")


def _devices(
    surface: SurfaceReadings, rows: Columns, attr: str, labelled: bool, pairs: _Keys = None
) -> None:
    """Set the family's value of the devices of the rows; ``labelled`` when the family has
    the overview's memory-limit and shared-count labels."""
    fields, values = rows
    last_fields, last_devices = surface.last_device_rows
    # Families with one label set list the same devices in the same order, since the Go client
    # sorts series by label values: one list comparison then replaces a lookup per sample.
    if fields is last_fields or fields == last_fields:
        _set_column(last_devices, attr, values)
        return
    in_order = _device_column(surface.devices, fields, pairs)
    if in_order is None:
        in_order = _devices_one_by_one(surface, fields)
    _set_column(in_order, attr, values)
    if labelled:
        _overview_labels(in_order, fields)
    surface.last_device_rows = (fields, in_order)


def _device_column(
    devices: dict[DeviceKey, DeviceReading], fields: list[tuple[str, ...]], pairs: _Keys
) -> list[DeviceReading] | None:
    """The devices of the rows, in order, found or added by whole-column operations; None
    (nothing changed) when a row needs ``_devices_one_by_one``'s care.

    Either every row names a new device of its own (the first family read), or every row
    names a known device with the index already recorded (a family in another order, such as
    the overview): then no row can add a device, fill an index or reveal a repeated UUID.
    """
    keys: list[DeviceKey] = (
        list(map(_NODE_UUID, fields)) if pairs is None else cast(list[DeviceKey], pairs)
    )
    if not devices:
        created = list(starmap(DeviceReading, map(_DEVICE_NAMING, fields)))
        new = dict(zip(keys, created, strict=True))
        if len(new) != len(keys):  # a UUID repeated within a node
            return None
        devices.update(new)
        return created
    known = list(map(devices.get, keys))
    # all() tests truth in C: a reading is never false, a missing device is None (``in``
    # would call the readings' __eq__).
    if not all(known) or list(map(_INDEX_OF, known)) != list(map(_INDEX, fields)):
        return None
    found: list[DeviceReading] = known  # type: ignore[assignment]
    if not all(map(_TYPE_OF, found)):  # a device with no type yet
        for dev, row in zip(found, fields, strict=True):
            if not dev.device_type:
                dev.device_type = row[3]
    return found


def _devices_one_by_one(
    surface: SurfaceReadings, fields: list[tuple[str, ...]]
) -> list[DeviceReading]:
    devices = surface.devices
    in_order: list[DeviceReading] = []
    for node, uuid, index, dtype, *_ in fields:
        dev = devices.get((node, uuid))
        if dev is not None and index and dev.device_index and dev.device_index != index:
            # Two devices of one node with one UUID (masked before pasting, e.g. GPU-xxxx):
            # kept apart by index rather than merged into one GPU with the second one's values.
            surface.repeated_uuids[(node, uuid)] = None
            key = (node, f"{uuid}{_REPEATED_UUID_SEPARATOR}{index}")
            dev = devices.get(key)
            if dev is None:
                dev = devices[key] = DeviceReading(node, uuid, index, dtype)
        if dev is None:
            dev = devices[(node, uuid)] = DeviceReading(node, uuid, index, dtype)
        else:
            if not dev.device_index:
                dev.device_index = index
            if not dev.device_type:
                dev.device_type = dtype
        in_order.append(dev)
    return in_order


def _overview_labels(in_order: list[DeviceReading], fields: list[tuple[str, ...]]) -> None:
    """The overview's memory-limit and shared-count labels; the first one of a device wins."""
    # One loop per label, over its column alone: HAMi v2.10 no longer writes the shared count.
    for dev, limit in zip(in_order, map(_MEMORY_LIMIT, fields), strict=True):
        if limit and dev.overview_mem_limit_mib is None:
            # The overview's device_memory_limit label is MiB as a decimal string.
            dev.overview_mem_limit_mib = _label_number(limit)
    if any(map(_SHARED, fields)):
        for dev, shared in zip(in_order, map(_SHARED, fields), strict=True):
            if shared and dev.overview_shared_count is None:
                dev.overview_shared_count = _label_number(shared)


def _hosts(surface: SurfaceReadings, rows: Columns, attr: str, by_error_type: bool) -> None:
    """Host GPU values; ``by_error_type``: the field is ``attr`` + "_" + the row's error type.
    A row without a node (the memory controller family up to HAMi v2.10, the Ascend device
    plugin's monitor) is joined by device UUID once every family is read (``_join_by_uuid``)."""
    hosts = surface.host_gpus
    for fields, value in zip(*rows, strict=True):
        node, uuid, index, dtype = fields[:4]
        name = attr
        if by_error_type:
            if fields[4] not in ERROR_TYPES:
                continue  # an error type NVML does not define: counted, not read
            name = f"{attr}_{fields[4]}"
        if not node:
            surface.host_values_by_uuid.setdefault(name, {})[uuid] = (fields, value)
            continue
        host = hosts.get((node, uuid))
        if host is None:
            host = hosts[(node, uuid)] = HostGpuReading(node, uuid, index, dtype)
        setattr(host, name, value)


_CONTAINER_INDEX = itemgetter(2)
_ALLOCATION_KEY = itemgetter(0, 1, 2, 3)


def _allocations(surface: SurfaceReadings, rows: Columns, attr: str, keys: _Keys = None) -> None:
    fields, values = rows
    last_fields, last_allocations = surface.last_allocation_rows
    if fields is last_fields or fields == last_fields:  # as for devices
        _set_column(last_allocations, attr, values)
        return
    in_order = _allocation_column(surface.allocations, fields, keys)
    if in_order is None:
        in_order = _allocations_one_by_one(surface.allocations, fields)
    _set_column(in_order, attr, values)
    surface.last_allocation_rows = (fields, in_order)


def _allocation_column(
    allocations: dict[AllocationKey, AllocationReading],
    fields: list[tuple[str, ...]],
    keys: _Keys,
) -> list[AllocationReading] | None:
    """The allocations of the first family read, every pod with its container index, added
    by whole-column operations; None (nothing changed) otherwise, or when a row repeats."""
    if allocations or "" in map(_CONTAINER_INDEX, fields):
        return None
    # The rows are exactly AllocationReading's arguments, and with no index missing the
    # screen's pod identities are the allocations' keys.
    created = list(starmap(AllocationReading, fields))
    column = map(_ALLOCATION_KEY, fields) if keys is None else keys
    new = dict(zip(column, created, strict=True))
    if len(new) != len(created):
        return None
    allocations.update(new)
    return created


def _allocations_one_by_one(
    allocations: dict[AllocationKey, AllocationReading], fields: list[tuple[str, ...]]
) -> list[AllocationReading]:
    in_order = []
    for namespace, pod, index, uuid, node in fields:
        key = (namespace, pod, index or "0", uuid)
        alloc = allocations.get(key)
        if alloc is None:
            alloc = allocations[key] = AllocationReading(namespace, pod, key[2], uuid, node)
        in_order.append(alloc)
    return in_order


def _quotas(surface: SurfaceReadings, rows: Columns, attr: str, labelled: bool) -> None:
    """``labelled``: the family also carries the quota's limit in a label (the used family)."""
    quotas = surface.quotas
    for (namespace, resource, limit), value in zip(*rows, strict=True):
        quota = quotas.get((namespace, resource))
        if quota is None:
            quota = quotas[(namespace, resource)] = QuotaReading(namespace, resource)
        setattr(quota, attr, value)
        if labelled:
            quota.limit_label = limit


def _containers(surface: SurfaceReadings, rows: Columns, attr: str, fills_gaps: bool) -> None:
    containers = surface.containers
    for fields, value in zip(*rows, strict=True):
        key = _container_key(fields)
        row = containers.get(key)
        if row is None:
            row = containers[key] = ContainerRuntimeReading(*key)
        if not fills_gaps or getattr(row, attr) is None:
            setattr(row, attr, value)


def _container_key(fields: tuple[str, ...]) -> ContainerKey:
    namespace, pod, container, vdevice_index, uuid = fields
    return (namespace, pod, container, vdevice_index, uuid)


def read_family_rows(family_rows: FamilyRows) -> MetricsReadings:
    """Sort the rows of each family into typed readings. Unknown families are counted, never
    fatal; values no exporter writes are left out and reported as input problems."""
    surfaces = {"current": SurfaceReadings(), "legacy": SurfaceReadings()}
    seen = _Seen()
    problems: list[InputProblem] = []
    unique_columns: UniqueColumns = {}
    # Legacy first, current last: nothing depends on the order, the merge below decides.
    for name, (all_fields, all_values) in family_rows.rows.items():
        spec = FAMILIES[name]
        screened = screen_family(name, all_fields, all_values, unique_columns)
        fields, values, keys = screened.fields, screened.values, screened.keys
        problems.extend(screened.problems)
        if not values:
            continue
        if spec.component == "build":
            seen.hami_version = seen.hami_version or fields[0][0] or None
            continue
        seen.components.add(spec.component)
        seen.surfaces.add(spec.surface)
        if spec.component == "scheduler" and spec.reading in ("device", "allocation", "quota"):
            seen.allocation_families = True
        if spec.reading == "mig":
            seen.mig_instances += len(values)
        else:
            _read_family(surfaces[spec.surface], spec, (fields, values), keys)
    cur, leg = surfaces["current"], surfaces["legacy"]
    for surface in (cur, leg):
        _join_by_uuid(surface)
    foreign = tuple(family_rows.foreign)
    return MetricsReadings(
        devices=_merge(cur.devices, leg.devices, _DEVICE_FIELDS),
        allocations=_merge(cur.allocations, leg.allocations, _ALLOC_FIELDS),
        quotas=_merge(cur.quotas, leg.quotas, _QUOTA_FIELDS),
        host_gpus=_merge(cur.host_gpus, leg.host_gpus, _HOST_FIELDS),
        containers=_merge(cur.containers, leg.containers, _CONTAINER_FIELDS),
        quota_limit_family_seen=cur.quota_limit_family_seen,
        surfaces_seen=frozenset(seen.surfaces),
        components=frozenset(seen.components),
        family_counts=dict(family_rows.counts),
        ignored_series=sum(family_rows.counts.get(name, 0) for name in foreign),
        foreign_families=foreign,
        hami_version=seen.hami_version,
        has_allocation_families=seen.allocation_families,
        mig_instances=seen.mig_instances,
        repeated_device_uuids=tuple({**cur.repeated_uuids, **leg.repeated_uuids}),
        problems=tuple(problems),
        scheduler=cur.scheduler,
        outcomes=tuple(OutcomeCount(*key, count) for key, count in sorted(cur.outcomes.items())),
        partial_collections=tuple(
            sorted(node for node, success in cur.collect_success.items() if success == 0)
        ),
    )


def _join_by_uuid(surface: SurfaceReadings) -> None:
    """Host values of series without a node label, set on the host GPUs of their device UUID
    that other families name a node for; a GPU no family names a node for is read without
    one (its node may come from the scheduler's device of that UUID)."""
    hosts_of: dict[str, list[HostGpuReading]] = {}
    for host in surface.host_gpus.values():
        hosts_of.setdefault(host.device_uuid, []).append(host)
    for attr, rows in surface.host_values_by_uuid.items():
        for uuid, (fields, value) in rows.items():
            hosts = hosts_of.get(uuid)
            if hosts is None:
                host = HostGpuReading("", uuid, fields[2], fields[3])
                surface.host_gpus[("", uuid)] = host
                hosts = hosts_of[uuid] = [host]
            for host in hosts:
                if getattr(host, attr) is None:
                    setattr(host, attr, value)


@dataclass(slots=True)
class _Seen:
    """What the families of an input show beside their readings."""

    surfaces: set[str] = field(default_factory=set)
    components: set[str] = field(default_factory=set)
    hami_version: str | None = None
    allocation_families: bool = False
    mig_instances: int = 0


def _read_family(
    surface: SurfaceReadings, spec: FamilySpec, rows: Columns, keys: _Keys = None
) -> None:
    """Put the usable rows of one family into the readings its table row names; ``keys`` are
    the rows' identity keys if the sample screen built them (``ScreenedFamily.keys``)."""
    attr = spec.field
    if attr is None:
        return  # descriptive: counted, never summed
    if spec.reading == "device":
        # The overview also carries each GPU's memory limit (and up to v2.9 its shared count)
        # in labels.
        labelled = "device_memory_limit" in spec.canonical_labels
        _devices(surface, rows, attr, labelled, keys)
    elif spec.reading == "allocation":
        _allocations(surface, rows, attr, keys)
    elif spec.reading == "quota":
        if attr == "limit_metric":
            surface.quota_limit_family_seen = True
        _quotas(surface, rows, attr, "limit" in spec.canonical_labels)
    elif spec.reading in ("host", "host_errors"):
        _hosts(surface, rows, attr, spec.reading == "host_errors")
    elif spec.reading == "container":
        _containers(surface, rows, attr, spec.fills_gaps)
    elif spec.reading == "scheduler":  # one sample; if repeated, the last one read
        _set_column([surface.scheduler] * len(rows[1]), attr, rows[1])
    elif spec.reading == "outcome":
        for (phase, device_type, reason), value in zip(*rows, strict=True):
            surface.outcomes[(attr, phase, device_type, reason)] = value
    elif spec.reading == "monitor":
        for (node,), value in zip(*rows, strict=True):
            surface.collect_success[node] = value
    else:
        raise AssertionError(f"family {spec.name} has no reader for {spec.reading}")


def _fill(target: object, source: object, names: Iterable[str]) -> None:
    for name in names:
        if getattr(target, name) is None:
            setattr(target, name, getattr(source, name))


def _merge(current: dict, legacy: dict, fields: tuple[str, ...]) -> dict:  # type: ignore[type-arg]
    """Current readings win; legacy ones fill gaps and add keys current does not have."""
    if not legacy:
        return current
    merged = dict(current)
    for key, leg in legacy.items():
        cur = merged.get(key)
        if cur is None:
            merged[key] = leg
        else:
            _fill(cur, leg, fields)
    return merged


def _value_fields(reading: type) -> tuple[str, ...]:
    """The fields of a reading that families fill: every one that starts unknown (None)."""
    return tuple(f.name for f in dataclasses.fields(reading) if f.default is None)


_DEVICE_FIELDS = _value_fields(DeviceReading)
_ALLOC_FIELDS = _value_fields(AllocationReading)
_QUOTA_FIELDS = _value_fields(QuotaReading)
_HOST_FIELDS = _value_fields(HostGpuReading)
_CONTAINER_FIELDS = _value_fields(ContainerRuntimeReading)
