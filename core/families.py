"""The HAMi metric families we recognise, current and legacy, with their label names.

The names and labels are those HAMi v2.10 writes (cmd/scheduler/metrics.go and
cmd/vGPUmonitor/metrics.go; legacy names with --legacy-metrics and on HAMi <= v2.8). Each family
is one row of ``FAMILY_TABLE``: its current and legacy names, its *role* (what the value
means), the reading and field its values fill, the values an exporter can write, and a label
map from its own label names to canonical ones, so the rest of ``core`` never looks at legacy
spellings. The table drives the bulk reader's choice of families, the sample screen and the
readings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from core import value_ranges as vr
from core.outcomes import KIND_WORDS
from core.value_ranges import ValueRange

Component = Literal["scheduler", "monitor", "build"]
FamilySurface = Literal["current", "legacy", "none"]


# Canonical identifying fields per kind of series, in a fixed order: readers hand each sample
# over as a tuple of these (missing labels as "").
DEVICE_FIELDS = (
    "node",
    "device_uuid",
    "device_index",
    "device_type",
    "device_memory_limit",
    "shared_containers",
)
ALLOCATION_FIELDS = ("namespace", "pod", "container_index", "device_uuid", "node")
QUOTA_FIELDS = ("namespace", "resource", "limit")
CONTAINER_FIELDS = ("namespace", "pod", "container", "vdevice_index", "device_uuid")
BUILD_FIELDS = ("version",)
# A host GPU's error counts: one series per kind of error (ECC corrected or uncorrected).
HOST_ERROR_FIELDS = ("node", "device_uuid", "device_index", "device_type", "error_type")
# The scheduler's outcome counters: bounded labels only, no pod, node or device.
OUTCOME_FIELDS = ("phase", "device_type", "failure_reason")
# A vGPU monitor's own state, one series per node it runs on.
MONITOR_FIELDS = ("node",)

Reading = Literal[
    "device",
    "allocation",
    "quota",
    "host",
    "host_errors",
    "container",
    "scheduler",
    "outcome",
    "monitor",
    "mig",
    "build",
    "none",
]
Labels = tuple[tuple[str, str], ...]  # own label name -> canonical label name

_FIELDS_OF: dict[Reading, tuple[str, ...]] = {
    "allocation": ALLOCATION_FIELDS,
    "quota": QUOTA_FIELDS,
    "container": CONTAINER_FIELDS,
    "build": BUILD_FIELDS,
    "host_errors": HOST_ERROR_FIELDS,
    "outcome": OUTCOME_FIELDS,
    "monitor": MONITOR_FIELDS,
}


@dataclass(frozen=True, slots=True)
class FamilySpec:
    """One family name as an exporter writes it, and how its samples are read."""

    name: str
    role: str  # what the value means, shared by a family and its legacy twin
    component: Component
    surface: FamilySurface
    # own label name -> canonical label name; labels not listed are descriptive only
    labels: Labels
    # The reading its rows fill (a device, a pod's allocation, a quota, a host GPU, a
    # container), and the field of it each value sets; no field: counted, never summed.
    reading: Reading = "none"
    field: str | None = None
    # The values an exporter can write (``core.value_ranges``); None: never screened.
    value_range: ValueRange | None = None
    # Its value only fills the field where the family that owns it left it empty.
    fills_gaps: bool = False

    @property
    def fields(self) -> tuple[str, ...]:
        """The canonical fields this family's samples are identified by."""
        return _FIELDS_OF.get(self.reading, DEVICE_FIELDS)

    @property
    def canonical_labels(self) -> frozenset[str]:
        return frozenset(canon for _, canon in self.labels)

    def own_label_for(self, canonical: str) -> str | None:
        for own, canon in self.labels:
            if canon == canonical:
                return own
        return "version" if self.reading == "build" and canonical == "version" else None


