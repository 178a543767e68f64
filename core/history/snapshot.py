"""A compact, versioned snapshot of a summary: the figures ``core.history.changes`` compares.

A snapshot keeps, per namespace, GPU model, node and pod, only the numbers that say who holds
what and what is free, plus the inconsistent GPUs and the quota use. Rows are serialised as
JSON arrays of their fields in order, not objects (a 1,000-node cluster has thousands of pods),
then zlib-compressed: a 1,000-node snapshot is a few hundred KB of JSON and far less compressed.

The serialised form carries ``SNAPSHOT_VERSION``; a snapshot of another version, or bytes that
are not a snapshot at all, raise ``SnapshotFormatError`` rather than being misread.
"""

from __future__ import annotations

import json
import math
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, TypeVar

from core.model import Summary
from core.outcomes import OutcomeCount

SNAPSHOT_VERSION = 1
# The model of a device an allocation names but the summary has no GPU row for.
UNKNOWN_MODEL = "unknown model"
# A decompressed snapshot larger than this is refused (a 10,000-node cluster stays below it).
MAX_SNAPSHOT_BYTES = 256 * 1024 * 1024


class SnapshotFormatError(ValueError):
    """Bytes that are not a snapshot this release can read; the message says why."""


@dataclass(frozen=True, slots=True)
class NamespaceFigures:
    namespace: str
    cores: float
    mem_mib: float
    pods: int
    gpus: int


@dataclass(frozen=True, slots=True)
class ModelFigures:
    """One GPU model (device type as HAMi registers it)."""

    model: str
    gpus: int
    idle: int
    partial: int
    full: int
    inconsistent: int
    free_whole: int


@dataclass(frozen=True, slots=True)
class NodeFigures:
    node: str
    gpus: int
    free_cores: float
    free_mem_mib: float
    idle: int
    partial: int
    full: int
    inconsistent: int
    free_whole: int


@dataclass(frozen=True, slots=True)
class PodFigures:
    """What one pod holds, over all its containers and devices."""

    namespace: str
    pod: str
    node: str  # the node, or several joined with "," for the rare pod that spans nodes
    gpus: int
    cores: float
    mem_mib: float


@dataclass(frozen=True, slots=True)
class ModelHolding:
    """What one namespace holds on GPUs of one model (GPU-hours per model, and their price)."""

    namespace: str
    model: str
    cores: float
    mem_mib: float


@dataclass(frozen=True, slots=True)
class PodHolding:
    """What one pod holds on GPUs of one model (its cost, priced per model). The pod is named
    by its place in ``Snapshot.pods``: repeating every pod's name would make a kept snapshot
    half as large again."""

    pod: int
    model: str
    cores: float
    mem_mib: float


@dataclass(frozen=True, slots=True)
class IdleHolding:
    """What one namespace's pods hold while their runtime data shows them idle."""

    namespace: str
    cores: float
    mem_mib: float


@dataclass(frozen=True, slots=True)
class InconsistentGpu:
    node: str
    device_index: int
    device_uuid: str
    model: str


@dataclass(frozen=True, slots=True)
class QuotaUse:
    namespace: str
    resource: str
    used: float
    limit: float | None  # None: no limit set


@dataclass(frozen=True, slots=True)
class ClusterFigures:
    nodes: int
    gpus: int
    core_limit: float
    core_allocated: float
    mem_limit_mib: float
    mem_allocated_mib: float
    free_whole_gpus: int
    pods: int


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The comparable figures of one summary, taken at ``taken_at`` (Unix seconds, UTC)."""

    taken_at: float
    cluster: str | None
    totals: ClusterFigures
    namespaces: tuple[NamespaceFigures, ...]
    models: tuple[ModelFigures, ...]
    nodes: tuple[NodeFigures, ...]
    pods: tuple[PodFigures, ...]
    inconsistent: tuple[InconsistentGpu, ...]
    quotas: tuple[QuotaUse, ...]
    version: int = SNAPSHOT_VERSION
    # The scheduler's outcome counters as read (HAMi after v2.10): two snapshots give rates.
    outcomes: tuple[OutcomeCount, ...] = ()
    # Per namespace and GPU model; empty in snapshots written before it was kept.
    holdings: tuple[ModelHolding, ...] = ()
    # Per namespace, held by pods measured idle; None: the summary had no runtime data.
    idle: tuple[IdleHolding, ...] | None = None
    # Per pod and GPU model; empty in snapshots written before it was kept.
    pod_holdings: tuple[PodHolding, ...] = ()


def summary_time(summary: Summary) -> float | None:
    """When the summary's data was taken (Unix seconds), when its source says so."""
    fetched = summary.source.fetched_at
    return fetched.timestamp() if fetched is not None else None


