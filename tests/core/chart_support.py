"""Summaries and figure inspection for the chart tests.

Summaries come from the summary engine run on simulated scheduler text (with the simulator's
ground truth beside them), and, for cases the simulator never produces (overcommitted or
incomplete devices, devices whose total exceeds their pod series), from ``Summary`` objects
built by hand.
"""

from __future__ import annotations

import io
import itertools
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import Any

import numpy as np
from matplotlib.image import imread
from matplotlib.text import Text

from core.api import summarize_text
from core.model import (
    ClusterOverview,
    GpuState,
    GpuSummary,
    InputReport,
    NamespaceSummary,
    NodeSummary,
    QuotaFigure,
    SourceInfo,
    Summary,
    Workload,
)
from core.simulate import SimulatedCluster, render_exposition, simulate_cluster
from core.views import palette

# How tall Slack shows an image in a message, in pixels.
SLACK_PREVIEW_PX = 360
# The smallest text, in pixels, that stays readable when Slack shows the chart 360 px tall.
MIN_SLACK_PX = 7.0
# The colours that mean something other than a namespace: no namespace may be drawn in one.
GREYS = frozenset(
    {
        palette.OTHER_COLOUR,
        palette.UNATTRIBUTED_COLOUR,
        palette.FRAGMENT_COLOUR,
        palette.FREE_COLOUR,
        palette.UNKNOWN_COLOUR,
    }
)

SCRAPED = datetime(2026, 8, 21, 6, 30, tzinfo=UTC)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@dataclass(frozen=True)
class Simulated:
    cluster: SimulatedCluster
    summary: Summary


@cache
def simulated(nodes: int, gpus_per_node: int, seed: int = 1) -> Simulated:
    cluster = simulate_cluster(nodes, gpus_per_node, seed=seed)
    source = SourceInfo(kind="paste", label=f"sim {nodes}x{gpus_per_node}", fetched_at=SCRAPED)
    return Simulated(cluster, summarize_text(render_exposition(cluster), source))


@cache
def filtered(
    nodes: int, gpus_per_node: int, *, namespace: str | None = None, node: str | None = None
) -> Summary:
    cluster = simulated(nodes, gpus_per_node).cluster
    source = SourceInfo(kind="paste", label=f"sim {nodes}x{gpus_per_node}", fetched_at=SCRAPED)
    return summarize_text(render_exposition(cluster), source, namespace=namespace, node=node)


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_SIGNATURE
    assert data[12:16] == b"IHDR"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def pixels(data: bytes) -> np.ndarray:
    return np.asarray(imread(io.BytesIO(data), format="png"))


# ---------------------------------------------------------------------------- hand-built


def gpu(
    node: str,
    index: int,
    cores: float,
    mem_mib: float,
    *,
    limit_mib: float = 40960,
    device_type: str = "NVIDIA A100-PCIE-40GB",
    flags: tuple[str, ...] = (),
) -> GpuSummary:
    state: GpuState = "idle" if cores == 0 and mem_mib == 0 else "partial"
    if "incomplete" in flags:
        state = "partial"
    free_cores = max(0.0, 100 - cores) if "incomplete" not in flags else 0.0
    return GpuSummary(
        node=node,
        device_index=index,
        device_uuid=f"GPU-{node}-{index}",
        device_type=device_type,
        core_limit=100,
        core_allocated=cores,
        core_allocated_percent=cores,
        mem_limit_mib=limit_mib,
        mem_allocated_mib=mem_mib,
        mem_allocated_percent=mem_mib / limit_mib * 100,
        shared_count=0,
        containers=0,
        state=state,
        flags=flags,
        free_cores=free_cores,
        free_mem_mib=max(0.0, limit_mib - mem_mib),
        namespaces=(),
    )


def workload(namespace: str, device: GpuSummary, cores: float, mem_mib: float) -> Workload:
    return Workload(
        namespace,
        f"{namespace}-pod",
        "0",
        device.node,
        device.device_uuid,
        cores,
        mem_mib,
        False,
        False,
        False,
    )


def _node(name: str, mine: list[GpuSummary]) -> NodeSummary:
    core_limit = sum(g.core_limit for g in mine)
    cores = sum(g.core_allocated for g in mine)
    mem_limit = sum(g.mem_limit_mib for g in mine)
    mem = sum(g.mem_allocated_mib for g in mine)
    return NodeSummary(
        node=name,
        gpus=len(mine),
        device_types=tuple(sorted({g.device_type for g in mine})),
        core_limit=core_limit,
        core_allocated=cores,
        core_allocated_percent=cores / core_limit * 100,
        mem_limit_mib=mem_limit,
        mem_allocated_mib=mem,
        mem_allocated_percent=mem / mem_limit * 100,
        idle_gpus=sum(g.state == "idle" for g in mine),
        partial_gpus=sum(g.state == "partial" for g in mine),
        full_gpus=0,
        inconsistent_gpus=0,
        shared_gpus=0,
        free_whole_gpus=sum(g.state == "idle" for g in mine),
        free_cores=core_limit - cores,
        free_mem_mib=mem_limit - mem,
        largest_free_cores=0,
        largest_free_mem_mib=0,
        verdict="fragmented",
        pods=0,
    )


