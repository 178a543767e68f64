"""The immutable result of a summary: every figure of a report, computed once.

Views (text, Markdown, JSON, CSV, Block Kit, chart) only format these objects; they never
recompute a number. Every type is a frozen, slotted dataclass; a changed copy comes from
``dataclasses.replace``.

Units are part of every field name: ``*_mib`` is MiB, ``*_cores`` / ``core_*`` are share points
(100 = one whole GPU), ``*_percent`` is 0-100.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from core.outcomes import Outcomes

SourceKind = Literal["paste", "file", "cluster"]
Surface = Literal["current", "legacy", "mixed", "none"]
GpuState = Literal["idle", "partial", "full", "inconsistent"]
NodeVerdict = Literal["fit-for-large-jobs", "fragmented", "full"]
# "unknown" only when the input has no scheduler device series (e.g. vGPU monitor metrics only).
Distribution = Literal["concentrated", "fragmented", "even", "unknown"]
CheckStatus = Literal["pass", "warn", "skip"]
Severity = Literal["info", "warn"]
UsageClass = Literal["idle", "high", "normal", "low / over-allocated"]
ExecFailure = Literal[
    "nvidia-smi unavailable",
    "exec blocked by policy",
    "pod gone",
    "no devices visible",
    "exec failed",
]


@dataclass(frozen=True, slots=True)
class SourceInfo:
    """Where the metrics text came from; supplied by the caller, never guessed."""

    kind: SourceKind
    label: str
    cluster: str | None = None
    context: str | None = None
    fetched_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class GpuSummary:
    """One GPU as the scheduler registers it: its limits, what is allocated, its state and flags."""

    node: str
    device_index: int
    device_uuid: str
    device_type: str
    core_limit: float
    core_allocated: float
    core_allocated_percent: float
    mem_limit_mib: float
    mem_allocated_mib: float
    mem_allocated_percent: float
    shared_count: int
    containers: int
    state: GpuState
    flags: tuple[str, ...]
    free_cores: float
    free_mem_mib: float
    namespaces: tuple[str, ...]
    mem_ratio_reported: float | None = None


@dataclass(frozen=True, slots=True)
class NodeSummary:
    """One node: sums over its GPUs, its largest free slice and its verdict."""

    node: str
    gpus: int
    device_types: tuple[str, ...]
    core_limit: float
    core_allocated: float
    core_allocated_percent: float
    mem_limit_mib: float
    mem_allocated_mib: float
    mem_allocated_percent: float
    idle_gpus: int
    partial_gpus: int
    full_gpus: int
    inconsistent_gpus: int
    shared_gpus: int
    free_whole_gpus: int
    free_cores: float
    free_mem_mib: float
    largest_free_cores: float
    largest_free_mem_mib: float
    verdict: NodeVerdict
    pods: int


@dataclass(frozen=True, slots=True)
class Workload:
    """One (namespace, pod, container index, device) allocation."""

    namespace: str
    pod: str
    container_index: str
    node: str
    device_uuid: str
    cores: float
    mem_mib: float
    whole_gpu: bool
    multi_gpu: bool
    shares_gpu: bool


@dataclass(frozen=True, slots=True)
class QuotaFigure:
    """HAMi quota accounting for one resource of one namespace.

    ``limit`` is None when no limit is set (HAMi prints ``limit="0"`` for that case).
    """

    resource: str
    used: float
    limit: float | None


@dataclass(frozen=True, slots=True)
class NamespaceSummary:
    """One namespace: what its workloads hold (or its quota says it uses), and its class."""

    namespace: str
    cores: float
    mem_mib: float
    core_share_percent: float
    mem_share_percent: float
    pods: tuple[str, ...]
    top_pods: tuple[tuple[str, float, float], ...]  # (pod, cores, mem_mib), largest first
    gpus_touched: int
    allocations: int
    whole_gpu_allocations: int
    fractional_allocations: int
    quota: tuple[QuotaFigure, ...]
    usage_class: str  # ``major tenant, fractions`` (core.summary.tenants)
    totals_from: Literal["workloads", "quota"] = "workloads"
    size_class: str = ""  # dominant, major, medium or small; "" without an allocation
    shape: str = ""  # whole GPUs, fractions, memory only, mixed
    nodes_touched: int = 0
    # The largest of its shares of the cluster's cores, memory and GPUs.
    footprint_percent: float = 0.0
    quota_use_percent: float | None = None  # its highest use of a quota limit
    quota_state: Literal["over", "near", "within", "no limit"] = "no limit"


@dataclass(frozen=True, slots=True)
class Finding:
    """Something a reader should know about the cluster, naming what it is about."""

    kind: str
    severity: Severity
    message: str
    subjects: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Check:
    """One consistency check of the input: passed, a warning, or skipped."""

    name: str
    status: CheckStatus
    message: str


@dataclass(frozen=True, slots=True)
class ClusterOverview:
    """The whole cluster: totals, GPU states, free capacity and the distribution verdict."""

    nodes: int
    gpus: int
    core_limit: float
    core_allocated: float
    core_allocated_percent: float
    mem_limit_mib: float
    mem_allocated_mib: float
    mem_allocated_percent: float
    idle_gpus: int
    partial_gpus: int
    full_gpus: int
    inconsistent_gpus: int
    shared_gpus: int
    exclusive_gpus: int
    free_whole_gpus: int
    free_cores: float
    free_mem_mib: float
    pods: int
    namespaces: int
    distribution: Distribution
    capacity_answer: str


@dataclass(frozen=True, slots=True)
class ShapeFit:
    """How often one job shape fits now, and where."""

    name: str
    gpus: int
    cores_per_gpu: float
    mem_per_gpu_mib: float | None  # None: the whole memory of each device
    placements: int
    nodes: tuple[tuple[str, int], ...]  # (node, placements on it), most first, top few
    node_count: int = 0  # how many nodes have at least one placement (``nodes`` is cut)


@dataclass(frozen=True, slots=True)
class ModelSummary:
    """One GPU model (``device_type``): how much of it is allocated and what fits on it now.

    A job asks HAMi for GPUs of one model (``nvidia.com/use-gputype``), so free capacity is
    only useful per model: a free T4 does not take an H100 job.
    """

    model: str
    nodes: int
    gpus: int
    idle_gpus: int
    partial_gpus: int
    full_gpus: int
    inconsistent_gpus: int
    incomplete_gpus: int  # a limit or allocation series is missing: their figures not known
    core_limit: float
    core_allocated: float
    core_allocated_percent: float
    mem_limit_mib: float
    mem_allocated_mib: float
    mem_allocated_percent: float
    mem_per_gpu_mib: float  # the largest memory limit among its GPUs
    free_whole_gpus: int
    largest_whole_job: int  # the most whole GPUs of this model free on one node
    largest_whole_job_nodes: int  # how many nodes have that many free
    capacity: tuple[ShapeFit, ...]  # the capacity outlook's job shapes on this model only


@dataclass(frozen=True, slots=True)
class WholeJob:
    """The largest whole-GPU job that fits on one node now, and on how many nodes."""

    gpus: int = 0
    nodes: int = 0
    model: str | None = None  # the model, when every such node has that one model


@dataclass(frozen=True, slots=True)
class HostGpuRuntime:
    """One host GPU as the vGPU monitor measures it."""

    node: str
    device_index: int
    device_uuid: str
    device_type: str
    mem_used_mib: float | None
    utilization_percent: float | None
    memory_controller_utilization_percent: float | None
    scheduler_device_known: bool
    # Hardware health (HAMi after v2.10): None where the monitor does not write it.
    temperature_celsius: float | None = None
    power_watts: float | None = None
    ecc_corrected_errors: float | None = None
    ecc_uncorrected_errors: float | None = None
    # "hot" (at or above the hot temperature), "ecc" (uncorrected ECC errors counted).
    health: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ContainerRuntime:
    """One container's use of one vGPU as the vGPU monitor measures it."""

    namespace: str
    pod: str
    container: str
    vdevice_index: str
    device_uuid: str
    mem_used_mib: float | None
    mem_limit_mib: float | None
    mem_used_percent: float | None
    sm_utilization_percent: float | None
    seconds_since_last_kernel: float | None
    # False when the monitor writes no last-kernel family at all (the Ascend device plugin's):
    # no figure then means "not known", not "no kernel yet".
    last_kernel_written: bool = True


