"""The immutable result of a summary: every figure of a report, computed once.

Views (text, Markdown, JSON, CSV, Block Kit, chart) only format these objects; they never
recompute a number. The types are NamedTuples rather than frozen dataclasses: a 1,000-node
cluster has about 20,000 rows (GPUs, nodes, workloads), which are built four times faster, and
every command that imports this module defines each class once, which costs a sixth of what a
frozen dataclass costs (whose methods are compiled from generated source at import); they are
declared as ``Record``s (``core.record``), which spares typing's per-field check. A summary is
changed with ``_replace``. ``GpuReading`` is a ``FrozenRecord`` with the same methods: a
NamedTuple field may not be named ``index``, and a dataclass would import ``dataclasses`` (and
``inspect``) into every command.

Units are part of every field name: ``*_mib`` is MiB, ``*_cores`` / ``core_*`` are share points
(100 = one whole GPU), ``*_percent`` is 0-100.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal, Self, cast

from core.record import Record

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


class SourceInfo(Record):
    """Where the metrics text came from; supplied by the caller, never guessed."""

    kind: SourceKind
    label: str
    cluster: str | None = None
    context: str | None = None
    fetched_at: datetime | None = None


# A row from a tuple of all its fields, built in C: calling a NamedTuple class runs a generated
# Python ``__new__``, which costs as much again for the 20,000 rows of a 1,000-node cluster.
new_row = tuple.__new__


class GpuSummary(Record):
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


class NodeSummary(Record):
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


class Workload(Record):
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


class QuotaFigure(Record):
    """HAMi quota accounting for one resource of one namespace.

    ``limit`` is None when no limit is set (HAMi prints ``limit="0"`` for that case).
    """

    resource: str
    used: float
    limit: float | None


class NamespaceSummary(Record):
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


class Finding(Record):
    kind: str
    severity: Severity
    message: str
    subjects: tuple[str, ...] = ()


class Check(Record):
    name: str
    status: CheckStatus
    message: str


class ClusterOverview(Record):
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


class ShapeFit(Record):
    """How often one job shape fits now, and where."""

    name: str
    gpus: int
    cores_per_gpu: float
    mem_per_gpu_mib: float | None  # None: the whole memory of each device
    placements: int
    nodes: tuple[tuple[str, int], ...]  # (node, placements on it), most first, top few
    node_count: int = 0  # how many nodes have at least one placement (``nodes`` is cut)


class ModelSummary(Record):
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


class WholeJob(Record):
    """The largest whole-GPU job that fits on one node now, and on how many nodes."""

    gpus: int = 0
    nodes: int = 0
    model: str | None = None  # the model, when every such node has that one model


class HostGpuRuntime(Record):
    node: str
    device_index: int
    device_uuid: str
    device_type: str
    mem_used_mib: float | None
    utilization_percent: float | None
    memory_controller_utilization_percent: float | None
    scheduler_device_known: bool


class ContainerRuntime(Record):
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


class RuntimeSection(Record):
    host_gpus: tuple[HostGpuRuntime, ...]
    containers: tuple[ContainerRuntime, ...]
    missing_monitors: tuple[str, ...] = ()


class SlotRecord:
    """Base of a class with slots whose fields are ``_FIELDS``, in order: equal to another of
    its class with equal fields, and shown by them. Written out rather than a dataclass, whose
    import (with ``inspect``) every command would pay."""

    __slots__ = ()
    _FIELDS: tuple[str, ...] = ()

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, field) for field in self._FIELDS)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, SlotRecord)
        return self._values() == other._values()

    def __repr__(self) -> str:
        shown = ", ".join(f"{f}={v!r}" for f, v in zip(self._FIELDS, self._values(), strict=True))
        return f"{type(self).__name__}({shown})"


class FrozenRecord(SlotRecord):
    """An immutable ``SlotRecord``: also hashed, copied and pickled by its fields; a changed copy
    comes from ``_replace``.

    For the records a NamedTuple cannot be (a field named ``index``) or should not be (a
    normalising ``__init__``). A subclass's ``__init__`` stores its values with ``_store``.
    """

    __slots__ = ()

    def _store(self, *values: object) -> None:
        for field, value in zip(self._FIELDS, values, strict=True):
            object.__setattr__(self, field, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: use _replace({name}=...)")

    def _replace(self, **changes: Any) -> Self:
        values: dict[str, Any] = dict(zip(self._FIELDS, self._values(), strict=True))
        values.update(changes)
        rebuild: Any = type(self)
        return cast(Self, rebuild(**values))

    def __hash__(self) -> int:
        return hash(self._values())

    def __reduce__(self) -> tuple[type[Self], tuple[object, ...]]:
        # copy and pickle rebuild it through __init__ (its attributes refuse to be set).
        return (type(self), self._values())


class GpuReading(FrozenRecord):
    """One GPU row of nvidia-smi output as seen inside a container (immutable: a changed copy
    comes from ``_replace``)."""

    __slots__ = ("index", "mem_total_mib", "mem_used_mib", "name", "utilization_percent", "uuid")
    _FIELDS = ("index", "uuid", "utilization_percent", "mem_used_mib", "mem_total_mib", "name")

    index: int | None
    uuid: str | None
    utilization_percent: float | None
    mem_used_mib: float | None
    mem_total_mib: float | None
    name: str | None

    def __init__(
        self,
        index: int | None,
        uuid: str | None,
        utilization_percent: float | None,
        mem_used_mib: float | None,
        mem_total_mib: float | None,
        name: str | None = None,
    ) -> None:
        self._store(index, uuid, utilization_percent, mem_used_mib, mem_total_mib, name)


class PodExecResult(Record):
    """What exec'ing nvidia-smi in one pod returned (collected by ``bot``)."""

    namespace: str
    pod: str
    container: str | None
    readings: tuple[GpuReading, ...]
    failure: ExecFailure | None = None
    detail: str = ""


class PodRealUsage(Record):
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


class IdleAllocation(Record):
    """A pod that holds an allocation but, as measured, does not use it."""

    namespace: str
    pod: str
    measured_by: Literal["vGPU monitor", "nvidia-smi"]
    utilization_percent: float | None
    mem_used_percent: float | None  # of the memory it may use (vGPU limit or allocation)


class InputProblem(Record):
    """A sample left out of every figure because its value cannot be right.

    ``series`` names it as written (family and identifying labels), ``value`` is the value as
    Prometheus spells it (``NaN``, ``+Inf``, ``-30``), ``reason`` says what is wrong with it.
    """

    family: str
    series: str
    value: str
    reason: str


class InputReport(Record):
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


class PodShare(Record):
    """One pod under a filter: what it holds, and on which GPUs (node, index; -1 when the
    scheduler lists no such GPU)."""

    namespace: str
    pod: str
    cores: float
    mem_mib: float
    devices: tuple[tuple[str, int], ...]
    whole_gpus: int  # allocations of a whole GPU


class GpuShare(Record):
    """A GPU under a filter, with the part the filter's pods hold of it."""

    gpu: GpuSummary
    cores: float
    mem_mib: float
    pods: int


class NodeShare(Record):
    """A node under a filter, with the part the filter's pods hold of it."""

    node: NodeSummary
    gpus: int  # of its GPUs, those the filter's pods hold a part of
    cores: float
    mem_mib: float
    pods: int


class NamespaceShare(Record):
    """One namespace's allocation within a filter (on a node: its totals there)."""

    namespace: str
    cores: float
    mem_mib: float
    gpus: int
    pods: int
    core_percent: float  # of the cores of the GPUs in the filter
    mem_percent: float  # of their memory


class Focus(Record):
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


class Summary(Record):
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