@dataclass(frozen=True, slots=True)
class Family:
    """One row of the family table: a family by its current name and, when HAMi had one, its
    legacy twin (HAMi <= v2.8, or --legacy-metrics), each with its own label names."""

    name: str
    legacy: str | None
    role: str
    component: Component
    reading: Reading
    field: str | None
    value_range: ValueRange | None
    labels: Labels
    legacy_labels: Labels = ()
    fills_gaps: bool = False

    def specs(self) -> tuple[FamilySpec, ...]:
        """The family's names as specs: the current one, then the legacy twin."""
        surface: FamilySurface = "none" if self.reading == "build" else "current"
        read = (self.reading, self.field, self.value_range, self.fills_gaps)
        current = FamilySpec(self.name, self.role, self.component, surface, self.labels, *read)
        if self.legacy is None:
            return (current,)
        legacy = FamilySpec(
            self.legacy, self.role, self.component, "legacy", self.legacy_labels, *read
        )
        return current, legacy


_SCHED_DEVICE_CURRENT = (
    ("node", "node"),
    ("device_uuid", "device_uuid"),
    ("device_index", "device_index"),
    ("device_type", "device_type"),
)
# HAMi <= v2.8 has no devicetype on most device families; the map simply finds nothing then.
_SCHED_DEVICE_LEGACY = (
    ("nodeid", "node"),
    ("deviceuuid", "device_uuid"),
    ("deviceidx", "device_index"),
    ("devicetype", "device_type"),
)
# HAMi <= v2.9 also puts the shared count in a label of the overview (removed in v2.10): the
# only shared count of an export that lacks the shared-count family.
_OVERVIEW_CURRENT = (
    *_SCHED_DEVICE_CURRENT,
    ("device_memory_limit", "device_memory_limit"),
    ("shared_containers", "shared_containers"),
)
_OVERVIEW_LEGACY = (
    *_SCHED_DEVICE_LEGACY,
    ("devicememorylimit", "device_memory_limit"),
    ("sharedcontainers", "shared_containers"),
)
_CONTAINER_CURRENT = (
    ("namespace", "namespace"),
    ("node", "node"),
    ("pod", "pod"),
    ("container_index", "container_index"),
    ("device_uuid", "device_uuid"),
)
_CONTAINER_LEGACY = (
    ("podnamespace", "namespace"),
    ("nodename", "node"),
    ("podname", "pod"),
    ("containeridx", "container_index"),
    ("deviceuuid", "device_uuid"),
)
_QUOTA_CURRENT = (("namespace", "namespace"), ("quota_name", "resource"), ("limit", "limit"))
# Legacy QuotaUsed spells the resource label in camelCase (``quotaName``).
_QUOTA_LEGACY = (("quotanamespace", "namespace"), ("quotaName", "resource"), ("limit", "limit"))
_HOST_CURRENT = _SCHED_DEVICE_CURRENT
_HOST_LEGACY = _SCHED_DEVICE_LEGACY
_HOST_ERRORS = (*_HOST_CURRENT, ("error_type", "error_type"))
_OUTCOME = tuple((label, label) for label in OUTCOME_FIELDS)
_VCONTAINER_CURRENT = (
    ("namespace", "namespace"),
    ("pod", "pod"),
    ("container", "container"),
    ("vdevice_index", "vdevice_index"),
    ("device_uuid", "device_uuid"),
)
_VCONTAINER_LEGACY = (
    ("podnamespace", "namespace"),
    ("podname", "pod"),
    ("ctrname", "container"),
    ("vdeviceid", "vdevice_index"),
    ("deviceuuid", "device_uuid"),
)


# The scheduler's outcome counters, by the kind each counts (HAMi #3083).
OUTCOME_KINDS = tuple(KIND_WORDS)
# The error_type values of an error counter (NVML's memory error types): a row sets the field
# "<family field>_<error_type>"; other values are counted, not read.
ERROR_TYPES = ("corrected", "uncorrected")

_DEVICE = (_SCHED_DEVICE_CURRENT, _SCHED_DEVICE_LEGACY)
_POD = (_CONTAINER_CURRENT, _CONTAINER_LEGACY)
_HOST = (_HOST_CURRENT, _HOST_LEGACY)
_VCONTAINER = (_VCONTAINER_CURRENT, _VCONTAINER_LEGACY)