def snapshot_of(summary: Summary, taken_at: float) -> Snapshot:
    """The snapshot of an unfiltered ``summary``; a filtered one would read as a shrinking
    cluster, so it is refused with ``ValueError``."""
    if summary.filters:
        raise ValueError("a snapshot needs the whole cluster: summarise without a filter")
    c = summary.cluster
    totals = ClusterFigures(
        c.nodes,
        c.gpus,
        c.core_limit,
        c.core_allocated,
        c.mem_limit_mib,
        c.mem_allocated_mib,
        c.free_whole_gpus,
        c.pods,
    )
    pods = _pods(summary)
    pod_holdings = _pod_holdings(summary, pods)
    return Snapshot(
        taken_at=float(taken_at),
        cluster=summary.source.cluster,
        totals=totals,
        namespaces=tuple(
            NamespaceFigures(ns.namespace, ns.cores, ns.mem_mib, len(ns.pods), ns.gpus_touched)
            for ns in sorted(summary.namespaces, key=lambda n: n.namespace)
        ),
        models=model_figures(summary),
        nodes=tuple(
            NodeFigures(
                n.node,
                n.gpus,
                n.free_cores,
                n.free_mem_mib,
                n.idle_gpus,
                n.partial_gpus,
                n.full_gpus,
                n.inconsistent_gpus,
                n.free_whole_gpus,
            )
            for n in sorted(summary.nodes, key=lambda n: n.node)
        ),
        pods=pods,
        inconsistent=tuple(
            InconsistentGpu(g.node, g.device_index, g.device_uuid, g.device_type)
            for g in summary.gpus
            if g.state == "inconsistent"
        ),
        quotas=tuple(
            QuotaUse(ns.namespace, q.resource, q.used, q.limit)
            for ns in sorted(summary.namespaces, key=lambda n: n.namespace)
            for q in ns.quota
        ),
        outcomes=summary.outcomes.series if summary.outcomes is not None else (),
        holdings=_holdings(pods, pod_holdings),
        idle=_idle(summary),
        pod_holdings=pod_holdings,
    )


def model_figures(summary: Summary) -> tuple[ModelFigures, ...]:
    """GPU states and free whole GPUs per model (device type), by model name."""
    counts: dict[str, list[int]] = {}
    slot = {"idle": 1, "partial": 2, "full": 3, "inconsistent": 4}
    for g in summary.gpus:
        row = counts.setdefault(g.device_type, [0, 0, 0, 0, 0, 0])
        row[0] += 1
        row[slot[g.state]] += 1
        # The summary's rule: a whole GPU is free only when idle with every series known.
        if g.state == "idle" and "incomplete" not in g.flags:
            row[5] += 1
    return tuple(ModelFigures(model, *row) for model, row in sorted(counts.items()))


def _holdings(
    pods: tuple[PodFigures, ...], pod_holdings: tuple[PodHolding, ...]
) -> tuple[ModelHolding, ...]:
    """Cores and memory per (namespace, GPU model): its pods' holdings summed."""
    held: dict[tuple[str, str], list[float]] = {}
    for h in pod_holdings:
        sums = held.setdefault((pods[h.pod].namespace, h.model), [0.0, 0.0])
        sums[0] += h.cores
        sums[1] += h.mem_mib
    return tuple(
        ModelHolding(ns, model, cores, mem) for (ns, model), (cores, mem) in sorted(held.items())
    )


