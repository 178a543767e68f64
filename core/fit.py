"""``fit``: where would a job of this shape be placed now, by HAMi's rules?

Per GPU, a *slice* is what one GPU of the job takes: the shape's cores and memory. A GPU holds as
many slices as its free cores and free memory allow, following HAMi's device filter
(``pkg/device/nvidia``, ``Fit``):

* the device type must contain the shape's model, ignoring case (HAMi's ``use-gputype``). Any
  substring matches; so do its parts (split at ``-``, ``_`` and spaces) found in order, so
  ``H100``, ``A100-SXM4`` and ``A100-80GB`` all match ``NVIDIA A100-SXM4-80GB``;
* free memory >= the slice's memory, free cores >= its cores;
* a 100-core slice wants the GPU to itself: no task may be on it (``shared_count`` 0);
* a 0-core slice cannot go to a GPU whose cores are all allocated;
* with a split count (HAMi's ``deviceSplitCount``, not exported in metrics, so given by the
  caller), a GPU holds at most that many tasks.

HAMi places all GPUs of one container on one node, on distinct GPUs. A node's *placements* is
how many jobs of the shape could start there at once (each on N distinct GPUs, slices stacking
on a GPU while it has room); the cluster's placements is the sum over nodes, counted the way
the capacity outlook counts its shapes. Not "nodes it fits on" (that is ``len(nodes)``) nor
"ways to choose the GPUs" (which grows combinatorially and answers no planning question).
GPUs with a missing limit or allocation series ("incomplete") hold nothing: their free capacity
is not known.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import groupby
from operator import attrgetter

from core.fit_reason import explain
from core.fit_shape import Shape
from core.fit_slices import fragmented, jobs_from_slices, model_matches, slices_on
from core.model import GpuSummary


@dataclass(frozen=True, slots=True)
class ChosenGpu:
    index: int
    uuid: str
    model: str


@dataclass(frozen=True, slots=True)
class NodeFit:
    """A node the shape fits on now, and the GPUs the first job would take there."""

    node: str
    placements: int
    gpus_fitting: int  # GPUs that can hold at least one slice
    fragmented_after: int  # GPUs of the node partly allocated after placing one job
    chosen: tuple[ChosenGpu, ...]


@dataclass(frozen=True, slots=True)
class FitResult:
    shape: Shape
    models: tuple[tuple[str, int], ...]  # models present: (device_type, GPUs), most first
    matched: tuple[tuple[str, int], ...]  # models the shape's model matches
    placements: int
    nodes: tuple[NodeFit, ...]  # every node it fits on, best first
    reason: str | None  # why it does not fit; None when it fits
    closest: str | None  # what comes nearest, when it does not fit
    split_count: int | None = None

    @property
    def fits(self) -> bool:
        return self.placements > 0


def _node_fit(
    node: str, gpus: Sequence[GpuSummary], slices: Sequence[int], shape: Shape
) -> NodeFit | None:
    placements = jobs_from_slices(slices, shape.gpus)
    if placements == 0:
        return None
    before = sum(fragmented(g) for g in gpus)
    candidates = []
    for gpu, count in zip(gpus, slices, strict=True):
        if count:
            mem = shape.mem_needed_mib(gpu.mem_limit_mib)
            delta = int(fragmented(gpu, shape.cores_per_gpu, mem)) - int(fragmented(gpu))
            # Fewest new fragments first, then the tightest fit (least free memory).
            candidates.append((delta, gpu.free_mem_mib, gpu.device_index, gpu))
    candidates.sort(key=lambda c: c[:3])
    chosen = candidates[: shape.gpus]
    return NodeFit(
        node=node,
        placements=placements,
        gpus_fitting=len(candidates),
        fragmented_after=before + sum(c[0] for c in chosen),
        chosen=tuple(
            ChosenGpu(g.device_index, g.device_uuid, g.device_type)
            for *_, g in sorted(chosen, key=lambda c: c[2])
        ),
    )


def _models(gpus: Sequence[GpuSummary]) -> tuple[tuple[str, int], ...]:
    counts: dict[str, int] = {}
    for gpu in gpus:
        counts[gpu.device_type] = counts.get(gpu.device_type, 0) + 1
    return tuple(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def fit_shape(
    gpus: Sequence[GpuSummary], shape: Shape, *, split_count: int | None = None
) -> FitResult:
    """Where ``shape`` fits among ``gpus`` (a summary's GPU table, any order)."""
    models = _models(gpus)
    if shape.model is not None:
        matched = tuple(m for m in models if model_matches(shape.model, m[0]))
    else:
        matched = models
    names = {m[0] for m in matched}
    candidates = [g for g in gpus if g.device_type in names]
    fits: list[NodeFit] = []
    by_node = sorted(gpus, key=attrgetter("node", "device_index", "device_uuid"))
    for node, group in groupby(by_node, key=attrgetter("node")):
        node_gpus = list(group)
        slices = [
            slices_on(g, shape, split_count) if g.device_type in names else 0 for g in node_gpus
        ]
        found = _node_fit(node, node_gpus, slices, shape)
        if found is not None:
            fits.append(found)
    fits.sort(key=lambda f: (f.fragmented_after, f.node))
    placements = sum(f.placements for f in fits)
    reason = closest = None
    if not fits:
        reason, closest = explain(gpus, candidates, models, shape, split_count)
    return FitResult(shape, models, matched, placements, tuple(fits), reason, closest, split_count)