@dataclass(frozen=True, slots=True)
class RuntimeSection:
    """The vGPU monitor's measurements, the nodes whose monitor is missing, and those whose
    monitor says its last collection partly failed (the figures there may be incomplete)."""

    host_gpus: tuple[HostGpuRuntime, ...]
    containers: tuple[ContainerRuntime, ...]
    missing_monitors: tuple[str, ...] = ()
    partial_collections: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class GpuReading:
    """One GPU row of nvidia-smi output as seen inside a container."""

    index: int | None
    uuid: str | None
    utilization_percent: float | None
    mem_used_mib: float | None
    mem_total_mib: float | None
    name: str | None = None


@dataclass(frozen=True, slots=True)
class PodExecResult:
    """What exec'ing nvidia-smi in one pod returned (collected by ``bot``)."""

    namespace: str
    pod: str
    container: str | None
    readings: tuple[GpuReading, ...]
    failure: ExecFailure | None = None
    detail: str = ""


@dataclass(frozen=True, slots=True)
class PodRealUsage:
    """What nvidia-smi in one pod measured, judged against the pod's allocated memory."""

    namespace: str
    pod: str
    container: str | None
    readings: tuple[GpuReading, ...]
    allocated_mem_mib: float
    utilization_percent: float | None
    mem_used_mib: float | None
    mem_efficiency_percent: float | None
    usage_class: UsageClass | None
    failure: ExecFailure | None
    detail: str


