"""Workload lines and namespace totals.

A workload line is one allocation: a container of a pod on one device. A namespace's totals are
the sums of its workloads, or, when the input has no per-pod allocation series, what its quota
figures say is used.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from itertools import accumulate, repeat
from operator import attrgetter, ge, itemgetter, le, lt, ne, or_, truediv

from core.model import NamespaceSummary, QuotaFigure, Workload, new_row
from core.readings import BYTES_PER_MIB, AllocationReading, DeviceKey, QuotaReading
from core.settings import Thresholds
from core.summary.devices import percent
from core.summary.tenants import Fleet, TenantShape, classify

_MEMORY_RESOURCE = re.compile(r"mem", re.IGNORECASE)
_CORE_RESOURCE = re.compile(r"core", re.IGNORECASE)


_SORT_KEY = attrgetter("namespace", "pod", "device_uuid", "container_index")
_NODE = attrgetter("node")
_CORES = attrgetter("cores")
_MEM_BYTES = attrgetter("mem_allocated_bytes")


class AllocationsInOrder:
    """The allocations in the order of the workload rows (namespace, pod, device, container),
    as columns.

    ``device_keys[i]`` / ``device_ids[i]`` (given in the allocations' own order) are the
    (node, UUID) and the device number of ``allocations[i]``: the position of its GPU in the
    GPU rows, or a number past the end for a device the device series do not list. The
    columns hold them in row order; ``pod_numbers`` numbers each (namespace, pod) by its run.
    """

    __slots__ = (
        "container_indexes",
        "device_ids",
        "device_uuids",
        "namespaces",
        "nodes",
        "pod_numbers",
        "pods",
        "rows",
    )

    def __init__(
        self,
        allocations: Sequence[AllocationReading],
        device_keys: Sequence[DeviceKey],
        device_ids: Sequence[int],
    ) -> None:
        keys = list(map(_SORT_KEY, allocations))
        order = sorted_order(keys)
        self.rows = list(map(allocations.__getitem__, order))
        self.device_ids = list(map(device_ids.__getitem__, order))
        columns = tuple(zip(*map(keys.__getitem__, order), strict=True)) or ((), (), (), ())
        self.namespaces: Sequence[str] = columns[0]
        self.pods: Sequence[str] = columns[1]
        self.device_uuids: Sequence[str] = columns[2]
        self.container_indexes: Sequence[str] = columns[3]
        nodes = list(map(_NODE, self.rows))
        if not all(nodes):  # an allocation without a node label is on its device's node
            nodes = [node or device_keys[i][0] for node, i in zip(nodes, order, strict=True)]
        self.nodes = nodes
        # Rows sorted by namespace and pod hold each pod in one run: a new number where the
        # namespace or the pod changes (compared in C). Numbers hash faster than name pairs.
        namespaces, pods = self.namespaces, self.pods
        changed = map(or_, map(ne, namespaces[1:], namespaces), map(ne, pods[1:], pods))
        self.pod_numbers = list(accumulate(changed, initial=0)) if keys else []

    def pods_per_node(self) -> Counter[str]:
        """How many distinct pods have allocations on each node (the device's node for an
        allocation without a node label)."""
        return Counter(map(itemgetter(0), set(zip(self.nodes, self.pod_numbers, strict=True))))


def build_workloads(
    allocations: AllocationsInOrder, core_limits: Sequence[float]
) -> list[Workload]:
    """One row per allocation, in the order of ``allocations``; ``core_limits`` are the GPUs'.

    Built column by column in C (a large cluster has tens of thousands of allocations).
    """
    rows = allocations.rows
    if not rows:
        return []
    devices = allocations.device_ids
    cores = list(map(_CORES, rows))
    if None in cores:
        cores = [0.0 if c is None else c for c in cores]
    mems = list(map(_MEM_BYTES, rows))
    if None in mems:
        mems = [m / BYTES_PER_MIB if m is not None else 0.0 for m in mems]
    else:
        mems = list(map(truediv, mems, repeat(BYTES_PER_MIB)))
    known = len(core_limits)
    # Without a device series, 100 share points is the NVIDIA whole-GPU scale.
    limits = [*core_limits, *repeat(100.0, max(devices) + 1 - known)]
    on_device = list(map(limits.__getitem__, devices))
    # Whole GPU: a core limit above 0 and cores at it. ``min`` over the limits is above 0 only
    # if every limit other than NaN is (and ``c >= NaN`` is false, as the full test is).
    if min(limits) > 0:
        whole = list(map(ge, cores, on_device))
    else:
        whole = [limit > 0 and c >= limit for c, limit in zip(cores, on_device, strict=True)]
    # Each (pod, device) pair once: a pod on more than one device is multi-GPU, a device with
    # more than one pod is shared.
    pod_numbers = allocations.pod_numbers
    pairs = set(zip(pod_numbers, devices, strict=True))
    devices_of_pod = Counter(map(itemgetter(0), pairs))
    pods_of_device = Counter(map(itemgetter(1), pairs))
    multi_gpu = list(map(lt, repeat(1), map(devices_of_pod.__getitem__, pod_numbers)))
    shared = list(map(lt, repeat(1), map(pods_of_device.__getitem__, devices)))
    columns = zip(
        allocations.namespaces,
        allocations.pods,
        allocations.container_indexes,
        allocations.nodes,
        allocations.device_uuids,
        cores,
        mems,
        whole,
        multi_gpu,
        shared,
        strict=True,
    )
    return list(map(new_row, repeat(Workload), columns))


def sorted_order(keys: Sequence[tuple[str, ...]]) -> list[int]:
    """The positions of ``keys`` in ascending order (a stable sort).

    Joined with NUL, which sorts below every other character, string keys compare as their
    tuples do, and plain strings sort several times faster than tuples (10,000 workloads: 5 ms
    instead of 18). Keys with a NUL of their own are sorted as tuples: their joined form holds
    more NULs than the joins put in.
    """
    joined = list(map("\0".join, keys))
    if "".join(joined).count("\0") != sum(map(len, keys)) - len(keys):
        return sorted(range(len(keys)), key=keys.__getitem__)
    return sorted(range(len(keys)), key=joined.__getitem__)


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


class _NamespaceTally:
    """Totals of one namespace's workloads."""

    __slots__ = (
        "allocations",
        "cores",
        "devices",
        "mem_mib",
        "memory_only",
        "nodes",
        "pods",
        "whole",
    )

    def __init__(self) -> None:
        self.cores = 0.0
        self.mem_mib = 0.0
        self.allocations = 0
        self.whole = 0
        self.memory_only = 0
        self.pods: dict[str, list[float]] = {}
        self.devices: set[int] = set()
        self.nodes: set[str] = set()


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
    namespaces, pods, _, nodes, _, cores, mems, whole, _, _ = zip(*workloads, strict=True)
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