def _pod_holdings(summary: Summary, pods: tuple[PodFigures, ...]) -> tuple[PodHolding, ...]:
    """Cores and memory per (pod of ``pods``, GPU model); a device the summary has no row for
    counts under ``UNKNOWN_MODEL``."""
    model_of = {(g.node, g.device_uuid): g.device_type for g in summary.gpus}
    place = {(p.namespace, p.pod): n for n, p in enumerate(pods)}
    held: dict[tuple[int, str], list[float]] = {}
    for w in summary.workloads:
        model = model_of.get((w.node, w.device_uuid), UNKNOWN_MODEL)
        sums = held.setdefault((place[w.namespace, w.pod], model), [0.0, 0.0])
        sums[0] += w.cores
        sums[1] += w.mem_mib
    return tuple(
        PodHolding(pod, model, cores, mem) for (pod, model), (cores, mem) in sorted(held.items())
    )


def _idle(summary: Summary) -> tuple[IdleHolding, ...] | None:
    """Cores and memory per namespace held by the pods the summary found idle (by the vGPU
    monitor or nvidia-smi); None without runtime data, when nothing is known of use."""
    if summary.idle_allocations is None:
        return None
    idle_pods = {(i.namespace, i.pod) for i in summary.idle_allocations}
    held: dict[str, list[float]] = {}
    for w in summary.workloads:
        if (w.namespace, w.pod) in idle_pods:
            sums = held.setdefault(w.namespace, [0.0, 0.0])
            sums[0] += w.cores
            sums[1] += w.mem_mib
    return tuple(IdleHolding(ns, cores, mem) for ns, (cores, mem) in sorted(held.items()))


def _pods(summary: Summary) -> tuple[PodFigures, ...]:
    held: dict[tuple[str, str], tuple[set[str], set[str], list[float]]] = {}
    for w in summary.workloads:
        nodes, devices, sums = held.setdefault((w.namespace, w.pod), (set(), set(), [0.0, 0.0]))
        nodes.add(w.node)
        devices.add(w.device_uuid)
        sums[0] += w.cores
        sums[1] += w.mem_mib
    return tuple(
        PodFigures(ns, pod, ",".join(sorted(nodes)), len(devices), sums[0], sums[1])
        for (ns, pod), (nodes, devices, sums) in sorted(held.items())
    )


# -- serialisation ---------------------------------------------------------------------------


def _number(value: float) -> float | int:
    """Whole numbers as ints and others to 3 decimals: shorter JSON, no float noise."""
    if not math.isfinite(value):
        raise ValueError(f"a snapshot holds only finite numbers, got {value!r}")
    rounded = round(value, 3)
    return int(rounded) if rounded.is_integer() else rounded


def _row(row: Any) -> list[Any]:
    """A row's fields in order, as JSON values."""
    values = (getattr(row, f.name) for f in fields(row))
    return [_number(v) if isinstance(v, float) else v for v in values]


def snapshot_to_json(snapshot: Snapshot) -> dict[str, Any]:
    """The snapshot as plain JSON data: each table a list of rows in field order."""
    return {
        "v": snapshot.version,
        "t": snapshot.taken_at,
        "c": snapshot.cluster,
        "totals": _row(snapshot.totals),
        "ns": [_row(r) for r in snapshot.namespaces],
        "models": [_row(r) for r in snapshot.models],
        "nodes": [_row(r) for r in snapshot.nodes],
        "pods": [_row(r) for r in snapshot.pods],
        "bad": [_row(r) for r in snapshot.inconsistent],
        "quota": [_row(r) for r in snapshot.quotas],
        "out": [_row(r) for r in snapshot.outcomes],
        "held": [_row(r) for r in snapshot.holdings],
        "idle": None if snapshot.idle is None else [_row(r) for r in snapshot.idle],
        "pm": _pod_models_to_json(snapshot),
    }


