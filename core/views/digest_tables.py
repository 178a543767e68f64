"""The tables of the first page (the one-screen answer), each defined once as columns.

Every one fits 72 characters for GPU model names of up to 14 characters (``A100-SXM4-80GB``),
so the same table is a Slack code block and a terminal table; longer names are shortened in
the middle. The exact figures behind each cell are the table's CSV and JSON (``models``).
"""

from __future__ import annotations

from core import number_style
from core.model import (
    ContainerRuntime,
    GpuSummary,
    HostGpuRuntime,
    ModelSummary,
    NamespaceSummary,
    PodRealUsage,
    ShapeFit,
)
from core.views import columns
from core.views import table_spec as col
from core.views.names import gpu_name, pod_name, short_type
from core.views.table_spec import TableSpec

# The per-model table is in the files too: it is ``core.views.columns.MODELS``.
MODELS = columns.MODELS
MODELS_NOTE = columns.MODELS_NOTE


def _placements(m: ModelSummary, name: str) -> int | None:
    shape: ShapeFit | None = next((s for s in m.capacity if s.name == name), None)
    return shape.placements if shape is not None else None


OUTLOOK: TableSpec[ModelSummary] = TableSpec(
    (
        col.text("model", "model", lambda m: short_type(m.model), name=True),
        col.count("1 GPU", "one_gpu_jobs", lambda m: _placements(m, "1 whole GPU")),
        col.count("2 GPUs", "two_gpu_jobs", lambda m: _placements(m, "2 whole GPUs")),
        col.count("4 GPUs", "four_gpu_jobs", lambda m: _placements(m, "4 whole GPUs")),
        col.count("8 GPUs", "eight_gpu_jobs", lambda m: _placements(m, "8 whole GPUs")),
        col.count("half", "half_gpu_jobs", lambda m: _placements(m, "half GPU")),
        col.count("quarter", "quarter_gpu_jobs", lambda m: _placements(m, "quarter GPU")),
    ),
    empty_reason="no GPU device series in the input",
)
OUTLOOK_NOTE = "how many jobs of each shape could start now"
OUTLOOK_SHAPES = "half, quarter: that share of one GPU"


# Every GPU of a small cluster: the GPU table's main columns.
ALL_GPUS = columns.GPUS.select("GPU", "model", "cores", "memory", "pods", "state")
ALL_GPUS_NOTE = "cores: share allocated · memory: allocated of the GPU's"


def _quota(ns: NamespaceSummary) -> str:
    if ns.quota_use_percent is None:
        return "no limit"
    marker = " !" if ns.quota_state in ("over", "near") else ""
    return number_style.percent(ns.quota_use_percent) + marker


def _class(ns: NamespaceSummary) -> str:
    return f"{ns.size_class}, {ns.shape}" if ns.size_class else ns.usage_class


TOP_NAMESPACES: TableSpec[NamespaceSummary] = TableSpec(
    (
        col.text("namespace", "namespace", lambda ns: ns.namespace, name=True),
        col.percent("cores", "core_share_percent", lambda ns: ns.core_share_percent),
        col.percent("memory", "mem_share_percent", lambda ns: ns.mem_share_percent),
        col.Column("quota", "quota_use_percent", _quota, lambda ns: ns.quota_use_percent, "right"),
        col.count("GPUs", "gpus_touched", lambda ns: ns.gpus_touched),
        col.count("nodes", "nodes_touched", lambda ns: ns.nodes_touched),
        col.text("class", "class", _class),
    ),
    empty_reason="no per-pod allocation or quota series in the input",
)
TOP_NAMESPACES_NOTE = "% of allocation · ! near or over quota"


HOST_GPUS: TableSpec[HostGpuRuntime] = TableSpec(
    (
        col.text("GPU", "gpu", lambda h: gpu_name(h.node, h.device_index), name=True),
        col.text("model", "device_type", lambda h: short_type(h.device_type), name=True),
        col.mem_each("memory used", "mem_used_mib", lambda h: h.mem_used_mib),
        col.percent("utilisation", "utilization_percent", lambda h: h.utilization_percent),
    ),
    empty_reason="no host GPU series from the vGPU monitor",
)


