"""The allocation chart: a valid, legible PNG under 1 MB from 1 to 8,000 GPUs.

Summaries come from the summary engine run on simulated scheduler text, and, for cases the
simulator never produces (overcommitted devices, devices whose total exceeds their pod
series), from ``Summary`` objects built by hand.
"""

from __future__ import annotations

import io
import itertools
import os
import subprocess
import sys
import threading
from dataclasses import replace
from datetime import UTC, datetime
from functools import cache
from typing import Any

import numpy as np
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.colors import to_hex
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
    SourceInfo,
    Summary,
    Workload,
)
from core.simulate import simulate_exposition
from core.views.chart import (
    FREE_COLOUR,
    OTHER_COLOUR,
    UNATTRIBUTED_LABEL,
    build_figure,
    choose_layout,
    namespace_colour,
    render_chart,
)

SCRAPED = datetime(2026, 8, 21, 6, 30, tzinfo=UTC)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@cache
def simulated(nodes: int, gpus_per_node: int, seed: int = 0) -> Summary:
    text = simulate_exposition(nodes, gpus_per_node, seed=seed)
    source = SourceInfo(kind="paste", label=f"sim {nodes}x{gpus_per_node}", fetched_at=SCRAPED)
    return summarize_text(text, source)


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_SIGNATURE
    assert data[12:16] == b"IHDR"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def pixels(data: bytes) -> np.ndarray:
    return np.asarray(imread(io.BytesIO(data), format="png"))


# ---------------------------------------------------------------------------- hand-built


