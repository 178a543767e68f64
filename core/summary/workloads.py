"""Workload lines and namespace totals.

A workload line is one allocation: a container of a pod on one device. A namespace's totals are
the sums of its workloads, or, when the input has no per-pod allocation series, what its quota
figures say is used.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter, itemgetter, le

from core.model import NamespaceSummary, QuotaFigure, Workload
from core.readings import BYTES_PER_MIB, AllocationReading, DeviceKey, QuotaReading
from core.settings import Thresholds
from core.summary.devices import percent
from core.summary.tenants import Fleet, TenantShape, classify

_MEMORY_RESOURCE = re.compile(r"mem", re.IGNORECASE)
_CORE_RESOURCE = re.compile(r"core", re.IGNORECASE)


_SORT_KEY = attrgetter("namespace", "pod", "device_uuid", "container_index")


class AllocationsInOrder:
    """The allocations in the order of the workload rows (namespace, pod, device, container),
    and the tallies that need them in that order.

    ``device_keys[i]`` / ``device_ids[i]`` are the (node, UUID) and the device number of
    ``allocations[i]``: the position of its GPU in the GPU rows, or a number past the end for a
    device the device series do not list. In row order: ``rows``, ``device_ids``, ``nodes``
    (the device's node for an allocation without a node label) and ``pod_numbers`` (each
    (namespace, pod) numbered by its run). Per device number: ``containers`` (distinct
    allocations), ``namespaces`` (sorted) and whether it is ``shared`` by more than one pod;
    ``multi_gpu`` holds the pods on more than one device; ``pods_per_node`` counts the
    distinct pods on each node.
    """

    __slots__ = (
        "containers",
        "device_ids",
        "multi_gpu",
        "namespaces",
        "nodes",
        "pod_numbers",
        "pods_per_node",
        "rows",
        "shared",
    )

    def __init__(
        self,
        allocations: Sequence[AllocationReading],
        device_keys: Sequence[DeviceKey],
        device_ids: Sequence[int],
    ) -> None:
        order = sorted_order(allocations)
        self.rows = rows = list(map(allocations.__getitem__, order))
        self.device_ids = ids = list(map(device_ids.__getitem__, order))
        self.nodes: list[str] = []
        self.pod_numbers: list[int] = []
        # Allocation keys are unique per (namespace, pod, container index, device): the number
        # of allocations on a device is its number of distinct containers.
        self.containers: dict[int, int] = {}
        self.namespaces: dict[int, tuple[str, ...]] = {}
        self.shared: set[int] = set()
        self.multi_gpu: set[int] = set()
        self.pods_per_node: dict[str, int] = {}
        self._tally(rows, ids, allocations, device_keys)

    def _tally(
        self,
        rows: Sequence[AllocationReading],
        ids: Sequence[int],
        allocations: Sequence[AllocationReading],
        device_keys: Sequence[DeviceKey],
    ) -> None:
        """One pass over the rows for every tally (a large cluster has tens of thousands: one
        Python pass costs less than the several passes in C it replaces).

        Rows sorted by namespace and pod hold each pod in one run and each namespace in one
        run: a pod is on more than one device when a device in its run differs from the
        run's first, and a device's namespaces arrive in order.
        """
        append_node, append_pod = self.nodes.append, self.pod_numbers.append
        containers, names, shared = self.containers, self.namespaces, self.shared
        multi_gpu, per_node = self.multi_gpu, self.pods_per_node
        first_pod: dict[int, int] = {}
        key_of: dict[int, DeviceKey] | None = None  # by id(allocation), once one lacks a node
        pod = -1
        run_namespace: str | None = None
        run_pod: str | None = None
        run_node = ""
        run_device = -1
        run_nodes: set[str] | None = None  # the nodes of a pod on more than one node
        only: tuple[str, ...] = ()  # the namespace of the run, alone
        for a, device in zip(rows, ids, strict=True):
            namespace = a.namespace
            node = a.node
            if not node:
                if key_of is None:
                    key_of = dict(zip(map(id, allocations), device_keys, strict=True))
                node = key_of[id(a)][0]
            if a.pod != run_pod or namespace != run_namespace:
                pod += 1
                if namespace != run_namespace:
                    only = (namespace,)
                run_namespace, run_pod, run_node, run_device = namespace, a.pod, node, device
                run_nodes = None
                per_node[node] = per_node.get(node, 0) + 1
            else:
                if device != run_device:
                    multi_gpu.add(pod)
                if node != run_node:
                    if run_nodes is None:
                        run_nodes = {run_node}
                    if node not in run_nodes:
                        run_nodes.add(node)
                        per_node[node] = per_node.get(node, 0) + 1
            if first_pod.setdefault(device, pod) != pod:
                shared.add(device)
            containers[device] = containers.get(device, 0) + 1
            held = names.get(device)
            if held is None:
                names[device] = only
            elif held[-1] != namespace:
                names[device] = held + only
            append_node(node)
            append_pod(pod)


def build_workloads(
    allocations: AllocationsInOrder, core_limits: Sequence[float]
) -> list[Workload]:
    """One row per allocation, in the order of ``allocations``; ``core_limits`` are the GPUs'."""
    known = len(core_limits)
    multi_gpu, shared = allocations.multi_gpu, allocations.shared
    workloads: list[Workload] = []
    append = workloads.append
    rows = zip(
        allocations.rows,
        allocations.device_ids,
        allocations.nodes,
        allocations.pod_numbers,
        strict=True,
    )
    for a, device, node, pod in rows:
        cores = a.cores
        if cores is None:
            cores = 0.0
        mem = a.mem_allocated_bytes
        mem = mem / BYTES_PER_MIB if mem is not None else 0.0
        # Without a device series, 100 share points is the NVIDIA whole-GPU scale.
        core_limit = core_limits[device] if device < known else 100.0
        append(
            Workload(
                namespace=a.namespace,
                pod=a.pod,
                container_index=a.container_index,
                node=node,
                device_uuid=a.device_uuid,
                cores=cores,
                mem_mib=mem,
                whole_gpu=core_limit > 0 and cores >= core_limit,
                multi_gpu=pod in multi_gpu,
                shares_gpu=device in shared,
            )
        )
    return workloads