def _pod_models_to_json(snapshot: Snapshot) -> dict[str, Any] | None:
    """``pod_holdings``, compactly: nearly every pod holds GPUs of one model, so ``of`` gives
    each pod's model as an index into ``names``; -1 marks a pod on several models, whose rows
    are in ``split``. (The rows in full would make a kept snapshot half as large again.)"""
    if not snapshot.pod_holdings:
        return None
    by_pod: dict[int, list[PodHolding]] = {}
    for held in snapshot.pod_holdings:
        by_pod.setdefault(held.pod, []).append(held)
    names = sorted({held.model for held in snapshot.pod_holdings})
    index = {name: n for n, name in enumerate(names)}
    of: list[int] = []
    split: list[list[Any]] = []
    for n, pod in enumerate(snapshot.pods):
        rows = by_pod.get(n, [])
        if len(rows) == 1 and (rows[0].cores, rows[0].mem_mib) == (pod.cores, pod.mem_mib):
            of.append(index[rows[0].model])
        else:
            of.append(-1)
            split.extend(_row(row) for row in rows)
    return {"names": names, "of": of, "split": split}


def _pod_models_from_json(data: Any, pods: tuple[PodFigures, ...]) -> tuple[PodHolding, ...]:
    if data is None:  # kept before pods' models were
        return ()
    bad = SnapshotFormatError("snapshot table 'pm' has the wrong shape")
    if not isinstance(data, dict):
        raise bad
    names, of = data.get("names"), data.get("of")
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise bad
    if not isinstance(of, list) or len(of) != len(pods):
        raise bad
    rows = list(_read_rows(PodHolding, data.get("split"), "pm"))
    for n, (pod, model) in enumerate(zip(pods, of, strict=True)):
        if not isinstance(model, int) or isinstance(model, bool) or not -1 <= model < len(names):
            raise bad
        if model >= 0:
            rows.append(PodHolding(n, names[model], pod.cores, pod.mem_mib))
    if any(not 0 <= row.pod < len(pods) for row in rows):
        raise bad
    return tuple(sorted(rows, key=lambda row: (row.pod, row.model)))