def _allocated(row: tuple[HostGpuRuntime, GpuSummary | None], value: str) -> str:
    return value if row[1] is not None else "-"


HOST_GPUS_WITH_ALLOCATION: TableSpec[tuple[HostGpuRuntime, GpuSummary | None]] = TableSpec(
    (
        col.text("GPU", "gpu", lambda r: gpu_name(r[0].node, r[0].device_index), name=True),
        col.mem_each("used", "mem_used_mib", lambda r: r[0].mem_used_mib),
        col.percent("util", "utilization_percent", lambda r: r[0].utilization_percent),
        col.Column(
            "cores alloc",
            "scheduler_core_allocated_percent",
            lambda r: _allocated(
                r, number_style.percent(r[1].core_allocated_percent if r[1] else 0)
            ),
            lambda r: r[1].core_allocated_percent if r[1] else None,
            "right",
        ),
        col.Column(
            "memory alloc",
            "scheduler_mem_allocated_mib",
            lambda r: _allocated(
                r,
                number_style.mem_each_pair(r[1].mem_allocated_mib, r[1].mem_limit_mib)
                if r[1]
                else "",
            ),
            lambda r: r[1].mem_allocated_mib if r[1] else None,
            "right",
        ),
        col.text(
            "state",
            "scheduler_state",
            lambda r: (
                r[1].state
                if r[1] is not None
                else ("scheduled" if r[0].scheduler_device_known else "not in scheduler")
            ),
        ),
    ),
    empty_reason="no host GPU series from the vGPU monitor",
)
HOST_GPUS_NOTE = "measured memory used and utilisation · the scheduler's allocation"


def _last_kernel(c: ContainerRuntime) -> str:
    if c.seconds_since_last_kernel is None:
        return "none yet" if c.last_kernel_written else number_style.NOT_KNOWN
    return number_style.seconds(c.seconds_since_last_kernel) + " ago"


def containers_spec(where: dict[str, str]) -> TableSpec[ContainerRuntime]:
    """The containers the vGPU monitor measured; ``where`` names each GPU (by UUID) by its node
    and index, as the scheduler lists it."""
    return TableSpec(
        (
            col.text("pod", "pod", lambda c: pod_name(c.namespace, c.pod), name=True),
            col.Column("container", "container", lambda c: c.container, width="name", optional=1),
            col.text("GPU", "gpu", lambda c: where.get(c.device_uuid, "-"), name=True),
            col.Column(
                "memory",
                "mem_used_mib",
                lambda c: number_style.mem_each_pair(c.mem_used_mib, c.mem_limit_mib),
                lambda c: c.mem_used_mib,
                "right",
            ),
            col.percent("used", "mem_used_percent", lambda c: c.mem_used_percent),
            col.percent("SM", "sm_utilization_percent", lambda c: c.sm_utilization_percent),
            col.Column(
                "last kernel",
                "seconds_since_last_kernel",
                _last_kernel,
                lambda c: c.seconds_since_last_kernel,
                "right",
            ),
        ),
        empty_reason="no container series from the vGPU monitor",
    )


CONTAINERS_NOTE = "memory used of the vGPU limit · SM utilisation"


REAL_USAGE: TableSpec[PodRealUsage] = TableSpec(
    (
        col.text("pod", "pod", lambda u: pod_name(u.namespace, u.pod), name=True),
        col.percent("util", "utilization_percent", lambda u: u.utilization_percent),
        col.Column(
            "memory",
            "mem_used_mib",
            lambda u: number_style.mem_each_pair(u.mem_used_mib, u.allocated_mem_mib),
            lambda u: u.mem_used_mib,
            "right",
        ),
        col.percent("efficiency", "mem_efficiency_percent", lambda u: u.mem_efficiency_percent),
        col.text("class", "class", lambda u: u.usage_class or "-"),
    ),
    empty_reason="no pod could be read",
)
REAL_USAGE_NOTE = "memory = used of what HAMi allocated; efficiency = used / allocated"
