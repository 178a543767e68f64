"""Each HAMi reason checked against the current allocation: the figures nobody else joins.

HAMi's verdict is about the scheduler's cache when it filtered; the summary is the allocation
now. Where the two agree the figures say how far the request is from fitting; where they
disagree (HAMi says memory is short, the figures show room) that is said with both numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from core.fit import fit_shape
from core.fit_reason import memory_text
from core.fit_shape import Shape
from core.fit_slices import EPS, model_matches, slices_on, usable
from core.model import GpuSummary, NamespaceSummary
from core.pending.request import CORES, MEMORY

# HAMi's default deviceSplitCount (most tasks per GPU); the metrics do not carry it.
DEFAULT_SPLIT_COUNT = 10


@dataclass(frozen=True, slots=True)
class Finding:
    code: str
    lines: tuple[str, ...]
    contradicts: bool = False  # the figures show room where HAMi found none


def allowed_gpus(
    gpus: Sequence[GpuSummary], models: Sequence[str], avoid: Sequence[str]
) -> list[GpuSummary]:
    """The GPUs of a model the pod allows (``use-gputype`` / ``nouse-gputype``)."""
    return [
        gpu
        for gpu in gpus
        if (not models or any(model_matches(m, gpu.device_type) for m in models))
        and not any(model_matches(m, gpu.device_type) for m in avoid)
    ]


def check_memory(shape: Shape, gpus: Sequence[GpuSummary]) -> Finding:
    code = "CardInsufficientMemory"
    live = [g for g in gpus if usable(g)]
    if not live:
        return Finding(code, ("No GPU of an allowed model with known free memory.",))
    asked = max(shape.mem_needed_mib(g.mem_limit_mib) for g in live)
    largest = max(g.free_mem_mib for g in live)
    taking = sum(1 for g in live if slices_on(g, shape) > 0)
    lines = [
        f"Asked {memory_text(asked)} per GPU; the most free on one GPU now is "
        f"{memory_text(largest)} ({taking:,} of {len(live):,} allowed GPUs would take it)."
    ]
    best = _largest_fitting(
        live, shape, key=lambda g: g.free_mem_mib, enough=lambda g: _cores_room(g, shape)
    )
    if best is not None:
        value, nodes = best
        lines.append(f"This shape fits now on {_nodes(nodes)} at <= {memory_text(value)} per GPU.")
    return _with_contradiction(code, lines, shape, live)


def check_cores(shape: Shape, gpus: Sequence[GpuSummary]) -> Finding:
    code = "CardInsufficientCore"
    live = [g for g in gpus if usable(g)]
    if not live:
        return Finding(code, ("No GPU of an allowed model with known free cores.",))
    largest = max(g.free_cores for g in live)
    taking = sum(1 for g in live if slices_on(g, shape) > 0)
    lines = [
        f"Asked {shape.cores_per_gpu} cores per GPU; the most free on one GPU now is "
        f"{largest:,.0f} ({taking:,} of {len(live):,} allowed GPUs would take it)."
    ]
    best = _largest_fitting(
        live, shape, key=lambda g: g.free_cores, enough=lambda g: _memory_room(g, shape)
    )
    if best is not None:
        value, nodes = best
        lines.append(f"This shape fits now on {_nodes(nodes)} at <= {value:,.0f} cores per GPU.")
    return _with_contradiction(code, lines, shape, live)


def check_device_count(code: str, shape: Shape, gpus: Sequence[GpuSummary]) -> Finding:
    """``NodeInsufficientDevice`` / ``AllocatedCardsInsufficientRequest``: GPUs per node."""
    one = replace(shape, gpus=1)
    per_node: dict[tuple[str, str], int] = {}
    for gpu in gpus:
        if slices_on(gpu, one) > 0:
            key = (gpu.device_type, gpu.node)
            per_node[key] = per_node.get(key, 0) + 1
    if not per_node:
        return Finding(
            code,
            (f"Asked {shape.gpus:,} GPUs on one node; no GPU of an allowed model takes one now.",),
        )
    best: dict[str, tuple[int, str]] = {}
    for (model, node), count in per_node.items():
        if count > best.get(model, (0, ""))[0]:
            best[model] = (count, node)
    lines = [f"Asked {shape.gpus:,} GPUs on one node; most that would take one GPU of it now:"]
    lines += [
        f"  {model}: {count:,} on {node}"
        for model, (count, node) in sorted(best.items(), key=lambda kv: -kv[1][0])
    ]
    return _with_contradiction(code, lines, shape, gpus)


def check_time_slicing(gpus: Sequence[GpuSummary], split_count: int | None) -> Finding:
    limit = split_count or DEFAULT_SPLIT_COUNT
    live = [g for g in gpus if usable(g)]
    full = sum(1 for g in live if g.shared_count >= limit)
    assumed = (
        ""
        if split_count
        else f" (HAMi's default deviceSplitCount {DEFAULT_SPLIT_COUNT}, not in the metrics)"
    )
    return Finding(
        "CardTimeSlicingExhausted",
        (
            f"{full:,} of {len(live):,} allowed GPUs are at {limit} tasks{assumed}; "
            f"{len(live) - full:,} have a slot.",
        ),
    )


def check_quota(
    namespace: str, shape: Shape, gpus: Sequence[GpuSummary], namespaces: Sequence[NamespaceSummary]
) -> Finding:
    code = "ResourceQuotaNotFit"
    found = next((n for n in namespaces if n.namespace == namespace), None)
    if found is None or not found.quota:
        return Finding(
            code,
            (f"The metrics hold no quota figures for namespace {namespace or '(not given)'}.",),
        )
    device_mem = max((g.mem_limit_mib for g in gpus if usable(g)), default=0.0)
    asked = {
        MEMORY: shape.gpus * shape.mem_needed_mib(device_mem),
        CORES: float(shape.gpus * shape.cores_per_gpu),
    }
    lines = []
    for figure in found.quota:
        adds = asked.get(figure.resource, 0.0)
        limit = "no limit" if figure.limit is None else f"{figure.limit:,.0f}"
        after = figure.used + adds
        over = figure.limit is not None and after > figure.limit + EPS
        lines.append(
            f"{figure.resource}: {figure.used:,.0f} used of {limit}; "
            f"this pod would bring it to {after:,.0f}" + (" (over)" if over else "")
        )
    return Finding(code, tuple(lines))


def check_models(
    code: str,
    models: Sequence[str],
    avoid: Sequence[str],
    uuids: Sequence[str],
    gpus: Sequence[GpuSummary],
) -> Finding:
    present = sorted({g.device_type for g in gpus})
    lines = [f"Models present: {', '.join(present) or 'none'}."]
    if models:
        matching = [m for m in present if any(model_matches(q, m) for q in models)]
        lines.append(
            f"The pod asks for {', '.join(models)}: "
            f"{', '.join(matching) or 'no model present matches'}."
        )
    if avoid:
        lines.append(f"The pod avoids {', '.join(avoid)}.")
    if uuids:
        known = {g.device_uuid for g in gpus}
        missing = [u for u in uuids if u not in known]
        lines.append(
            f"{len(uuids) - len(missing):,} of the {len(uuids):,} GPU UUIDs "
            "the pod names are present."
        )
    return Finding(code, tuple(lines))


def _nodes(count: int) -> str:
    return f"{count:,} node" + ("s" if count != 1 else "")


def _cores_room(gpu: GpuSummary, shape: Shape) -> bool:
    return gpu.free_cores + EPS >= shape.cores_per_gpu and (
        shape.cores_per_gpu < 100 or gpu.shared_count == 0
    )


def _memory_room(gpu: GpuSummary, shape: Shape) -> bool:
    return gpu.free_mem_mib + EPS >= shape.mem_needed_mib(gpu.mem_limit_mib)


def _largest_fitting(
    gpus: Sequence[GpuSummary],
    shape: Shape,
    *,
    key: Callable[[GpuSummary], float],
    enough: Callable[[GpuSummary], bool],
) -> tuple[float, int] | None:
    """The largest value per GPU (free memory or cores) that ``shape.gpus`` GPUs of one node
    all have now (the others of the shape's request met), and on how many nodes it is found."""
    per_node: dict[str, list[float]] = {}
    for gpu in gpus:
        if enough(gpu):
            per_node.setdefault(gpu.node, []).append(key(gpu))
    nth = [
        sorted(values, reverse=True)[shape.gpus - 1]
        for values in per_node.values()
        if len(values) >= shape.gpus
    ]
    nth = [value for value in nth if value > EPS]
    if not nth:
        return None
    best = max(nth)
    return best, sum(1 for value in nth if value + EPS >= best)


def _with_contradiction(
    code: str, lines: list[str], shape: Shape, gpus: Sequence[GpuSummary]
) -> Finding:
    fit = fit_shape(gpus, shape)
    if not fit.fits:
        return Finding(code, tuple(lines))
    lines.append(
        f"The figures now show room: the request fits on {_nodes(len(fit.nodes))} "
        f"(first {fit.nodes[0].node}). HAMi's cache was stale "
        "when it filtered, or the allocation has changed since; the pod should schedule on its "
        "next try."
    )
    return Finding(code, tuple(lines), contradicts=True)