def encode_snapshot(snapshot: Snapshot) -> bytes:
    """Compact bytes: JSON without spaces, zlib-compressed."""
    body = json.dumps(
        snapshot_to_json(snapshot), separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    return zlib.compress(body.encode("utf-8"), 6)


def usage_part(snapshot: Snapshot) -> Snapshot:
    """What GPU-hours need of a snapshot, kept far longer than the snapshot itself: the
    totals, namespaces, models, per-model and idle holdings and quotas (no nodes, pods or
    faults: a few KB for a 1,000-node cluster instead of hundreds)."""
    return replace(snapshot, nodes=(), pods=(), inconsistent=(), outcomes=(), pod_holdings=())


def encode_snapshots(snapshots: Sequence[Snapshot]) -> bytes:
    """Several snapshots in one compressed value (one day's usage records)."""
    body = json.dumps(
        {"v": SNAPSHOT_VERSION, "all": [snapshot_to_json(s) for s in snapshots]},
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
    )
    return zlib.compress(body.encode("utf-8"), 6)


def decode_snapshots(data: bytes) -> list[Snapshot]:
    """The snapshots ``encode_snapshots`` wrote; ``SnapshotFormatError`` for anything else."""
    payload = _inflate(data)
    if not isinstance(payload, dict) or payload.get("v") != SNAPSHOT_VERSION:
        raise SnapshotFormatError(f"not a list of version {SNAPSHOT_VERSION} snapshots")
    listed = payload.get("all")
    if not isinstance(listed, list):
        raise SnapshotFormatError("the list of snapshots is missing")
    return [snapshot_from_json(item) for item in listed]


def decode_snapshot(data: bytes) -> Snapshot:
    """The snapshot ``encode_snapshot`` wrote; ``SnapshotFormatError`` for anything else."""
    return snapshot_from_json(_inflate(data))


def _inflate(data: bytes) -> Any:
    """The JSON inside compressed bytes, refused past ``MAX_SNAPSHOT_BYTES``."""
    inflater = zlib.decompressobj()
    try:
        body = inflater.decompress(data, MAX_SNAPSHOT_BYTES + 1)
    except zlib.error as error:
        raise SnapshotFormatError(f"not a compressed snapshot ({error})") from None
    if len(body) > MAX_SNAPSHOT_BYTES or inflater.unconsumed_tail:
        raise SnapshotFormatError("the snapshot is larger than any this release writes")
    try:
        return json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise SnapshotFormatError(f"the snapshot is not JSON ({error})") from None


def snapshot_from_json(payload: Any) -> Snapshot:
    """A snapshot from ``snapshot_to_json`` data, checked field by field."""
    if not isinstance(payload, dict):
        raise SnapshotFormatError("a snapshot is a JSON object")
    version = payload.get("v")
    if version != SNAPSHOT_VERSION:
        raise SnapshotFormatError(
            f"snapshot version {version!r}; this release reads version {SNAPSHOT_VERSION}"
        )
    cluster = payload.get("c")
    try:
        taken_at = _float(payload.get("t"))
    except TypeError:
        raise SnapshotFormatError("the snapshot has no time it was taken") from None
    if cluster is not None and not isinstance(cluster, str):
        raise SnapshotFormatError("the snapshot's cluster name is not text")
    pods = _read_rows(PodFigures, payload.get("pods"), "pods")
    return Snapshot(
        taken_at=taken_at,
        cluster=cluster,
        totals=_read_row(ClusterFigures, payload.get("totals"), "totals"),
        namespaces=_read_rows(NamespaceFigures, payload.get("ns"), "ns"),
        models=_read_rows(ModelFigures, payload.get("models"), "models"),
        nodes=_read_rows(NodeFigures, payload.get("nodes"), "nodes"),
        pods=pods,
        inconsistent=_read_rows(InconsistentGpu, payload.get("bad"), "bad"),
        quotas=_read_rows(QuotaUse, payload.get("quota"), "quota"),
        # Snapshots written before the outcome counters were read have no such table.
        outcomes=_read_rows(OutcomeCount, payload.get("out", []), "out"),
        holdings=_read_rows(ModelHolding, payload.get("held", []), "held"),
        # None (or absent, before it was kept): no runtime data.
        idle=(
            None
            if payload.get("idle") is None
            else _read_rows(IdleHolding, payload.get("idle"), "idle")
        ),
        pod_holdings=_pod_models_from_json(payload.get("pm"), pods),
    )


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_Row = TypeVar(
    "_Row",
    NamespaceFigures,
    ModelFigures,
    NodeFigures,
    PodFigures,
    InconsistentGpu,
    QuotaUse,
    ClusterFigures,
    OutcomeCount,
    ModelHolding,
    IdleHolding,
    PodHolding,
)


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError
    return value


def _float(value: Any) -> float:
    if not _is_number(value) or not math.isfinite(value):
        raise TypeError
    return float(value)


def _int(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError
    return value


def _optional_float(value: Any) -> float | None:
    return None if value is None else _float(value)


_READERS: dict[str, Callable[[Any], Any]] = {
    "str": _text,
    "float": _float,
    "int": _int,
    "float | None": _optional_float,
}


def _readers(kind: type[_Row]) -> list[Callable[[Any], Any]]:
    """One converter per field, from the row class's annotations (their text)."""
    return [_READERS[str(f.type)] for f in fields(kind)]


def _read_row(kind: type[_Row], row: Any, table: str) -> _Row:
    return _read_rows(kind, [row], table)[0]


def _read_rows(kind: type[_Row], rows: Any, table: str) -> tuple[_Row, ...]:
    if not isinstance(rows, list):
        raise SnapshotFormatError(f"snapshot table {table!r} is missing")
    readers = _readers(kind)
    width = len(readers)
    out: list[_Row] = []
    for row in rows:
        if not isinstance(row, list) or len(row) != width:
            raise SnapshotFormatError(f"snapshot table {table!r} has a row of the wrong shape")
        try:
            out.append(kind(*[read(value) for read, value in zip(readers, row, strict=True)]))
        except TypeError:
            raise SnapshotFormatError(
                f"snapshot table {table!r} has a value of the wrong kind"
            ) from None
    return tuple(out)