# The family table: every family we read, and how. A new family is one row here (a new field
# of a reading is also its use: the row names it).
# fmt: off
FAMILY_TABLE: tuple[Family, ...] = (
    # current name, legacy twin, role, component, reading, field, value range, labels
    # Scheduler: each GPU's limits and allocations, pods' allocations, quotas.
    Family(
        "hami_gpu_memory_limit_bytes", "GPUDeviceMemoryLimit", "mem_limit_bytes", "scheduler",
        "device", "mem_limit_bytes", vr.DEVICE_MEMORY_LIMIT, *_DEVICE,
    ),
    Family(
        "hami_gpu_core_limit_ratio", "GPUDeviceCoreLimit", "core_limit", "scheduler",
        "device", "core_limit", vr.CORE_LIMIT, *_DEVICE,
    ),
    Family(
        "hami_gpu_memory_allocated_bytes", "GPUDeviceMemoryAllocated", "mem_allocated_bytes",
        "scheduler", "device", "mem_allocated_bytes", vr.DEVICE_MEMORY, *_DEVICE,
    ),
    Family(
        "hami_gpu_shared_count", "GPUDeviceSharedNum", "shared_count", "scheduler",
        "device", "shared_count", vr.SLOTS, *_DEVICE,
    ),
    Family(
        "hami_gpu_core_allocated_ratio", "GPUDeviceCoreAllocated", "core_allocated",
        "scheduler", "device", "core_allocated", vr.CORES, *_DEVICE,
    ),
    Family(
        "hami_node_gpu_overview", "nodeGPUOverview", "overview_mem_allocated_bytes",
        "scheduler", "device", "overview_mem_allocated_bytes", vr.DEVICE_MEMORY,
        _OVERVIEW_CURRENT, _OVERVIEW_LEGACY,
    ),
    Family(
        "hami_node_gpu_memory_allocated_ratio", "nodeGPUMemoryPercentage", "mem_ratio",
        "scheduler", "device", "mem_ratio", vr.RATIO, *_DEVICE,
    ),
    Family(
        "hami_node_gpu_mig_instance_info", "nodeGPUMigInstance", "mig_instance", "scheduler",
        "mig", None, None, *_DEVICE,
    ),
    Family(
        "hami_resource_quota_used", "QuotaUsed", "quota_used", "scheduler",
        "quota", "used", vr.QUOTA, _QUOTA_CURRENT, _QUOTA_LEGACY,
    ),
    Family(
        "hami_resource_quota_limit", None, "quota_limit", "scheduler",
        "quota", "limit_metric", vr.QUOTA_LIMIT,
        (("namespace", "namespace"), ("quota_name", "resource")),
    ),
    Family(
        "hami_vgpu_memory_allocated_bytes", "vGPUMemoryAllocated", "pod_mem_allocated_bytes",
        "scheduler", "allocation", "mem_allocated_bytes", vr.DEVICE_MEMORY, *_POD,
    ),
    Family(
        "hami_vgpu_core_allocated_ratio", "vGPUCoreAllocated", "pod_core_allocated",
        "scheduler", "allocation", "cores", vr.CORES, *_POD,
    ),
    # The replica that answered (HAMi after v2.10, PR #2758): no labels, 1 or 0.
    Family(
        "hami_scheduler_is_leader", None, "scheduler_is_leader", "scheduler",
        "scheduler", "is_leader", vr.FLAG, (),
    ),
    Family(
        "hami_scheduler_cache_synced", None, "scheduler_cache_synced", "scheduler",
        "scheduler", "cache_synced", vr.FLAG, (),
    ),
    # Allocation outcomes since the scheduler started (HAMi after v2.10, PR #3088): counters
    # by phase, device type and failure reason; the field is the kind of outcome.
    *(
        Family(
            f"hami_scheduler_{kind}_total", None, f"scheduler_{kind}", "scheduler",
            "outcome", kind, vr.EVENT_COUNT, _OUTCOME,
        )
        for kind in OUTCOME_KINDS
    ),
    # vGPU monitor: host GPUs and containers as measured.
    Family(
        "hami_host_gpu_memory_used_bytes", "HostGPUMemoryUsage", "host_mem_used_bytes",
        "monitor", "host", "mem_used_bytes", vr.MONITOR_BYTES, *_HOST,
    ),
    Family(
        "hami_host_gpu_utilization_ratio", "HostCoreUtilization", "host_utilization",
        "monitor", "host", "utilization", vr.PERCENT, *_HOST,
    ),
    # A node label since PR #2776 (none before, HAMi #2616): series without one are joined to
    # the host GPUs by device UUID.
    Family(
        "hami_host_gpu_memory_controller_utilization_ratio", None, "host_memctl_utilization",
        "monitor", "host", "memctl_utilization", vr.PERCENT, _HOST_CURRENT,
    ),
    # Hardware health (HAMi after v2.10, PR #2732).
    Family(
        "hami_host_gpu_temperature_celsius", None, "host_temperature", "monitor",
        "host", "temperature_celsius", vr.TEMPERATURE, _HOST_CURRENT,
    ),
    Family(
        "hami_host_gpu_power_usage_watts", None, "host_power", "monitor",
        "host", "power_watts", vr.POWER_WATTS, _HOST_CURRENT,
    ),
    # A counter, one series per error_type (``ERROR_TYPES``): ecc_corrected, ecc_uncorrected.
    Family(
        "hami_host_gpu_ecc_errors_total", None, "host_ecc_errors", "monitor",
        "host_errors", "ecc", vr.ERROR_COUNT, _HOST_ERRORS,
    ),
    # 0 when any part of the monitor's last collection failed (the AMD monitor writes it).
    Family(
        "hami_vgpumonitor_collect_success", None, "monitor_collect_success", "monitor",
        "monitor", "collect_success", vr.FLAG, (("node", "node"),),
    ),
    Family(
        "hami_vgpu_memory_used_bytes", "vGPU_device_memory_usage_in_bytes",
        "container_mem_used_bytes", "monitor", "container", "mem_used_bytes",
        vr.MONITOR_BYTES, *_VCONTAINER,
    ),
    Family(
        "hami_vgpu_memory_limit_bytes", "vGPU_device_memory_limit_in_bytes",
        "container_mem_limit_bytes", "monitor", "container", "mem_limit_bytes",
        vr.MONITOR_BYTES_LIMIT, *_VCONTAINER,
    ),
    # The same number as hami_vgpu_memory_used_bytes: it only fills where that one is missing.
    Family(
        "hami_container_device_memory_bytes", "Device_memory_desc_of_container",
        "container_mem_desc_bytes", "monitor", "container", "mem_used_bytes",
        vr.MONITOR_BYTES, *_VCONTAINER, fills_gaps=True,
    ),
    Family(
        "hami_container_device_utilization_ratio", "Device_utilization_desc_of_container",
        "container_sm_utilization", "monitor", "container", "sm_utilization",
        vr.SUMMED_PERCENT, *_VCONTAINER,
    ),
    Family(
        "hami_container_last_kernel_elapsed_seconds", "Device_last_kernel_of_container",
        "container_last_kernel_seconds", "monitor", "container", "last_kernel_seconds",
        vr.SECONDS, *_VCONTAINER,
    ),
    # Descriptive: recognised and counted, but no value of theirs enters a total.
    Family(
        "hami_mig_device_info", "MigInfo", "container_mig_info", "monitor",
        "container", None, None, *_VCONTAINER,
    ),
    *(
        Family(
            f"hami_vgpu_memory_{part}_bytes", None, f"container_mem_{part}_bytes", "monitor",
            "container", None, None, _VCONTAINER_CURRENT,
        )
        for part in ("context", "module", "buffer")
    ),
    Family("hami_build_info", None, "build_info", "build", "build", None, None, ()),
)
# fmt: on
# HAMi v2.7 deprecated families: recognised as HAMi, values not used (superseded).
_DEPRECATED = (
    FamilySpec(name, "deprecated", "scheduler", "legacy", ())
    for name in ("vGPUPodsDeviceAllocated", "vGPUMemoryPercentage", "vGPUCorePercentage")
)

FAMILIES: dict[str, FamilySpec] = {
    spec.name: spec
    for spec in (*(s for family in FAMILY_TABLE for s in family.specs()), *_DEPRECATED)
}

_COUNTER_SUFFIX = "_total"


def family_spec(sample_name: str) -> FamilySpec | None:
    """The HAMi family a sample belongs to, whatever TYPE its exposition declared.

    Older vGPU monitors declare some gauges (``Device_memory_desc_of_container`` among them) as
    ``counter``; the text format then names their samples ``<family>_total``, so the base name is
    looked up too.
    """
    spec = FAMILIES.get(sample_name)
    if spec is None and sample_name.endswith(_COUNTER_SUFFIX):
        spec = FAMILIES.get(sample_name[: -len(_COUNTER_SUFFIX)])
    return spec