@dataclass(frozen=True, slots=True)
class IdleAllocation:
    """A pod that holds an allocation but, as measured, does not use it."""

    namespace: str
    pod: str
    measured_by: Literal["vGPU monitor", "nvidia-smi"]
    utilization_percent: float | None
    mem_used_percent: float | None  # of the memory it may use (vGPU limit or allocation)


@dataclass(frozen=True, slots=True)
class InputProblem:
    """A sample left out of every figure because its value cannot be right.

    ``series`` names it as written (family and identifying labels), ``value`` is the value as
    Prometheus spells it (``NaN``, ``+Inf``, ``-30``), ``reason`` says what is wrong with it.
    """

    family: str
    series: str
    value: str
    reason: str


@dataclass(frozen=True, slots=True)
class InputReport:
    """What was read: surface, exporters, families and what was set aside."""

    surface: Surface
    components: tuple[str, ...]
    families: tuple[tuple[str, int], ...]  # (family name, sample count), sorted by name
    ignored_series: int
    cleaning_notes: tuple[str, ...] = ()
    hami_version: str | None = None
    # Samples left out of every sum (non-finite, negative, out of range, duplicate series).
    problems: tuple[InputProblem, ...] = ()
    # Sentences on lines set aside before reading (over a size limit, unreadable as metrics),
    # as the headline has them: readers of JSON and CSV are told on stderr too.
    set_aside: tuple[str, ...] = ()
    # What the scheduler replica said of itself (HAMi after v2.10); None: it did not say.
    scheduler_is_leader: bool | None = None
    scheduler_cache_synced: bool | None = None


@dataclass(frozen=True, slots=True)
class PodShare:
    """One pod under a filter: what it holds, and on which GPUs (node, index; -1 when the
    scheduler lists no such GPU)."""

    namespace: str
    pod: str
    cores: float
    mem_mib: float
    devices: tuple[tuple[str, int], ...]
    whole_gpus: int  # allocations of a whole GPU


@dataclass(frozen=True, slots=True)
class GpuShare:
    """A GPU under a filter, with the part the filter's pods hold of it."""

    gpu: GpuSummary
    cores: float
    mem_mib: float
    pods: int


@dataclass(frozen=True, slots=True)
class NodeShare:
    """A node under a filter, with the part the filter's pods hold of it."""

    node: NodeSummary
    gpus: int  # of its GPUs, those the filter's pods hold a part of
    cores: float
    mem_mib: float
    pods: int


@dataclass(frozen=True, slots=True)
class NamespaceShare:
    """One namespace's allocation within a filter (on a node: its totals there)."""

    namespace: str
    cores: float
    mem_mib: float
    gpus: int
    pods: int
    core_percent: float  # of the cores of the GPUs in the filter
    mem_percent: float  # of their memory


@dataclass(frozen=True, slots=True)
class Focus:
    """What a filter (``ns=``, ``node=``) narrows a summary to, beyond its filtered rows.

    ``pods``, ``gpus``, ``nodes`` and ``namespaces`` list everything in the filter (largest
    first; a node's GPUs in index order, idle ones included); ``whole`` is the unfiltered
    summary (the cluster's rows, e.g. the namespace ranking that gives charts their colours).
    """

    namespace: str | None
    node: str | None
    whole: Summary
    cores: float  # allocated to the filter's pods
    mem_mib: float
    pods: tuple[PodShare, ...]
    gpus: tuple[GpuShare, ...]
    nodes: tuple[NodeShare, ...]
    namespaces: tuple[NamespaceShare, ...]
    namespace_row: NamespaceSummary | None = None  # the namespace's own totals and quota
    node_row: NodeSummary | None = None
    containers: int = 0  # runtime containers measured in the filter


@dataclass(frozen=True, slots=True)
class Summary:
    """Every figure of one report: the input, the cluster, its rows and the judgements."""

    source: SourceInfo
    input: InputReport
    cluster: ClusterOverview
    nodes: tuple[NodeSummary, ...]
    gpus: tuple[GpuSummary, ...]
    workloads: tuple[Workload, ...]
    namespaces: tuple[NamespaceSummary, ...]
    findings: tuple[Finding, ...]
    checks: tuple[Check, ...]
    capacity: tuple[ShapeFit, ...]
    runtime: RuntimeSection | None
    real_usage: tuple[PodRealUsage, ...] | None
    notes: tuple[str, ...]
    filters: tuple[tuple[str, str], ...] = ()
    # The notes a reader must see first (what the report is based on, incomplete input); each
    # is also in ``notes``.
    headline: tuple[str, ...] = ()
    # Per GPU model (most GPUs first), over the whole cluster like ``cluster``.
    models: tuple[ModelSummary, ...] = ()
    largest_whole_job: WholeJob = WholeJob()
    # Pods whose allocation runtime data shows idle; None without any runtime data.
    idle_allocations: tuple[IdleAllocation, ...] | None = None
    # Under a filter: what it narrows to, and the whole summary (``core.summary.filtered``).
    focus: Focus | None = None
    # The scheduler's allocation outcome counters (HAMi after v2.10); None when it has none.
    outcomes: Outcomes | None = None
