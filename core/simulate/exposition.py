"""The HAMi scheduler's ``/metrics`` text for a simulated cluster, as the Go client writes it.

HAMi v2.10 ``cmd/scheduler/metrics.go`` with client_golang (text format 0.0.4): every family a
gauge with HELP/TYPE, families sorted bytewise by name, labels sorted by name, samples sorted by
their label values, ``zone="vGPU"`` on every series but ``hami_build_info`` (HAMi wraps its
registry with that constant label), numbers as Go ``strconv.FormatFloat(f, 'g', -1, 64)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Final

from core.simulate.cluster import (
    MIB_BYTES,
    DeviceTotals,
    SimulatedAllocation,
    SimulatedCluster,
    SimulatedDevice,
    SimulatedQuota,
)

BUILD_INFO: Final[tuple[tuple[str, str], ...]] = (
    ("build_date", "20260821-06:31:02"),
    ("compiler", "gc"),
    ("go_version", "go1.26.6"),
    ("platform", "linux/amd64"),
    ("revision", "4707fb02c91c545bc7343ce26dba4c32919f9a3e"),
    ("version", "v2.10.0"),
)


_FLOAT_CACHE: dict[float, str] = {}


def go_float(value: float) -> str:
    """Format like Go ``strconv.FormatFloat(value, 'g', -1, 64)`` (expfmt's number format).

    Shortest round-trip digits (Python's ``repr`` gives the same digits), exponent form when the
    decimal exponent is < -4 or >= 6 ("use precision 6 for this decision" in Go's ftoa.go), the
    exponent with a sign and at least two digits: 1e+06, 4.294967296e+10, 0.7666666666666667.
    """
    if value == 0:  # also -0.0, which compares equal to 0.0 and would share its cache entry
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    cached = _FLOAT_CACHE.get(value)
    if cached is not None:
        return cached
    text = _go_float_uncached(value)
    if len(_FLOAT_CACHE) < 100_000:
        _FLOAT_CACHE[value] = text
    return text


def _go_float_uncached(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    sign = "-" if value < 0 else ""
    mantissa, _, exp_text = repr(abs(value)).partition("e")
    int_part, _, frac_part = mantissa.partition(".")
    raw_digits = int_part + frac_part
    stripped = raw_digits.lstrip("0")
    leading_zeros = len(raw_digits) - len(stripped)
    # value = 0.DIGITS x 10^point, as Go's decimal type keeps it (digs.dp).
    point = len(int_part) - leading_zeros + (int(exp_text) if exp_text else 0)
    digits = stripped.rstrip("0") or "0"
    exponent = point - 1
    if exponent < -4 or exponent >= 6:
        head = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        exp_sign = "-" if exponent < 0 else "+"
        return f"{sign}{head}e{exp_sign}{abs(exponent):02d}"
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return f"{sign}{digits}{'0' * (point - len(digits))}"
    return f"{sign}{digits[:point]}.{digits[point:]}"


def _escape_label_value(value: str) -> str:
    # Text format 0.0.4: backslash, double quote and line feed are escaped in label values.
    if "\\" in value or '"' in value or "\n" in value:
        return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return value


# --------------------------------------------------------------------------------------------
# Families: (name, HELP, label names in print order) for the current and legacy surfaces
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Family:
    name: str
    help: str
    labels: tuple[str, ...]  # sorted by name, ``zone`` included where HAMi wraps the registry


def _family(name: str, help_text: str, *labels: str, zone: bool = True) -> _Family:
    names = (*labels, "zone") if zone else labels
    return _Family(name, help_text, tuple(sorted(names)))


_DEVICE_LABELS_CURRENT = ("node", "device_uuid", "device_index", "device_type")
_DEVICE_LABELS_LEGACY = ("nodeid", "deviceuuid", "deviceidx", "devicetype")
_POD_LABELS_CURRENT = ("namespace", "node", "pod", "container_index", "device_uuid")
_POD_LABELS_LEGACY = ("podnamespace", "nodename", "podname", "containeridx", "deviceuuid")

_HELP_MEM_LIMIT = "Device memory limit for a certain GPU"
_HELP_MEM_ALLOC = "Device memory allocated for a certain GPU"
_HELP_SHARED = "Number of containers sharing this GPU"
_HELP_CORE_ALLOC = "Device core allocated for a certain GPU"
_HELP_OVERVIEW = "GPU overview on a certain node"
_HELP_MEM_RATIO = "GPU Memory Allocated Percentage on a certain GPU"
_HELP_QUOTA_USED = "resourcequota usage for a certain device"
_HELP_VGPU_MEM = "vGPU memory allocated from a container"
_HELP_VGPU_CORE = "vGPU core allocated from a container"

BUILD_INFO_FAMILY: Final = _family(
    "hami_build_info",
    "hami build metadata exposed as labels with a constant value of 1.",
    *(k for k, _ in BUILD_INFO),
    zone=False,
)

# The semantic role of each family, so one renderer writes both surfaces.
_CURRENT: Final[dict[str, _Family]] = {
    "mem_limit": _family("hami_gpu_memory_limit_bytes", _HELP_MEM_LIMIT, *_DEVICE_LABELS_CURRENT),
    "core_limit": _family(
        "hami_gpu_core_limit_ratio", "Device core limit for a certain GPU", *_DEVICE_LABELS_CURRENT
    ),
    "mem_alloc": _family(
        "hami_gpu_memory_allocated_bytes", _HELP_MEM_ALLOC, *_DEVICE_LABELS_CURRENT, "device_cores"
    ),
    "shared": _family("hami_gpu_shared_count", _HELP_SHARED, *_DEVICE_LABELS_CURRENT),
    "core_alloc": _family(
        "hami_gpu_core_allocated_ratio", _HELP_CORE_ALLOC, *_DEVICE_LABELS_CURRENT
    ),
    "overview": _family(
        "hami_node_gpu_overview",
        _HELP_OVERVIEW,
        *_DEVICE_LABELS_CURRENT,
        "device_cores",
        "device_memory_limit",
    ),
    "mem_ratio": _family(
        "hami_node_gpu_memory_allocated_ratio", _HELP_MEM_RATIO, *_DEVICE_LABELS_CURRENT
    ),
    "quota_used": _family(
        "hami_resource_quota_used", _HELP_QUOTA_USED, "namespace", "quota_name", "limit"
    ),
    "quota_limit": _family(
        "hami_resource_quota_limit",
        "resourcequota limit for a certain device",
        "namespace",
        "quota_name",
    ),
    "vgpu_mem": _family("hami_vgpu_memory_allocated_bytes", _HELP_VGPU_MEM, *_POD_LABELS_CURRENT),
    "vgpu_core": _family("hami_vgpu_core_allocated_ratio", _HELP_VGPU_CORE, *_POD_LABELS_CURRENT),
}

# Legacy twins (``--legacy-metrics=true``); the quota limit has none, and the memory
# percentage has no ``devicetype`` label.
_LEGACY: Final[dict[str, _Family]] = {
    "mem_limit": _family("GPUDeviceMemoryLimit", _HELP_MEM_LIMIT, *_DEVICE_LABELS_LEGACY),
    "core_limit": _family(
        "GPUDeviceCoreLimit", "Device memory core limit for a certain GPU", *_DEVICE_LABELS_LEGACY
    ),
    "mem_alloc": _family(
        "GPUDeviceMemoryAllocated", _HELP_MEM_ALLOC, *_DEVICE_LABELS_LEGACY, "devicecores"
    ),
    "shared": _family("GPUDeviceSharedNum", _HELP_SHARED, *_DEVICE_LABELS_LEGACY),
    "core_alloc": _family("GPUDeviceCoreAllocated", _HELP_CORE_ALLOC, *_DEVICE_LABELS_LEGACY),
    "overview": _family(
        "nodeGPUOverview",
        _HELP_OVERVIEW,
        *_DEVICE_LABELS_LEGACY,
        "devicecores",
        "devicememorylimit",
    ),
    "mem_ratio": _family(
        "nodeGPUMemoryPercentage", _HELP_MEM_RATIO, "nodeid", "deviceuuid", "deviceidx"
    ),
    "quota_used": _family("QuotaUsed", _HELP_QUOTA_USED, "quotanamespace", "quotaName", "limit"),
    "vgpu_mem": _family("vGPUMemoryAllocated", _HELP_VGPU_MEM, *_POD_LABELS_LEGACY),
    "vgpu_core": _family("vGPUCoreAllocated", _HELP_VGPU_CORE, *_POD_LABELS_LEGACY),
}

# Map each surface's label name to the role it plays, so label values are looked up by role.
_LABEL_ROLE: Final[dict[str, str]] = {
    "node": "node", "nodeid": "node", "nodename": "node",
    "device_uuid": "uuid", "deviceuuid": "uuid",
    "device_index": "index", "deviceidx": "index",
    "device_type": "type", "devicetype": "type",
    "device_cores": "core_limit", "devicecores": "core_limit",
    "device_memory_limit": "mem_limit", "devicememorylimit": "mem_limit",
    "namespace": "namespace", "podnamespace": "namespace", "quotanamespace": "namespace",
    "pod": "pod", "podname": "pod",
    "container_index": "container_index", "containeridx": "container_index",
    "quota_name": "resource", "quotaName": "resource",
    "limit": "limit",
    "zone": "zone",
    **{name: name for name, _ in BUILD_INFO},  # hami_build_info labels keep their own names
}  # fmt: skip


def _series(family: _Family, rows: Iterable[tuple[dict[str, str], float]]) -> tuple[str, list[str]]:
    """Sorted sample lines of one family; rows are (label values by role, value)."""
    roles = [_LABEL_ROLE[name] for name in family.labels]
    prefixes = [f'{name}="' for name in family.labels]
    keyed: list[tuple[tuple[str, ...], str]] = []
    for values, number in rows:
        key = tuple(values[r] for r in roles)
        pairs = ",".join(
            p + _escape_label_value(v) + '"' for p, v in zip(prefixes, key, strict=True)
        )
        keyed.append((key, f"{family.name}{{{pairs}}} {go_float(number)}"))
    # client_golang sorts samples by their label values, in (sorted) label-name order.
    keyed.sort(key=lambda kv: kv[0])
    return family.name, [line for _, line in keyed]


# What the replica says of itself (HAMi after v2.10): (is leader, cache synced).
REPLICA_STATES: dict[str, tuple[int, int]] = {
    "leader": (1, 1),
    "standby": (0, 1),
    "unsynced": (1, 0),
}
_REPLICA_HELP = {
    "hami_scheduler_is_leader": "1 when this instance is the active leader, 0 otherwise",
    "hami_scheduler_cache_synced": (
        "1 when the internal node/device cache is fully synced, 0 otherwise"
    ),
}


# The allocation outcome counters (HAMi after v2.10, PR #3088; pkg/metrics/scheduler.go): help
# text, and per series its labels and its count as a function of the cluster's GPUs and drift
# step, so the counts only grow as the simulated cluster drifts. Every series has the three
# labels (``failure_reason="none"`` on successes) and no ``zone``; a counter never incremented
# writes no series at all (a Go CounterVec without children), as reconciliation errors here.
_OUTCOME_HELP = {
    "hami_scheduler_allocations_total": "Successful HAMi device allocations.",
    "hami_scheduler_allocation_failures_total": "HAMi device allocation failures.",
    "hami_scheduler_bind_rollbacks_total": (
        "HAMi bind operations that released a reservation after failure."
    ),
    "hami_scheduler_stale_reservations_total": (
        "Stale HAMi device reservations encountered or removed."
    ),
}
_OutcomeSeries = tuple[str, str, str, Callable[[int, int], int]]
_OUTCOME_SERIES: tuple[_OutcomeSeries, ...] = (
    ("hami_scheduler_allocations_total", "filter", "none", lambda g, t: 2 * g + 5 * t),
    ("hami_scheduler_allocation_failures_total", "filter", "no_fit", lambda g, t: g // 8 + 2 * t),
    ("hami_scheduler_allocation_failures_total", "filter", "lookup", lambda g, t: g // 16 + t),
    ("hami_scheduler_allocation_failures_total", "bind", "lock", lambda g, t: t // 3),
    ("hami_scheduler_bind_rollbacks_total", "bind", "lock", lambda g, t: t // 3),
    ("hami_scheduler_stale_reservations_total", "reconcile", "stale", lambda g, t: t // 10),
)


def _outcome_blocks(cluster: SimulatedCluster) -> dict[str, list[str]]:
    """The outcome counters' sample lines, labels in the Go client's (sorted) order."""
    gpus = len(cluster.devices)
    series: dict[str, list[tuple[str, str, int]]] = {}
    for name, phase, reason, count in _OUTCOME_SERIES:
        value = count(gpus, cluster.step)
        if value:  # a child exists once incremented; a family without one writes nothing
            series.setdefault(name, []).append((reason, phase, value))
    # Within a family, series in the order of their label values, as the Go client sorts them.
    return {
        name: [
            f'{name}{{device_type="NVIDIA",failure_reason="{reason}",phase="{phase}"}} {value}'
            for reason, phase, value in sorted(rows)
        ]
        for name, rows in series.items()
    }


def render_exposition(
    cluster: SimulatedCluster,
    *,
    legacy: bool = False,
    both: bool = False,
    replica: str | None = None,
    outcomes: bool = False,
) -> str:
    """The scheduler's ``/metrics`` body for ``cluster``.

    ``replica`` (a key of ``REPLICA_STATES``) adds the replica's own gauges, and ``outcomes``
    the allocation outcome counters, as HAMi after v2.10 writes them; without them the body
    is what v2.10 and older write.

    Default: current names (``--legacy-metrics=false``). ``both``: current and legacy names, as
    ``--legacy-metrics=true`` emits them. ``legacy``: legacy names only (plus build info), the
    shape of older schedulers' output.
    """
    if legacy and both:
        raise ValueError("choose legacy=True or both=True, not both")
    surfaces: list[dict[str, _Family]] = [_LEGACY] if legacy else [_CURRENT]
    if both:
        surfaces.append(_LEGACY)
    device_rows, pod_rows, quota_rows = _label_rows(cluster)
    blocks: dict[str, list[str]] = {}
    for fam in surfaces:
        for name, lines in _device_families(fam, device_rows):
            blocks[name] = lines
        blocks.update(_quota_families(fam, quota_rows))
        blocks.update(_pod_families(fam, pod_rows))
    blocks[BUILD_INFO_FAMILY.name] = _series(BUILD_INFO_FAMILY, [(_build_info_values(), 1.0)])[1]

    helps = {f.name: f.help for s in surfaces for f in s.values()}
    helps[BUILD_INFO_FAMILY.name] = BUILD_INFO_FAMILY.help
    if replica is not None:
        leader, synced = REPLICA_STATES[replica]
        blocks["hami_scheduler_is_leader"] = [f"hami_scheduler_is_leader {leader}"]
        blocks["hami_scheduler_cache_synced"] = [f"hami_scheduler_cache_synced {synced}"]
        helps.update(_REPLICA_HELP)
    if outcomes:
        blocks.update(_outcome_blocks(cluster))
        helps.update(_OUTCOME_HELP)
    out: list[str] = []
    for name in sorted(blocks):  # bytewise: GPUDevice*, QuotaUsed, hami_*, nodeGPU*, vGPU*
        out.append(f"# HELP {name} {helps[name]}")
        out.append(f"# TYPE {name} {'counter' if name in _OUTCOME_HELP else 'gauge'}")
        out.extend(blocks[name])
    out.append("")
    return "\n".join(out)


_DeviceRow = tuple[dict[str, str], SimulatedDevice, DeviceTotals]
_PodRow = tuple[dict[str, str], SimulatedAllocation]
_QuotaRow = tuple[dict[str, str], SimulatedQuota]


def _label_rows(
    cluster: SimulatedCluster,
) -> tuple[list[_DeviceRow], list[_PodRow], list[_QuotaRow]]:
    """The label values of each device, pod allocation and quota, with what they describe."""
    totals = cluster.device_totals()
    device_rows: list[_DeviceRow] = []
    for d in cluster.devices:
        values = {
            "node": d.node,
            "uuid": d.uuid,
            "index": str(d.index),
            "type": d.device_type,
            # v2.10 prints the device's total cores in device_cores (up to v2.9: cores in use).
            "core_limit": str(d.core_limit),
            "mem_limit": str(d.mem_limit_mib),
            "zone": "vGPU",
        }
        device_rows.append((values, d, totals[d.uuid]))
    pod_rows = [
        (
            {
                "namespace": a.namespace,
                "node": a.node,
                "pod": a.pod,
                "container_index": "0",
                "uuid": a.device_uuid,
                "zone": "vGPU",
            },
            a,
        )
        for a in cluster.allocations
    ]
    quota_rows = [
        (
            {
                "namespace": q.namespace,
                "resource": q.resource,
                "limit": str(q.limit or 0),
                "zone": "vGPU",
            },
            q,
        )
        for q in cluster.quotas()
    ]
    return device_rows, pod_rows, quota_rows


def _quota_families(fam: dict[str, _Family], quota_rows: list[_QuotaRow]) -> dict[str, list[str]]:
    blocks = {}
    name, lines = _series(fam["quota_used"], ((v, float(q.used)) for v, q in quota_rows))
    if lines:
        blocks[name] = lines
    if "quota_limit" in fam:
        # HAMi writes the limit family only for quotas that set a limit; an absent family
        # prints nothing, not even its HELP and TYPE lines.
        limited = ((v, float(q.limit)) for v, q in quota_rows if q.limit is not None)
        name, lines = _series(fam["quota_limit"], limited)
        if lines:
            blocks[name] = lines
    return blocks


def _pod_families(fam: dict[str, _Family], pod_rows: list[_PodRow]) -> dict[str, list[str]]:
    blocks = {}
    for role, attr in (("vgpu_mem", "mem"), ("vgpu_core", "cores")):
        rows = (
            (v, float(a.mem_mib * MIB_BYTES) if attr == "mem" else float(a.cores))
            for v, a in pod_rows
        )
        name, lines = _series(fam[role], rows)
        if lines:
            blocks[name] = lines
    return blocks


def _build_info_values() -> dict[str, str]:
    return dict(BUILD_INFO)


def _device_families(
    fam: dict[str, _Family],
    device_rows: list[tuple[dict[str, str], SimulatedDevice, DeviceTotals]],
) -> Iterator[tuple[str, list[str]]]:
    if not device_rows:
        return
    yield _series(
        fam["mem_limit"], ((v, float(d.mem_limit_mib * MIB_BYTES)) for v, d, _ in device_rows)
    )
    yield _series(fam["core_limit"], ((v, float(d.core_limit)) for v, d, _ in device_rows))
    yield _series(fam["mem_alloc"], ((v, float(t.mem_mib * MIB_BYTES)) for v, _, t in device_rows))
    yield _series(fam["shared"], ((v, float(t.shared_count)) for v, _, t in device_rows))
    yield _series(fam["core_alloc"], ((v, float(t.cores)) for v, _, t in device_rows))
    # The overview's value is the allocated memory in bytes, its limit label MiB.
    yield _series(fam["overview"], ((v, float(t.mem_mib * MIB_BYTES)) for v, _, t in device_rows))
    # Usedmem / Totalmem as a 0-1 fraction; omitted when Totalmem <= 0.
    yield _series(
        fam["mem_ratio"],
        ((v, t.mem_mib / d.mem_limit_mib) for v, d, t in device_rows if d.mem_limit_mib > 0),
    )
