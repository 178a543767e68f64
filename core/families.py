"""The HAMi metric families we recognise, current and legacy, with their label names.

The names and labels are those HAMi v2.10 writes (cmd/scheduler/metrics.go and
cmd/vGPUmonitor/metrics.go; legacy names with --legacy-metrics and on HAMi <= v2.8). Each family
maps to a *role* (what the value means) and a label map from its own label names to canonical
ones, so the rest of ``core`` never looks at legacy spellings.
"""

from __future__ import annotations

from typing import Literal

from core.record import Record

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

_ALLOCATION_ROLES = frozenset({"pod_mem_allocated_bytes", "pod_core_allocated"})
_QUOTA_ROLES = frozenset({"quota_used", "quota_limit"})


class FamilySpec(Record):
    name: str
    role: str
    component: Component
    surface: FamilySurface
    # own label name -> canonical label name; labels not listed are descriptive only
    labels: tuple[tuple[str, str], ...]

    @property
    def fields(self) -> tuple[str, ...]:
        """The canonical fields this family's samples are identified by."""
        if self.component == "build":
            return BUILD_FIELDS
        if self.role in _ALLOCATION_ROLES:
            return ALLOCATION_FIELDS
        if self.role in _QUOTA_ROLES:
            return QUOTA_FIELDS
        if self.role.startswith("container_"):
            return CONTAINER_FIELDS
        return DEVICE_FIELDS

    def own_label_for(self, canonical: str) -> str | None:
        for own, canon in self.labels:
            if canon == canonical:
                return own
        return "version" if self.component == "build" and canonical == "version" else None


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


