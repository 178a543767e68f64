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

from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from itertools import starmap
from operator import attrgetter, itemgetter
from typing import Protocol, cast

from core.families import FAMILIES, SCHEDULER_ALLOCATION_ROLES, FamilySpec, family_spec
from core.model import InputProblem, SlotRecord
from core.record import Record
from core.sample_screen import BYTES_PER_MIB as BYTES_PER_MIB
from core.sample_screen import UniqueColumns, screen_family

DeviceKey = tuple[str, str]  # (node, device_uuid)
AllocationKey = tuple[str, str, str, str]  # (namespace, pod, container_index, device_uuid)
QuotaKey = tuple[str, str]  # (namespace, resource)
ContainerKey = tuple[str, str, str, str, str]  # (ns, pod, container, vdevice_index, uuid)
# Joins a repeated UUID and its device index in the key of the second and later devices that
# carry it; the reading keeps the UUID as written.
_REPEATED_UUID_SEPARATOR = "\x00#"


class _Slots(SlotRecord):
    """A mutable record whose fields are its slots, in order.

    The readings are filled in field by field as the families are read. They (and the surfaces
    and family rows below) are written out rather than made dataclasses, which compile
    generated methods at every import.
    """

    __slots__: tuple[str, ...] = ()

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        cls._FIELDS = cls.__slots__


class DeviceReading(_Slots):
    __slots__ = (
        "core_allocated",
        "core_limit",
        "device_index",
        "device_type",
        "device_uuid",
        "mem_allocated_bytes",
        "mem_limit_bytes",
        "mem_ratio",
        "node",
        "overview_mem_allocated_bytes",
        "overview_mem_limit_mib",
        "overview_shared_count",
        "shared_count",
    )

    def __init__(self, node: str, device_uuid: str, device_index: str, device_type: str) -> None:
        self.node = node
        self.device_uuid = device_uuid
        self.device_index = device_index
        self.device_type = device_type
        self.mem_limit_bytes: float | None = None
        self.core_limit: float | None = None
        self.mem_allocated_bytes: float | None = None
        self.core_allocated: float | None = None
        self.shared_count: float | None = None
        self.mem_ratio: float | None = None
        self.overview_mem_allocated_bytes: float | None = None
        self.overview_mem_limit_mib: float | None = None
        self.overview_shared_count: float | None = None


class AllocationReading(_Slots):
    __slots__ = (
        "container_index",
        "cores",
        "device_uuid",
        "mem_allocated_bytes",
        "namespace",
        "node",
        "pod",
    )

    def __init__(
        self, namespace: str, pod: str, container_index: str, device_uuid: str, node: str
    ) -> None:
        self.namespace = namespace
        self.pod = pod
        self.container_index = container_index
        self.device_uuid = device_uuid
        self.node = node
        self.mem_allocated_bytes: float | None = None
        self.cores: float | None = None


class QuotaReading(_Slots):
    __slots__ = ("limit_label", "limit_metric", "namespace", "resource", "used")

    def __init__(self, namespace: str, resource: str) -> None:
        self.namespace = namespace
        self.resource = resource
        self.used: float | None = None
        self.limit_label: str | None = None
        self.limit_metric: float | None = None


class HostGpuReading(_Slots):
    __slots__ = (
        "device_index",
        "device_type",
        "device_uuid",
        "mem_used_bytes",
        "memctl_utilization",
        "node",
        "utilization",
    )

    def __init__(self, node: str, device_uuid: str, device_index: str, device_type: str) -> None:
        self.node = node
        self.device_uuid = device_uuid
        self.device_index = device_index
        self.device_type = device_type
        self.mem_used_bytes: float | None = None
        self.utilization: float | None = None
        self.memctl_utilization: float | None = None


class ContainerRuntimeReading(_Slots):
    __slots__ = (
        "container",
        "device_uuid",
        "last_kernel_seconds",
        "mem_limit_bytes",
        "mem_used_bytes",
        "namespace",
        "pod",
        "sm_utilization",
        "vdevice_index",
    )

    def __init__(
        self, namespace: str, pod: str, container: str, vdevice_index: str, device_uuid: str
    ) -> None:
        self.namespace = namespace
        self.pod = pod
        self.container = container
        self.vdevice_index = vdevice_index
        self.device_uuid = device_uuid
        self.mem_used_bytes: float | None = None
        self.mem_limit_bytes: float | None = None
        self.sm_utilization: float | None = None
        self.last_kernel_seconds: float | None = None