def sorted_order(allocations: Sequence[AllocationReading]) -> list[int]:
    """The positions of ``allocations`` by namespace, pod, device UUID and container index (a
    stable sort).

    Joined with NUL, which sorts below every other character, string keys compare as their
    tuples do, and plain strings sort several times faster than tuples (10,000 workloads: 5 ms
    instead of 18). Keys with a NUL of their own are sorted as tuples: their joined form holds
    more NULs than the joins put in.
    """
    joined = [f"{a.namespace}\0{a.pod}\0{a.device_uuid}\0{a.container_index}" for a in allocations]
    if "".join(joined).count("\0") != 3 * len(joined):
        keys = list(map(_SORT_KEY, allocations))
        return sorted(range(len(keys)), key=keys.__getitem__)
    return sorted(range(len(joined)), key=joined.__getitem__)


def is_memory_resource(resource: str) -> bool:
    return bool(_MEMORY_RESOURCE.search(resource))


def is_core_resource(resource: str) -> bool:
    return bool(_CORE_RESOURCE.search(resource)) and not is_memory_resource(resource)


def quota_limit(q: QuotaReading, limit_family_seen: bool) -> float | None:
    """The quota limit, or None when unset.

    HAMi prints ``limit="0"`` both for "no limit" and for an explicit 0; only
    ``hami_resource_quota_limit`` (v2.10+, written only for quotas that set a limit) tells them
    apart. A limit of 0 is treated as unset either way, so it is never reported as a violation.
    """
    if q.limit_metric is not None:
        return q.limit_metric if q.limit_metric > 0 else None
    if limit_family_seen:
        return None
    try:
        value = float(q.limit_label) if q.limit_label else 0.0
    except ValueError:
        return None
    return value if value > 0 else None


def build_namespaces(
    workloads: list[Workload],
    device_ids: Sequence[int],
    quotas: Iterable[QuotaReading],
    quota_limit_family_seen: bool,
    t: Thresholds,
    fleet: Fleet,
) -> list[NamespaceSummary]:
    """Per-namespace totals; ``device_ids`` are the workloads' device numbers (see
    ``build_workloads``) and ``fleet`` the cluster's capacity classes are measured against."""
    quota_by_ns: dict[str, list[QuotaFigure]] = defaultdict(list)
    for q in quotas:
        quota_by_ns[q.namespace].append(
            QuotaFigure(q.resource, q.used or 0.0, quota_limit(q, quota_limit_family_seen))
        )
    per_ns = _tallies(workloads, device_ids)
    from_quota = not workloads
    totals = (
        _quota_totals(quota_by_ns)
        if from_quota
        else {ns: (tally.cores, tally.mem_mib) for ns, tally in per_ns.items()}
    )
    total_cores = sum(c for c, _ in totals.values())
    total_mem = sum(m for _, m in totals.values())
    empty = _NamespaceTally()
    return [
        _namespace_row(
            ns,
            totals.get(ns, (0.0, 0.0)),
            (total_cores, total_mem),
            per_ns.get(ns, empty),
            tuple(sorted(quota_by_ns.get(ns, []), key=lambda f: f.resource)),
            from_quota,
            fleet,
            t,
        )
        for ns in sorted(set(totals) | set(quota_by_ns))
    ]


def _quota_totals(quota_by_ns: dict[str, list[QuotaFigure]]) -> dict[str, tuple[float, float]]:
    """Cores and memory used per namespace by its quota figures: the only per-namespace totals
    when the input has no per-pod allocation series."""
    totals: dict[str, tuple[float, float]] = {}
    for ns, figures in quota_by_ns.items():
        cores = sum(f.used for f in figures if is_core_resource(f.resource))
        mem = sum(f.used for f in figures if is_memory_resource(f.resource))
        totals[ns] = (cores, mem)
    return totals