def _specs() -> dict[str, FamilySpec]:
    table: list[
        tuple[str, str, str, Component, tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]
    ] = [
        # current name, legacy name, role, component, current labels, legacy labels
        (
            "hami_gpu_memory_limit_bytes",
            "GPUDeviceMemoryLimit",
            "mem_limit_bytes",
            "scheduler",
            _SCHED_DEVICE_CURRENT,
            _SCHED_DEVICE_LEGACY,
        ),
        (
            "hami_gpu_core_limit_ratio",
            "GPUDeviceCoreLimit",
            "core_limit",
            "scheduler",
            _SCHED_DEVICE_CURRENT,
            _SCHED_DEVICE_LEGACY,
        ),
        (
            "hami_gpu_memory_allocated_bytes",
            "GPUDeviceMemoryAllocated",
            "mem_allocated_bytes",
            "scheduler",
            _SCHED_DEVICE_CURRENT,
            _SCHED_DEVICE_LEGACY,
        ),
        (
            "hami_gpu_shared_count",
            "GPUDeviceSharedNum",
            "shared_count",
            "scheduler",
            _SCHED_DEVICE_CURRENT,
            _SCHED_DEVICE_LEGACY,
        ),
        (
            "hami_gpu_core_allocated_ratio",
            "GPUDeviceCoreAllocated",
            "core_allocated",
            "scheduler",
            _SCHED_DEVICE_CURRENT,
            _SCHED_DEVICE_LEGACY,
        ),
        (
            "hami_node_gpu_overview",
            "nodeGPUOverview",
            "overview_mem_allocated_bytes",
            "scheduler",
            _OVERVIEW_CURRENT,
            _OVERVIEW_LEGACY,
        ),
        (
            "hami_node_gpu_memory_allocated_ratio",
            "nodeGPUMemoryPercentage",
            "mem_ratio",
            "scheduler",
            _SCHED_DEVICE_CURRENT,
            _SCHED_DEVICE_LEGACY,
        ),
        (
            "hami_node_gpu_mig_instance_info",
            "nodeGPUMigInstance",
            "mig_instance",
            "scheduler",
            _SCHED_DEVICE_CURRENT,
            _SCHED_DEVICE_LEGACY,
        ),
        (
            "hami_resource_quota_used",
            "QuotaUsed",
            "quota_used",
            "scheduler",
            _QUOTA_CURRENT,
            _QUOTA_LEGACY,
        ),
        (
            "hami_vgpu_memory_allocated_bytes",
            "vGPUMemoryAllocated",
            "pod_mem_allocated_bytes",
            "scheduler",
            _CONTAINER_CURRENT,
            _CONTAINER_LEGACY,
        ),
        (
            "hami_vgpu_core_allocated_ratio",
            "vGPUCoreAllocated",
            "pod_core_allocated",
            "scheduler",
            _CONTAINER_CURRENT,
            _CONTAINER_LEGACY,
        ),
        (
            "hami_host_gpu_memory_used_bytes",
            "HostGPUMemoryUsage",
            "host_mem_used_bytes",
            "monitor",
            _HOST_CURRENT,
            _HOST_LEGACY,
        ),
        (
            "hami_host_gpu_utilization_ratio",
            "HostCoreUtilization",
            "host_utilization",
            "monitor",
            _HOST_CURRENT,
            _HOST_LEGACY,
        ),
        (
            "hami_vgpu_memory_used_bytes",
            "vGPU_device_memory_usage_in_bytes",
            "container_mem_used_bytes",
            "monitor",
            _VCONTAINER_CURRENT,
            _VCONTAINER_LEGACY,
        ),
        (
            "hami_vgpu_memory_limit_bytes",
            "vGPU_device_memory_limit_in_bytes",
            "container_mem_limit_bytes",
            "monitor",
            _VCONTAINER_CURRENT,
            _VCONTAINER_LEGACY,
        ),
        (
            "hami_container_device_memory_bytes",
            "Device_memory_desc_of_container",
            "container_mem_desc_bytes",
            "monitor",
            _VCONTAINER_CURRENT,
            _VCONTAINER_LEGACY,
        ),
        (
            "hami_container_device_utilization_ratio",
            "Device_utilization_desc_of_container",
            "container_sm_utilization",
            "monitor",
            _VCONTAINER_CURRENT,
            _VCONTAINER_LEGACY,
        ),
        (
            "hami_container_last_kernel_elapsed_seconds",
            "Device_last_kernel_of_container",
            "container_last_kernel_seconds",
            "monitor",
            _VCONTAINER_CURRENT,
            _VCONTAINER_LEGACY,
        ),
        (
            "hami_mig_device_info",
            "MigInfo",
            "container_mig_info",
            "monitor",
            _VCONTAINER_CURRENT,
            _VCONTAINER_LEGACY,
        ),
    ]
    specs: dict[str, FamilySpec] = {}
    for current, legacy, role, component, cur_labels, leg_labels in table:
        specs[current] = FamilySpec(current, role, component, "current", cur_labels)
        specs[legacy] = FamilySpec(legacy, role, component, "legacy", leg_labels)
    # Families with no legacy twin.
    specs["hami_resource_quota_limit"] = FamilySpec(
        "hami_resource_quota_limit",
        "quota_limit",
        "scheduler",
        "current",
        (("namespace", "namespace"), ("quota_name", "resource")),
    )
    specs["hami_host_gpu_memory_controller_utilization_ratio"] = FamilySpec(
        "hami_host_gpu_memory_controller_utilization_ratio",
        "host_memctl_utilization",
        "monitor",
        "current",
        _HOST_CURRENT,
    )
    for part in ("context", "module", "buffer"):
        name = f"hami_vgpu_memory_{part}_bytes"
        specs[name] = FamilySpec(
            name, f"container_mem_{part}_bytes", "monitor", "current", _VCONTAINER_CURRENT
        )
    # HAMi v2.7 deprecated families: recognised as HAMi, values not used (superseded).
    for name in ("vGPUPodsDeviceAllocated", "vGPUMemoryPercentage", "vGPUCorePercentage"):
        specs[name] = FamilySpec(name, "deprecated", "scheduler", "legacy", ())
    specs["hami_build_info"] = FamilySpec("hami_build_info", "build_info", "build", "none", ())
    return specs


FAMILIES: dict[str, FamilySpec] = _specs()

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


SCHEDULER_ALLOCATION_ROLES = frozenset(
    {
        "mem_limit_bytes",
        "core_limit",
        "mem_allocated_bytes",
        "shared_count",
        "core_allocated",
        "overview_mem_allocated_bytes",
        "mem_ratio",
        "quota_used",
        "quota_limit",
        "pod_mem_allocated_bytes",
        "pod_core_allocated",
    }
)