class SurfaceReadings(_Slots):
    """Readings of one surface (current or legacy names)."""

    __slots__ = (
        "allocations",
        "containers",
        "devices",
        "host_gpus",
        "last_allocation_rows",
        "last_device_rows",
        "memctl_by_uuid",
        "quota_limit_family_seen",
        "quotas",
        "repeated_uuids",
    )

    def __init__(self) -> None:
        self.devices: dict[DeviceKey, DeviceReading] = {}
        self.allocations: dict[AllocationKey, AllocationReading] = {}
        self.quotas: dict[QuotaKey, QuotaReading] = {}
        self.host_gpus: dict[DeviceKey, HostGpuReading] = {}
        self.containers: dict[ContainerKey, ContainerRuntimeReading] = {}
        self.memctl_by_uuid: dict[str, float] = {}
        self.repeated_uuids: dict[DeviceKey, None] = {}
        self.quota_limit_family_seen = False
        # The field column and devices of the last device family read (see ``_devices``).
        self.last_device_rows: tuple[list[tuple[str, ...]], list[DeviceReading]] = ([], [])
        self.last_allocation_rows: tuple[list[tuple[str, ...]], list[AllocationReading]] = (
            [],
            [],
        )


class MetricsReadings(Record):
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


class _SampleLike(Protocol):
    """Structural type of a parsed sample (``core.exposition.Sample``)."""

    @property
    def name(self) -> str: ...

    @property
    def labels(self) -> dict[str, str]: ...

    @property
    def value(self) -> float: ...


# One family's samples as two parallel columns: canonical field tuples, and values.
Columns = tuple[list[tuple[str, ...]], list[float]]


class FamilyRows(_Slots):
    """The samples of the HAMi families of one or more texts, as canonical field tuples."""

    __slots__ = ("counts", "foreign", "rows")

    def __init__(self) -> None:
        self.rows: dict[str, Columns] = {}
        self.counts: dict[str, int] = {}
        self.foreign: dict[str, None] = {}

    def add_family(self, name: str, fields: list[tuple[str, ...]], values: list[float]) -> None:
        have = self.rows.get(name)
        if have is None:
            self.rows[name] = (fields, values)
        else:
            have[0].extend(fields)
            have[1].extend(values)
        self.counts[name] = self.counts.get(name, 0) + len(values)

    def merge(self, other: FamilyRows) -> None:
        """Add another text's rows (e.g. one vGPU monitor per node) to these."""
        for name, (fields, values) in other.rows.items():
            have = self.rows.setdefault(name, ([], []))
            have[0].extend(fields)
            have[1].extend(values)
        for name, count in other.counts.items():
            self.counts[name] = self.counts.get(name, 0) + count
        self.foreign.update(other.foreign)


def rows_from_samples(samples: Iterable[_SampleLike]) -> FamilyRows:
    """Group parsed samples by family, with identifying labels mapped to canonical fields."""
    out = FamilyRows()
    # Parsers may share one labels dict between series with the same label block; the field
    # tuple is cached per (labels object, family spec), holding the object so its id cannot be
    # reused while cached.
    cache: dict[tuple[int, int], tuple[dict[str, str], tuple[str, ...]]] = {}
    getters: dict[str, tuple[str | None, ...]] = {}
    last_name = ""
    spec: FamilySpec | None = None
    fields_column: list[tuple[str, ...]] = []
    values_column: list[float] = []
    for sample in samples:
        name = sample.name
        out.counts[name] = out.counts.get(name, 0) + 1
        if name != last_name:
            last_name = name
            spec = family_spec(name)
            if spec is None:
                out.foreign[name] = None
                continue
            fields_column, values_column = out.rows.setdefault(spec.name, ([], []))
            if spec.name not in getters:
                getters[spec.name] = tuple(spec.own_label_for(f) for f in spec.fields)
        if spec is None:
            continue
        labels = sample.labels
        key = (id(labels), id(spec))
        hit = cache.get(key)
        if hit is not None and hit[0] is labels:
            fields = hit[1]
        else:
            fields = tuple(labels.get(own, "") if own else "" for own in getters[spec.name])
            cache[key] = (labels, fields)
        fields_column.append(fields)
        values_column.append(sample.value)
    return out


_DeviceSetter = Callable[[Sequence[DeviceReading], Sequence[float]], None]
_AllocationSetter = Callable[[Sequence[AllocationReading], Sequence[float]], None]
# One function per value attribute that whole columns are set to: a loop storing a named
# slot runs in about half the instructions of setattr(), which looks the name up every time.
# (Written out, not generated, so nothing is compiled at import; devices and allocations have
# functions of their own, as a store specialises to one class.)


def _set_device_mem_limit_bytes(devices: Sequence[DeviceReading], values: Sequence[float]) -> None:
    for dev, value in zip(devices, values, strict=True):
        dev.mem_limit_bytes = value