def _namespace_row(
    ns: str,
    totals: tuple[float, float],
    cluster_totals: tuple[float, float],
    tally: _NamespaceTally,
    quota: tuple[QuotaFigure, ...],
    from_quota: bool,
    fleet: Fleet,
    t: Thresholds,
) -> NamespaceSummary:
    cores, mem = totals
    top = _top_pods(tally.pods)
    core_share = percent(cores, cluster_totals[0])
    mem_share = percent(mem, cluster_totals[1])
    shape = TenantShape(tally.allocations, tally.whole, tally.memory_only, len(tally.nodes))
    tenant = classify(cores, mem, len(tally.devices), core_share, mem_share, shape, quota, fleet, t)
    allocated = cores > 0 or mem > 0
    return NamespaceSummary(
        namespace=ns,
        cores=cores,
        mem_mib=mem,
        core_share_percent=core_share,
        mem_share_percent=mem_share,
        pods=tuple(sorted(tally.pods)),
        top_pods=tuple((pod, v[0], v[1]) for pod, v in top),
        gpus_touched=len(tally.devices),
        allocations=tally.allocations,
        whole_gpu_allocations=tally.whole,
        fractional_allocations=tally.allocations - tally.whole,
        quota=quota,
        usage_class=tenant.label if allocated else "no allocation",
        totals_from="quota" if from_quota else "workloads",
        size_class=tenant.size if allocated else "",
        shape=tenant.shape if allocated else "",
        nodes_touched=len(tally.nodes),
        footprint_percent=tenant.footprint_percent,
        quota_use_percent=tenant.quota_use_percent,
        quota_state=tenant.quota_state,
    )


_TOP_PODS = 5


def _top_pods(pods: dict[str, list[float]]) -> list[tuple[str, list[float]]]:
    """The pods with the most cores, then the most memory, then by name: the first few.

    Only pods with at least the cores of the fifth largest can be among them, so the full
    ordering (a Python key per pod) is left to those few out of thousands.
    """
    if len(pods) > _TOP_PODS:
        fewest = sorted([totals[0] for totals in pods.values()], reverse=True)[_TOP_PODS - 1]
        contenders = [item for item in pods.items() if item[1][0] >= fewest]
    else:
        contenders = list(pods.items())
    return sorted(contenders, key=lambda kv: (-kv[1][0], -kv[1][1], kv[0]))[:_TOP_PODS]


@dataclass(slots=True)
class _NamespaceTally:
    """Totals of one namespace's workloads (filled in as they are summed)."""

    cores: float = 0.0
    mem_mib: float = 0.0
    allocations: int = 0
    whole: int = 0
    memory_only: int = 0
    pods: dict[str, list[float]] = field(default_factory=dict)
    devices: set[int] = field(default_factory=set)
    nodes: set[str] = field(default_factory=set)


def _rows_of_namespaces(namespaces: Sequence[str]) -> dict[str, Sequence[int]]:
    """The rows of each namespace, in order of first appearance.

    Rows sorted by namespace (as ``build_workloads`` returns them) hold each namespace in one
    run, found by bisection instead of looking at every row in Python.
    """
    rows_of: dict[str, Sequence[int]] = {}
    if all(map(le, namespaces, namespaces[1:])):  # compared in C
        start = 0
        for namespace in dict.fromkeys(namespaces):
            end = bisect_right(namespaces, namespace, start)
            rows_of[namespace] = range(start, end)
            start = end
        return rows_of
    listed: dict[str, list[int]] = {}
    for row, namespace in enumerate(namespaces):
        listed.setdefault(namespace, []).append(row)
    rows_of.update(listed)
    return rows_of


def _tallies(
    workloads: Sequence[Workload], device_ids: Sequence[int]
) -> dict[str, _NamespaceTally]:
    """Per namespace: totals, per-pod totals, the devices and nodes touched and how many
    allocations hold memory without a core share.

    Sums and sets are taken over each namespace's column slices in C; only the per-pod totals
    look at one workload at a time (a large cluster has tens of thousands).
    """
    if not workloads:
        return {}
    # Each field as one column, read in C.
    namespaces, pods, nodes, cores, mems, whole = (
        list(map(attrgetter(name), workloads))
        for name in ("namespace", "pod", "node", "cores", "mem_mib", "whole_gpu")
    )
    tallies: dict[str, _NamespaceTally] = {}
    for namespace, rows in _rows_of_namespaces(namespaces).items():
        tally = tallies[namespace] = _NamespaceTally()
        pick = itemgetter(*rows) if len(rows) > 1 else lambda column, row=rows[0]: (column[row],)
        ns_cores, ns_mems = pick(cores), pick(mems)
        tally.cores = sum(ns_cores, 0.0)
        tally.mem_mib = sum(ns_mems, 0.0)
        tally.allocations = len(rows)
        tally.whole = sum(pick(whole))
        tally.devices = set(pick(device_ids))
        tally.nodes = set(pick(nodes))
        tally.memory_only = sum(1 for c, m in zip(ns_cores, ns_mems, strict=True) if c <= 0 < m)
        for pod, pod_cores, pod_mem in zip(pick(pods), ns_cores, ns_mems, strict=True):
            totals = tally.pods.get(pod)
            if totals is None:
                tally.pods[pod] = [pod_cores, pod_mem]
            else:
                totals[0] += pod_cores
                totals[1] += pod_mem
    return tallies