def hand_summary(
    gpus: list[GpuSummary],
    workloads: list[Workload],
    label: str = "hand-built",
    quotas: dict[str, tuple[QuotaFigure, ...]] | None = None,
) -> Summary:
    nodes = [_node(n, [g for g in gpus if g.node == n]) for n in sorted({g.node for g in gpus})]
    totals: dict[str, list[float]] = {}
    for w in workloads:
        sums = totals.setdefault(w.namespace, [0.0, 0.0])
        sums[0] += w.cores
        sums[1] += w.mem_mib
    all_cores = sum(c for c, _ in totals.values()) or 1.0
    all_mem = sum(m for _, m in totals.values()) or 1.0
    namespaces = tuple(
        NamespaceSummary(
            ns, c, m, c / all_cores * 100, m / all_mem * 100, (), (), 0, 0, 0, 0,
            (quotas or {}).get(ns, ()), "regular",
        )
        for ns, (c, m) in sorted(totals.items())
    )  # fmt: skip
    overview = ClusterOverview(
        nodes=len(nodes),
        gpus=len(gpus),
        core_limit=sum(g.core_limit for g in gpus),
        core_allocated=sum(g.core_allocated for g in gpus),
        core_allocated_percent=0,
        mem_limit_mib=sum(g.mem_limit_mib for g in gpus),
        mem_allocated_mib=sum(g.mem_allocated_mib for g in gpus),
        mem_allocated_percent=0,
        idle_gpus=sum(g.state == "idle" for g in gpus),
        partial_gpus=0,
        full_gpus=0,
        inconsistent_gpus=0,
        shared_gpus=0,
        exclusive_gpus=0,
        free_whole_gpus=sum(g.state == "idle" and "incomplete" not in g.flags for g in gpus),
        free_cores=0,
        free_mem_mib=0,
        pods=0,
        namespaces=len(namespaces),
        distribution="even",
        capacity_answer="",
    )
    return Summary(
        source=SourceInfo(kind="paste", label=label, fetched_at=SCRAPED),
        input=InputReport("current", ("scheduler",), (), 0),
        cluster=overview,
        nodes=tuple(nodes),
        gpus=tuple(gpus),
        workloads=tuple(workloads),
        namespaces=namespaces,
        findings=(),
        checks=(),
        capacity=(),
        runtime=None,
        real_usage=None,
        notes=(),
    )


# ---------------------------------------------------------------------------- figure inspection


@dataclass(frozen=True)
class Drawn:
    """One piece of text matplotlib draws: its text, window box, size and colour."""

    text: str
    box: Any
    points: float
    colour: str
    in_figure: bool  # a figure text or legend entry, not part of an axes


def drawn_texts(figure: Any) -> list[Drawn]:
    """Every piece of text matplotlib actually draws, with its window extent."""
    from matplotlib.colors import to_hex

    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    skipped: set[int] = set()
    for ax in figure.axes:
        for axis in (ax.xaxis, ax.yaxis):
            # matplotlib draws only the ticks inside the view interval.
            low, high = sorted(axis.get_view_interval())
            for tick in axis.get_major_ticks():
                if not low - 1e-9 <= tick.get_loc() <= high + 1e-9:
                    skipped.update({id(tick.label1), id(tick.label2)})
    in_axes = {id(t) for ax in figure.axes for t in ax.findobj(Text)}
    out = []
    for text in figure.findobj(Text):
        if id(text) in skipped or not text.get_visible() or not text.get_text().strip():
            continue
        box = text.get_window_extent(renderer)
        if box.width > 0 and box.height > 0:
            out.append(
                Drawn(text.get_text(), box, float(text.get_fontsize()),
                      to_hex(text.get_color()), id(text) not in in_axes)
            )  # fmt: skip
    return out


def texts_of(figure: Any) -> list[str]:
    return [d.text for d in drawn_texts(figure)]


def _overlap(a: Any, b: Any) -> bool:
    return min(a.x1, b.x1) - max(a.x0, b.x0) > 0.5 and min(a.y1, b.y1) - max(a.y0, b.y0) > 0.5


def layout_problems(figure: Any, texts: list[Drawn] | None = None) -> list[str]:
    """Text leaving the image, two texts overlapping, or figure text over a plot area.

    ``texts`` is ``drawn_texts(figure)`` when the caller already has it (drawing is the cost).
    """
    texts = drawn_texts(figure) if texts is None else texts
    width, height = figure.bbox.width, figure.bbox.height
    problems = [
        f"{d.text!r} leaves the image"
        for d in texts
        if d.box.x0 < -0.5 or d.box.y0 < -0.5 or d.box.x1 > width + 0.5 or d.box.y1 > height + 0.5
    ]
    for first, second in itertools.combinations(texts, 2):
        if _overlap(first.box, second.box):
            problems.append(f"{first.text!r} overlaps {second.text!r}")
    renderer = figure.canvas.get_renderer()
    for ax in figure.axes:
        area = ax.get_window_extent(renderer)
        problems += [f"{d.text!r} is drawn over a plot" for d in texts
                     if d.in_figure and _overlap(d.box, area)]  # fmt: skip
    return problems


def smallest_slack_px(figure: Any, texts: list[Drawn] | None = None) -> tuple[float, str]:
    """The smallest text's size in pixels when Slack shows the image 360 px tall, and it."""
    scale = SLACK_PREVIEW_PX / (figure.get_figheight() * 72.0)  # points -> preview pixels
    smallest = min(drawn_texts(figure) if texts is None else texts, key=lambda d: d.points)
    return smallest.points * scale, smallest.text


@cache
def simulated_chart(nodes: int, gpus_per_node: int) -> bytes:
    """The PNG of a simulated cluster, rendered once for every test that only reads it."""
    from core.views.chart import render_chart

    return render_chart(simulated(nodes, gpus_per_node).summary)


@cache
def simulated_figure(nodes: int, gpus_per_node: int) -> tuple[Any, list[Drawn]]:
    """The figure of a simulated cluster and the texts it draws, built and drawn once for
    every test that only reads them (a test that adds to a figure builds its own)."""
    from core.views.chart import build_figure

    figure = build_figure(simulated(nodes, gpus_per_node).summary)
    return figure, drawn_texts(figure)