def _set_device_core_limit(devices: Sequence[DeviceReading], values: Sequence[float]) -> None:
    for dev, value in zip(devices, values, strict=True):
        dev.core_limit = value


def _set_device_mem_allocated_bytes(
    devices: Sequence[DeviceReading], values: Sequence[float]
) -> None:
    for dev, value in zip(devices, values, strict=True):
        dev.mem_allocated_bytes = value


def _set_device_core_allocated(devices: Sequence[DeviceReading], values: Sequence[float]) -> None:
    for dev, value in zip(devices, values, strict=True):
        dev.core_allocated = value


def _set_device_shared_count(devices: Sequence[DeviceReading], values: Sequence[float]) -> None:
    for dev, value in zip(devices, values, strict=True):
        dev.shared_count = value


def _set_device_mem_ratio(devices: Sequence[DeviceReading], values: Sequence[float]) -> None:
    for dev, value in zip(devices, values, strict=True):
        dev.mem_ratio = value


def _set_device_overview_mem_allocated_bytes(
    devices: Sequence[DeviceReading], values: Sequence[float]
) -> None:
    for dev, value in zip(devices, values, strict=True):
        dev.overview_mem_allocated_bytes = value


def _set_allocation_mem_allocated_bytes(
    allocs: Sequence[AllocationReading], values: Sequence[float]
) -> None:
    for alloc, value in zip(allocs, values, strict=True):
        alloc.mem_allocated_bytes = value


def _set_allocation_cores(allocs: Sequence[AllocationReading], values: Sequence[float]) -> None:
    for alloc, value in zip(allocs, values, strict=True):
        alloc.cores = value


_DEVICE_SETTERS: dict[str, _DeviceSetter] = {
    "mem_limit_bytes": _set_device_mem_limit_bytes,
    "core_limit": _set_device_core_limit,
    "mem_allocated_bytes": _set_device_mem_allocated_bytes,
    "core_allocated": _set_device_core_allocated,
    "shared_count": _set_device_shared_count,
    "mem_ratio": _set_device_mem_ratio,
    "overview_mem_allocated_bytes": _set_device_overview_mem_allocated_bytes,
}
_ALLOCATION_SETTERS: dict[str, _AllocationSetter] = {
    "pod_mem_allocated_bytes": _set_allocation_mem_allocated_bytes,
    "pod_core_allocated": _set_allocation_cores,
}


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
    surface: SurfaceReadings,
    rows: Columns,
    set_values: _DeviceSetter,
    labelled: bool,
    pairs: _Keys = None,
) -> None:
    """Set the family's value of the devices of the rows; ``labelled`` when the family has
    the overview's memory-limit and shared-count labels."""
    fields, values = rows
    last_fields, last_devices = surface.last_device_rows
    # Families with one label set list the same devices in the same order, since the Go client
    # sorts series by label values: one list comparison then replaces a lookup per sample.
    if fields is last_fields or fields == last_fields:
        set_values(last_devices, values)
        return
    in_order = _device_column(surface.devices, fields, pairs)
    if in_order is None:
        in_order = _devices_one_by_one(surface, fields)
    set_values(in_order, values)
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


def _hosts(surface: SurfaceReadings, rows: Columns, attr: str) -> None:
    hosts = surface.host_gpus
    for (node, uuid, index, dtype, *_), value in zip(*rows, strict=True):
        host = hosts.get((node, uuid))
        if host is None:
            host = hosts[(node, uuid)] = HostGpuReading(node, uuid, index, dtype)
        setattr(host, attr, value)


_CONTAINER_INDEX = itemgetter(2)
_ALLOCATION_KEY = itemgetter(0, 1, 2, 3)


def _allocations(
    surface: SurfaceReadings, rows: Columns, set_values: _AllocationSetter, keys: _Keys = None
) -> None:
    fields, values = rows
    last_fields, last_allocations = surface.last_allocation_rows
    if fields is last_fields or fields == last_fields:  # as for devices
        set_values(last_allocations, values)
        return
    in_order = _allocation_column(surface.allocations, fields, keys)
    if in_order is None:
        in_order = _allocations_one_by_one(surface.allocations, fields)
    set_values(in_order, values)
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


def _quotas(surface: SurfaceReadings, rows: Columns, role: str) -> None:
    quotas = surface.quotas
    for (namespace, resource, limit), value in zip(*rows, strict=True):
        quota = quotas.get((namespace, resource))
        if quota is None:
            quota = quotas[(namespace, resource)] = QuotaReading(namespace, resource)
        if role == "quota_used":
            quota.used = value
            quota.limit_label = limit
        else:
            quota.limit_metric = value