def gpu(
    node: str, index: int, cores: float, mem_mib: float, *, limit_mib: float = 40960
) -> GpuSummary:
    state: GpuState = "idle" if cores == 0 and mem_mib == 0 else "partial"
    return GpuSummary(
        node=node,
        device_index=index,
        device_uuid=f"GPU-{node}-{index}",
        device_type="NVIDIA A100-PCIE-40GB",
        core_limit=100,
        core_allocated=cores,
        core_allocated_percent=cores,
        mem_limit_mib=limit_mib,
        mem_allocated_mib=mem_mib,
        mem_allocated_percent=mem_mib / limit_mib * 100,
        shared_count=0,
        containers=0,
        state=state,
        flags=(),
        free_cores=100 - cores,
        free_mem_mib=limit_mib - mem_mib,
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


def hand_summary(
    gpus: list[GpuSummary], workloads: list[Workload], label: str = "hand-built"
) -> Summary:
    nodes = []
    for name in sorted({g.node for g in gpus}):
        mine = [g for g in gpus if g.node == name]
        core_limit = sum(g.core_limit for g in mine)
        cores = sum(g.core_allocated for g in mine)
        mem_limit = sum(g.mem_limit_mib for g in mine)
        mem = sum(g.mem_allocated_mib for g in mine)
        nodes.append(
            NodeSummary(
                node=name,
                gpus=len(mine),
                device_types=("NVIDIA A100-PCIE-40GB",),
                core_limit=core_limit,
                core_allocated=cores,
                core_allocated_percent=cores / core_limit * 100,
                mem_limit_mib=mem_limit,
                mem_allocated_mib=mem,
                mem_allocated_percent=mem / mem_limit * 100,
                idle_gpus=0,
                partial_gpus=len(mine),
                full_gpus=0,
                inconsistent_gpus=0,
                shared_gpus=0,
                free_whole_gpus=0,
                free_cores=core_limit - cores,
                free_mem_mib=mem_limit - mem,
                largest_free_cores=0,
                largest_free_mem_mib=0,
                verdict="fragmented",
                pods=0,
            )
        )
    totals: dict[str, list[float]] = {}
    for w in workloads:
        sums = totals.setdefault(w.namespace, [0.0, 0.0])
        sums[0] += w.cores
        sums[1] += w.mem_mib
    all_cores = sum(c for c, _ in totals.values()) or 1.0
    all_mem = sum(m for _, m in totals.values()) or 1.0
    namespaces = tuple(
        NamespaceSummary(
            ns, c, m, c / all_cores * 100, m / all_mem * 100, (), (), 0, 0, 0, 0, (), "regular"
        )
        for ns, (c, m) in sorted(totals.items())
    )
    overview = ClusterOverview(
        nodes=len(nodes),
        gpus=len(gpus),
        core_limit=0,
        core_allocated=0,
        core_allocated_percent=0,
        mem_limit_mib=0,
        mem_allocated_mib=0,
        mem_allocated_percent=0,
        idle_gpus=0,
        partial_gpus=0,
        full_gpus=0,
        inconsistent_gpus=0,
        shared_gpus=0,
        exclusive_gpus=0,
        free_whole_gpus=0,
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


def drawn_texts(figure: Any) -> list[tuple[str, Any]]:
    """(text, window box) of every piece of text matplotlib actually draws."""
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
    out = []
    for text in figure.findobj(Text):
        if id(text) in skipped or not text.get_visible() or not text.get_text().strip():
            continue
        box = text.get_window_extent(renderer)
        if box.width > 0 and box.height > 0:
            out.append((text.get_text(), box))
    return out


def layout_problems(figure: Any) -> list[str]:
    texts = drawn_texts(figure)
    width, height = figure.bbox.width, figure.bbox.height
    problems = [
        f"{t!r} leaves the image"
        for t, b in texts
        if b.x0 < -0.5 or b.y0 < -0.5 or b.x1 > width + 0.5 or b.y1 > height + 0.5
    ]
    for (t1, b1), (t2, b2) in itertools.combinations(texts, 2):
        overlap_x = min(b1.x1, b2.x1) - max(b1.x0, b2.x0)
        overlap_y = min(b1.y1, b2.y1) - max(b1.y0, b2.y0)
        if overlap_x > 0.5 and overlap_y > 0.5:
            problems.append(f"{t1!r} overlaps {t2!r}")
    return problems


def bar_collections(figure: Any) -> list[PolyCollection]:
    return [c for ax in figure.axes for c in ax.collections if isinstance(c, PolyCollection)]


def collection_colour(collection: PolyCollection) -> str:
    red, green, blue, alpha = (float(v) for v in np.asarray(collection.get_facecolor())[0])
    return to_hex((red, green, blue, alpha))


def legend_entries(figure: Any) -> dict[str, str]:
    legend = figure.legends[0]
    return {
        text.get_text(): to_hex(handle.get_facecolor())
        for text, handle in zip(legend.get_texts(), legend.legend_handles, strict=True)
    }


# ---------------------------------------------------------------------------- PNG at every size

SIZES = [
    (1, 1, "per-gpu", (1100, 1000)),
    (2, 3, "per-gpu", (1100, 1000)),
    (8, 8, "per-gpu", (1600, 1000)),
    (125, 8, "per-node", (1600, 1000)),
    pytest.param(1000, 8, "heatmap", (1600, 1000), marks=pytest.mark.slow),
]


@pytest.mark.parametrize(("nodes", "gpus_per_node", "layout", "dimensions"), SIZES)
def test_png_is_valid_non_blank_and_small(
    nodes: int, gpus_per_node: int, layout: str, dimensions: tuple[int, int]
) -> None:
    summary = simulated(nodes, gpus_per_node)
    assert len(summary.gpus) == nodes * gpus_per_node
    assert choose_layout(summary) == layout
    data = render_chart(summary)
    assert png_size(data) == dimensions
    assert len(data) < 1_000_000
    image = pixels(data)
    assert image.shape[:2] == (dimensions[1], dimensions[0])
    assert float(image[..., :3].std()) > 0.03  # not a blank canvas (that has 0)
    colours = {tuple(p) for p in (image[::7, ::7, :3] * 255).round().astype(int).reshape(-1, 3)}
    assert len(colours) > 20


@pytest.mark.slow
def test_eight_thousand_single_gpu_nodes_stay_legible() -> None:
    summary = hand_summary(
        [gpu(f"gpu-node-{i:04d}", 0, (i * 37) % 101, (i * 53) % 40960) for i in range(8000)], []
    )
    assert choose_layout(summary) == "heatmap"
    data = render_chart(summary)
    assert png_size(data) == (1600, 1000) and len(data) < 1_000_000
    assert layout_problems(build_figure(summary)) == []


@pytest.mark.parametrize(
    ("nodes", "gpus_per_node"),
    [(1, 1), (8, 8), (64, 1), (125, 8), pytest.param(1000, 8, marks=pytest.mark.slow)],
)
def test_no_label_overlaps_or_leaves_the_image(nodes: int, gpus_per_node: int) -> None:
    assert layout_problems(build_figure(simulated(nodes, gpus_per_node))) == []


def test_long_cloud_node_names_are_shortened_and_do_not_overlap() -> None:
    gpus = [
        gpu(f"ip-10-0-{i // 200}-{i % 200}.eu-west-1.compute.internal", 0, 50, 20480)
        for i in range(120)
    ]
    figure = build_figure(hand_summary(gpus, []))
    assert layout_problems(figure) == []
    texts = [t for t, _ in drawn_texts(figure)]
    assert "ip-10-0-0-0" in texts
    assert any("node names shown without '.eu-west-1.compute.internal'" in t for t in texts)
    assert any(t.startswith("One node name in 3 is shown (120 nodes)") for t in texts)


def test_the_overlap_check_itself_catches_overlaps() -> None:
    figure = build_figure(hand_summary([gpu("node-a", 0, 10, 1024)], []))
    figure.text(0.5, 0.5, "first label")
    figure.text(0.5, 0.5, "second label")
    figure.text(0.99, 0.5, "running off the edge")
    problems = layout_problems(figure)
    assert "'first label' overlaps 'second label'" in problems
    assert "'running off the edge' leaves the image" in problems


# ---------------------------------------------------------------------------- colours, legend


def test_a_namespace_keeps_its_colour_across_summaries() -> None:
    first, second = simulated(8, 8, seed=1), simulated(20, 4, seed=2)
    shared = {n.namespace for n in first.namespaces} & {n.namespace for n in second.namespaces}
    assert shared
    legends = [legend_entries(build_figure(s)) for s in (first, second)]
    for ns in shared:
        colours = {entries[ns] for entries in legends if ns in entries}
        assert colours == {namespace_colour(ns)}, ns


@pytest.mark.slow
def test_colour_comes_from_the_name_not_the_process() -> None:
    # Python's hash() changes per process; the palette index must not.
    code = "from core.views.chart import namespace_colour; print(namespace_colour('team-a'))"
    for seed in ("1", "2"):
        result = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
            check=True,
        )
        assert result.stdout.strip() == namespace_colour("team-a")


def test_colour_collisions_are_told_apart_by_hatch() -> None:
    names = [f"ns-{i}" for i in range(200)]
    by_colour: dict[str, list[str]] = {}
    for n in names:
        by_colour.setdefault(namespace_colour(n), []).append(n)
    pair = next(v[:2] for v in by_colour.values() if len(v) >= 2)
    device = gpu("node-a", 0, 60, 20480)
    summary = hand_summary(
        [device], [workload(pair[0], device, 30, 10240), workload(pair[1], device, 30, 10240)]
    )
    figure = build_figure(summary)
    handles = {
        t.get_text(): h
        for t, h in zip(
            figure.legends[0].get_texts(), figure.legends[0].legend_handles, strict=True
        )
    }
    assert to_hex(handles[pair[0]].get_facecolor()) == to_hex(handles[pair[1]].get_facecolor())
    assert handles[pair[0]].get_hatch() != handles[pair[1]].get_hatch()


def test_legend_is_capped_with_the_rest_as_other() -> None:
    device_list = [gpu("node-a", i, 50 - i, 10240) for i in range(14)]
    workloads = [workload(f"tenant-{i:02d}", d, 50 - i, 10240) for i, d in enumerate(device_list)]
    figure = build_figure(hand_summary(device_list, workloads))
    entries = legend_entries(figure)
    assert list(entries)[:8] == [f"tenant-{i:02d}" for i in range(8)]  # the largest first
    assert entries["6 other namespaces"] == OTHER_COLOUR
    assert entries["free"] == FREE_COLOUR
    assert len(entries) == 10


# ---------------------------------------------------------------------------- what the bars say


def test_free_space_is_the_rest_of_each_gpu() -> None:
    devices = [gpu("node-a", 0, 0, 0), gpu("node-a", 1, 100, 40960), gpu("node-a", 2, 25, 10240)]
    summary = hand_summary(
        devices,
        [workload("team-a", devices[1], 100, 40960), workload("team-b", devices[2], 25, 10240)],
    )
    figure = build_figure(summary)
    cores_ax = figure.axes[1]  # the cores panel is added after the memory panel
    free = [c for c in cores_ax.collections if collection_colour(c) == FREE_COLOUR]
    assert len(free) == 1
    heights = sorted(
        round(p.vertices[:, 1].max() - p.vertices[:, 1].min(), 6) for p in free[0].get_paths()
    )
    assert heights == [75.0, 100.0]  # idle GPU: all free; full GPU: no free segment
    team_a = [c for c in cores_ax.collections if collection_colour(c) == namespace_colour("team-a")]
    assert team_a


def test_overcommitted_and_unattributed_allocations_are_shown() -> None:
    over = gpu("node-a", 0, 150, 40960)
    stale = gpu("node-a", 1, 80, 30720)
    summary = hand_summary(
        [over, stale], [workload("team-a", over, 150, 40960), workload("team-b", stale, 30, 10240)]
    )
    figure = build_figure(summary)
    assert figure.axes[1].get_ylim()[1] > 150  # the overcommitted bar is not cut off
    assert UNATTRIBUTED_LABEL in legend_entries(figure)
    assert layout_problems(figure) == []


def test_heatmap_cells_hold_each_gpus_allocation() -> None:
    devices = [gpu(f"n-{i:03d}", j, (i + j) % 100, 0) for i in range(320) for j in range(2)]
    devices = [d for d in devices if not (d.node == "n-005" and d.device_index == 1)]
    summary = hand_summary(devices, [])
    assert choose_layout(summary) == "heatmap"
    figure = build_figure(summary)
    cores = figure.axes[1].images[0].get_array()  # the cores panel, added after memory
    assert cores.shape == (2, 320)
    assert cores[0, 7] == 7 and cores[1, 7] == 8
    assert np.ma.is_masked(cores[1, 5])  # no GPU 1 on n-005
    assert any("white: no GPU at that index" in t for t, _ in drawn_texts(figure))


def test_title_names_source_and_scrape_time() -> None:
    summary = simulated(2, 3)
    texts = [t for t, _ in drawn_texts(build_figure(summary, title="Team review"))]
    assert "Team review \u2014 sim 2x3 \u2014 2026-08-21 06:30:00 UTC" in texts
    unknown = replace(
        summary, source=SourceInfo(kind="cluster", label="x", cluster="prod", context="eu-1")
    )
    texts = [t for t, _ in drawn_texts(build_figure(unknown))]
    assert "HAMi GPU allocation \u2014 prod / eu-1 \u2014 scrape time unknown" in texts


def test_an_input_without_gpus_still_gives_a_readable_png() -> None:
    summary = replace(hand_summary([gpu("node-a", 0, 0, 0)], []), gpus=(), nodes=())
    data = render_chart(summary)
    assert png_size(data) == (1600, 1000)
    assert any("No GPU devices in this input" in t for t, _ in drawn_texts(build_figure(summary)))


@pytest.mark.parametrize(
    ("gpu_count", "node_count", "layout"),
    [(64, 64, "per-gpu"), (65, 65, "per-node"), (600, 300, "per-node"), (301, 301, "heatmap")],
)
def test_layout_switches_at_the_documented_sizes(
    gpu_count: int, node_count: int, layout: str
) -> None:
    per_node = gpu_count // node_count
    devices = [gpu(f"n-{i:03d}", j, 10, 0) for i in range(node_count) for j in range(per_node)]
    assert choose_layout(hand_summary(devices, [])) == layout


# ---------------------------------------------------------------------------- threads, purity


def test_concurrent_renders_match_serial_ones() -> None:
    summaries = [simulated(2, 3), simulated(8, 8), simulated(125, 8), simulated(1, 1)]
    expected = [render_chart(s) for s in summaries]
    results: dict[int, bytes] = {}

    def work(i: int) -> None:
        results[i] = render_chart(summaries[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(summaries))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert [results[i] for i in range(len(summaries))] == expected


@pytest.mark.slow
def test_rendering_never_touches_pyplot() -> None:
    code = (
        "import sys\n"
        "from core.api import summarize_text\n"
        "from core.model import SourceInfo\n"
        "from core.simulate import simulate_exposition\n"
        "from core.views.chart import render_chart\n"
        "s = summarize_text(simulate_exposition(2, 2), SourceInfo(kind='paste', label='x'))\n"
        "assert render_chart(s)[:4] == b'\\x89PNG'\n"
        "print('matplotlib.pyplot' in sys.modules)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert result.stdout.strip() == "False"