def _containers(surface: SurfaceReadings, rows: Columns, attr: str) -> None:
    containers = surface.containers
    for fields, value in zip(*rows, strict=True):
        key = _container_key(fields)
        row = containers.get(key)
        if row is None:
            row = containers[key] = ContainerRuntimeReading(*key)
        setattr(row, attr, value)


def _container_key(fields: tuple[str, ...]) -> ContainerKey:
    namespace, pod, container, vdevice_index, uuid = fields
    return (namespace, pod, container, vdevice_index, uuid)


_HOST_ATTRS = {"host_mem_used_bytes": "mem_used_bytes", "host_utilization": "utilization"}
_CONTAINER_ATTRS = {
    "container_mem_used_bytes": "mem_used_bytes",
    "container_mem_limit_bytes": "mem_limit_bytes",
    "container_sm_utilization": "sm_utilization",
    "container_last_kernel_seconds": "last_kernel_seconds",
}
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
        fields, values, found, keys = screen_family(name, all_fields, all_values, unique_columns)
        problems.extend(found)
        if not values:
            continue
        if spec.component == "build":
            seen.hami_version = seen.hami_version or fields[0][0] or None
            continue
        seen.components.add(spec.component)
        seen.surfaces.add(spec.surface)
        if spec.role in SCHEDULER_ALLOCATION_ROLES:
            seen.allocation_families = True
        if spec.role == "mig_instance":
            seen.mig_instances += len(values)
        else:
            _read_role(surfaces[spec.surface], name, spec.role, (fields, values), keys)
    cur, leg = surfaces["current"], surfaces["legacy"]
    for surface in (cur, leg):
        for host in surface.host_gpus.values():
            if host.memctl_utilization is None:
                host.memctl_utilization = surface.memctl_by_uuid.get(host.device_uuid)
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
    )


class _Seen:
    """What the families of an input show beside their readings."""

    __slots__ = ("allocation_families", "components", "hami_version", "mig_instances", "surfaces")

    def __init__(self) -> None:
        self.surfaces: set[str] = set()
        self.components: set[str] = set()
        self.hami_version: str | None = None
        self.allocation_families = False
        self.mig_instances = 0


def _read_role(
    surface: SurfaceReadings, name: str, role: str, rows: Columns, keys: _Keys = None
) -> None:
    """Put the usable rows of the family ``name`` into the readings its role fills; ``keys``
    are the rows' identity keys if the sample screen built them (``ScreenedFamily.keys``)."""
    if role in _DEVICE_SETTERS:
        labelled = role == "overview_mem_allocated_bytes"
        _devices(surface, rows, _DEVICE_SETTERS[role], labelled, keys)
    elif role in _ALLOCATION_SETTERS:
        _allocations(surface, rows, _ALLOCATION_SETTERS[role], keys)
    elif role in ("quota_used", "quota_limit"):
        if role == "quota_limit":
            surface.quota_limit_family_seen = True
        _quotas(surface, rows, role)
    elif role in _HOST_ATTRS:
        _hosts(surface, rows, _HOST_ATTRS[role])
    elif role == "host_memctl_utilization":
        # The family has no node label (HAMi #2616): it is joined to hosts by device UUID.
        for fields, value in zip(*rows, strict=True):
            surface.memctl_by_uuid[fields[1]] = value
    elif role in _CONTAINER_ATTRS:
        _containers(surface, rows, _CONTAINER_ATTRS[role])
    elif role == "container_mem_desc_bytes":
        _container_memory_gaps(surface, rows)
    elif role not in _NOT_SUMMED_ROLES:
        raise AssertionError(f"family {name} has no reader for role {role}")


def _container_memory_gaps(surface: SurfaceReadings, rows: Columns) -> None:
    """The device memory descriptor holds the same number as hami_vgpu_memory_used_bytes: it
    only fills a container's used memory where that family is missing."""
    for fields, value in zip(*rows, strict=True):
        key = _container_key(fields)
        row = surface.containers.get(key)
        if row is None:
            row = surface.containers[key] = ContainerRuntimeReading(*key)
        if row.mem_used_bytes is None:
            row.mem_used_bytes = value


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


_DEVICE_FIELDS = (
    "mem_limit_bytes",
    "core_limit",
    "mem_allocated_bytes",
    "core_allocated",
    "shared_count",
    "mem_ratio",
    "overview_mem_allocated_bytes",
    "overview_mem_limit_mib",
    "overview_shared_count",
)
_ALLOC_FIELDS = ("mem_allocated_bytes", "cores")
_QUOTA_FIELDS = ("used", "limit_label", "limit_metric")
_HOST_FIELDS = ("mem_used_bytes", "utilization", "memctl_utilization")
_CONTAINER_FIELDS = ("mem_used_bytes", "mem_limit_bytes", "sm_utilization", "last_kernel_seconds")
