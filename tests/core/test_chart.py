"""The allocation chart: legible at every cluster size, small, honest about what it shows.

Checked on simulated clusters of 6, 160, 1,600 and 8,000 GPUs with several GPU models: valid
PNGs under 1 MB, no two texts overlapping (matplotlib's own text extents), every text at
least 7 px tall when Slack shows the image 360 px tall, and panels whose numbers match the
simulator's ground truth.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections import Counter, defaultdict
from dataclasses import replace

import pytest
from matplotlib.collections import PolyCollection
from matplotlib.colors import to_hex

from core.model import (
    ContainerRuntime,
    HostGpuRuntime,
    QuotaFigure,
    RuntimeSection,
    SourceInfo,
    Summary,
)
from core.views import palette
from core.views.chart import PER_GPU_MAX_GPUS, build_figure, choose_layout, render_chart
from core.views.chart_data import FREE_KEY, OTHER_KEY, chart_data
from core.views.chart_style import OVER_COLOUR
from tests.core.chart_support import (
    GREYS,
    MIN_SLACK_PX,
    SCRAPED,
    drawn_texts,
    filtered,
    gpu,
    hand_summary,
    layout_problems,
    pixels,
    png_size,
    simulated,
    simulated_chart,
    simulated_figure,
    smallest_slack_px,
    texts_of,
    workload,
)

# (nodes, GPUs per node, layout): 6, 160 and 1,600 GPUs; 8,000 is marked slow below.
SIZES = [(2, 3, "per-gpu"), (20, 8, "panels"), (200, 8, "panels")]
EIGHT_THOUSAND = pytest.param(1000, 8, "panels", marks=pytest.mark.slow)


# ---------------------------------------------------------------------------- every size


@pytest.mark.parametrize(("nodes", "gpus_per_node", "layout"), [*SIZES, EIGHT_THOUSAND])
def test_png_is_valid_small_and_not_blank(nodes: int, gpus_per_node: int, layout: str) -> None:
    summary = simulated(nodes, gpus_per_node).summary
    assert len(summary.gpus) == nodes * gpus_per_node
    assert len({g.device_type for g in summary.gpus}) >= 2  # several GPU models
    assert choose_layout(summary) == layout
    data = simulated_chart(nodes, gpus_per_node)
    assert png_size(data) == (1600, 900)
    assert len(data) < 1_000_000
    image = pixels(data)
    assert image.shape[:2] == (900, 1600)
    assert float(image[..., :3].std()) > 0.05  # a blank canvas has 0
    colours = {tuple(p) for p in (image[::5, ::5, :3] * 255).round().astype(int).reshape(-1, 3)}
    assert len(colours) > 20


@pytest.mark.parametrize(("nodes", "gpus_per_node", "layout"), [*SIZES, EIGHT_THOUSAND])
def test_no_text_overlaps_another_or_a_plot(nodes: int, gpus_per_node: int, layout: str) -> None:
    figure, texts = simulated_figure(nodes, gpus_per_node)
    assert layout_problems(figure, texts) == []


@pytest.mark.parametrize(("nodes", "gpus_per_node", "layout"), [*SIZES, EIGHT_THOUSAND])
def test_readable_when_slack_shows_it_360_px_tall(
    nodes: int, gpus_per_node: int, layout: str
) -> None:
    figure, texts = simulated_figure(nodes, gpus_per_node)
    px, text = smallest_slack_px(figure, texts)
    assert px >= MIN_SLACK_PX, f"{text!r} is {px:.1f} px tall in Slack's preview"


def test_the_layout_checks_themselves_catch_problems() -> None:
    figure = build_figure(simulated(2, 3).summary)
    figure.text(0.5, 0.5, "first label")
    figure.text(0.5, 0.5, "second label")
    figure.text(0.99, 0.98, "running off the edge")
    figure.text(0.3, 0.3, "over the bars")
    figure.text(0.02, 0.02, "tiny", fontsize=4)
    problems = layout_problems(figure)
    assert "'first label' overlaps 'second label'" in problems
    assert "'running off the edge' leaves the image" in problems
    assert "'over the bars' is drawn over a plot" in problems
    assert smallest_slack_px(figure) == (pytest.approx(4 * 360 / (72 * 7.2)), "tiny")


@pytest.mark.parametrize(
    ("gpu_count", "per_node", "layout"),
    [(1, 1, "per-gpu"), (PER_GPU_MAX_GPUS, 4, "per-gpu"), (PER_GPU_MAX_GPUS, 1, "per-gpu"),
     (33, 4, "panels")],
)  # fmt: skip
def test_per_gpu_bars_for_small_clusters_panels_above(
    gpu_count: int, per_node: int, layout: str
) -> None:
    devices = [gpu(f"gpu-node-{i // per_node:02d}", i % per_node, 10, 0) for i in range(gpu_count)]
    summary = hand_summary(devices, [])
    assert choose_layout(summary) == layout
    figure = build_figure(summary)
    texts = drawn_texts(figure)
    assert layout_problems(figure, texts) == []
    assert smallest_slack_px(figure, texts)[0] >= MIN_SLACK_PX


def test_the_same_summary_gives_the_same_bytes() -> None:
    assert render_chart(simulated(20, 8).summary) == simulated_chart(20, 8)


# ---------------------------------------------------------------------------- what the panels say


def test_model_bars_split_each_models_gpus_as_the_ground_truth_does() -> None:
    sim = simulated(20, 8)
    data = chart_data(sim.summary)
    totals = sim.cluster.device_totals()
    by_model: dict[str, list[str]] = defaultdict(list)
    for device in sim.cluster.devices:
        by_model[device.device_type].append(device.uuid)
    limit = {d.uuid: d.core_limit for d in sim.cluster.devices}
    named = {k for k in data.styles if not k.startswith("\x00")}
    for row in data.models:
        uuids = by_model[row.key]
        assert row.gpus == len(uuids)
        assert sum(row.parts.values()) == pytest.approx(len(uuids))
        idle = [u for u in uuids if totals[u].cores == 0 and totals[u].mem_mib == 0]
        assert row.free_whole == len(idle)
        busy = [u for u in uuids if u not in idle]
        assert row.fragment_cores == sum(limit[u] - totals[u].cores for u in busy)
        held: Counter[str] = Counter()
        for a in sim.cluster.allocations:
            if a.device_uuid in uuids:
                held[a.namespace if a.namespace in named else OTHER_KEY] += (
                    a.cores / limit[a.device_uuid]
                )
        for key, share in held.items():
            assert row.parts.get(key, 0.0) == pytest.approx(share), (row.key, key)
    texts = [d.text for d in simulated_figure(20, 8)[1]]
    for row in data.models:
        assert f"{row.free_whole:,} whole free \u00b7 {row.fragment_cores:,.0f} cores in " \
               "fragments" in texts  # fmt: skip


def test_node_lists_are_the_most_free_and_the_most_fragmented_nodes() -> None:
    sim = simulated(200, 8)
    totals = sim.cluster.device_totals()
    idle: Counter[str] = Counter()
    fragments: Counter[str] = Counter()
    for d in sim.cluster.devices:
        t = totals[d.uuid]
        if t.cores == 0 and t.mem_mib == 0:
            idle[d.node] += 1
        else:
            fragments[d.node] += max(0, d.core_limit - t.cores)
    data = chart_data(sim.summary)
    most_free = sorted(idle, key=lambda n: (-idle[n], -fragments[n], n))[:8]
    assert [r.key for r in data.first_nodes] == most_free
    assert [r.key for r in data.fragmented_nodes] == sorted(
        fragments, key=lambda n: (-fragments[n], n)
    )[:8]
    texts = [d.text for d in simulated_figure(200, 8)[1]]
    top = data.first_nodes[0]
    model = top.label.split(" \u00b7 ")[1]
    assert f"{top.key} \u00b7 {model}" in texts  # the node's GPU model beside its name
    assert f"{idle[top.key]} of {top.gpus} free" in texts
    assert f"{fragments[data.fragmented_nodes[0].key]:,} cores free" in texts


def test_namespaces_are_the_largest_eight_then_the_rest_with_quota_use() -> None:
    sim = simulated(200, 8)
    summary = sim.summary
    texts = [d.text for d in simulated_figure(200, 8)[1]]
    ranking = palette.namespace_ranking(summary)
    assert len(ranking) > 8
    for name in ranking[:8]:
        assert name in texts
    others = len(summary.namespaces) - 8
    assert f"{others} other namespaces" in texts
    limits = {(ns, res): lim for ns, res, lim in sim.cluster.quota_limits}
    used = defaultdict(int)
    for a in sim.cluster.allocations:
        used[(a.namespace, "nvidia.com/gpucores")] += a.cores
        used[(a.namespace, "nvidia.com/gpumem")] += a.mem_mib
    for name in ranking[:8]:
        uses = {res: used[(name, res)] / lim * 100 for (ns, res), lim in limits.items()
                if ns == name and lim}  # fmt: skip
        if not uses:
            continue
        resource, percent = max(uses.items(), key=lambda kv: kv[1])
        word = "quota" if resource.endswith("gpucores") else "memory quota"
        assert f"{word} {percent:.1f}%" in texts, name


def test_over_quota_is_marked_in_red() -> None:
    device = gpu("node-a", 0, 80, 20480)
    over = (QuotaFigure("nvidia.com/gpucores", 80, 50),)
    summary = hand_summary(
        [device, *[gpu("node-a", i, 0, 0) for i in range(1, 40)]],
        [workload("team-a", device, 80, 20480)],
        quotas={"team-a": over},
    )
    drawn = {d.text: d for d in drawn_texts(build_figure(summary))}
    assert drawn["quota 160.0%"].colour == OVER_COLOUR


# ---------------------------------------------------------------------------- colours


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_namespace_colours_are_distinct_and_never_grey(seed: int) -> None:
    data = chart_data(simulated(40, 4, seed).summary)
    named = {k: s.colour for k, s in data.styles.items() if not k.startswith("\x00")}
    assert len(named) == 8
    assert len(set(named.values())) == 8
    assert not set(named.values()) & GREYS
    assert data.styles[OTHER_KEY].colour == palette.OTHER_COLOUR
    assert data.styles[FREE_KEY].colour == palette.FREE_COLOUR


def test_a_namespace_keeps_its_colour_in_the_threads_filtered_charts() -> None:
    cluster = simulated(20, 8).summary
    ranking = palette.namespace_ranking(cluster)
    colours = {k: s.colour for k, s in chart_data(cluster).styles.items()}
    for name in ranking[:3]:
        mine = chart_data(filtered(20, 8, namespace=name), ranking)
        assert mine.styles[name].colour == colours[name]
    node = filtered(20, 8, node="gpu-node-01")
    on_node = chart_data(node, ranking).styles
    for name, style in on_node.items():
        if not name.startswith("\x00"):
            assert style.colour == colours[name], name
    # Namespaces the cluster chart shows as "other" are "other" on the node too.
    assert {n for n in on_node if not n.startswith("\x00")} <= set(ranking[:8])


def test_without_the_ranking_a_namespace_chart_uses_the_names_own_colour() -> None:
    name = palette.namespace_ranking(simulated(20, 8).summary)[0]
    data = chart_data(filtered(20, 8, namespace=name))
    assert data.styles[name].colour == palette.preferred_colour(name)


@pytest.mark.slow
def test_colour_comes_from_the_name_not_the_process() -> None:
    # Python's hash() changes per process; the palette index must not.
    code = "from core.views.palette import preferred_colour; print(preferred_colour('team-a'))"
    for seed in ("1", "2"):
        result = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
            check=True,
        )
        assert result.stdout.strip() == palette.preferred_colour("team-a")


# ---------------------------------------------------------------------------- filters


@pytest.mark.parametrize(("nodes", "gpus_per_node"), [(4, 4), (20, 8)])
def test_a_namespace_chart_shows_other_tenants_as_other_namespaces(
    nodes: int, gpus_per_node: int
) -> None:
    sim = simulated(nodes, gpus_per_node)
    shared = Counter(a.device_uuid for a in sim.cluster.allocations)
    name = next(
        a.namespace for a in sorted(sim.cluster.allocations, key=lambda a: a.pod)
        if shared[a.device_uuid] > 1
    )  # fmt: skip
    figure = build_figure(filtered(nodes, gpus_per_node, namespace=name))
    drawn = drawn_texts(figure)
    texts = [d.text for d in drawn]
    assert "other namespaces" in texts
    assert "allocated, no pod series" not in texts
    assert any(t.startswith(f"namespace {name}:") for t in texts)
    assert layout_problems(figure, drawn) == []


def test_a_cluster_chart_names_allocation_without_pod_series() -> None:
    stale = gpu("node-a", 0, 80, 30720)
    summary = hand_summary([stale, gpu("node-a", 1, 0, 0)], [workload("team-b", stale, 30, 1)])
    assert "allocated, no pod series" in texts_of(build_figure(summary))


def test_a_node_chart_shows_every_gpu_of_the_node() -> None:
    summary = filtered(20, 8, node="gpu-node-03")
    figure = build_figure(summary)
    drawn = drawn_texts(figure)
    texts = [d.text for d in drawn]
    assert choose_layout(summary) == "per-gpu"
    assert [t for t in texts if t in {str(i) for i in range(8)}] == [str(i) for i in range(8)]
    assert any(t.startswith("node gpu-node-03: 8 GPUs") for t in texts)
    assert layout_problems(figure, drawn) == []


# ---------------------------------------------------------------------------- small clusters


def test_per_gpu_node_labels_carry_the_gpu_model() -> None:
    summary = simulated(2, 3).summary
    texts = texts_of(build_figure(summary))
    for node in summary.nodes:
        model = node.device_types[0].removeprefix("NVIDIA ").removeprefix("NVIDIA-")
        chip = model.replace("Tesla ", "").replace("-", " ").split()[0]
        assert any(t.startswith(node.node + "\n" + chip) for t in texts), (node.node, texts)


def test_per_gpu_free_space_is_the_rest_of_each_gpu() -> None:
    devices = [gpu("node-a", 0, 0, 0), gpu("node-a", 1, 100, 40960), gpu("node-a", 2, 25, 10240)]
    summary = hand_summary(
        devices,
        [workload("team-a", devices[1], 100, 40960), workload("team-b", devices[2], 25, 10240)],
    )
    figure = build_figure(summary)
    cores_ax = figure.axes[1]  # the cores panel is added after the memory panel
    free = [
        c for c in cores_ax.collections
        if isinstance(c, PolyCollection) and to_hex(c.get_facecolor()[0]) == palette.FREE_COLOUR
    ]  # fmt: skip
    heights = sorted(
        round(p.vertices[:, 1].max() - p.vertices[:, 1].min(), 6) for p in free[0].get_paths()
    )
    assert heights == [75.0, 100.0]  # idle GPU: all free; full GPU: no free segment


def test_overcommitted_gpus_are_not_cut_off() -> None:
    over = gpu("node-a", 0, 150, 40960)
    summary = hand_summary([over], [workload("team-a", over, 150, 40960)])
    figure = build_figure(summary)
    assert figure.axes[1].get_ylim()[1] > 150
    assert layout_problems(figure) == []


# ---------------------------------------------------------------------------- incomplete input


def runtime_only() -> Summary:
    from core.api import summarize_text

    with open("tests/fixtures/vgpumonitor-small.prom", encoding="utf-8") as handle:
        text = handle.read()
    source = SourceInfo(kind="file", label="vgpumonitor-small.prom", fetched_at=SCRAPED)
    return summarize_text(text, source)


def test_runtime_only_input_gets_a_runtime_chart_not_a_blank_one() -> None:
    summary = runtime_only()
    assert not summary.gpus and summary.runtime is not None
    assert choose_layout(summary) == "runtime"
    figure = build_figure(summary)
    drawn = drawn_texts(figure)
    texts = [d.text for d in drawn]
    assert "gpu-node-1 / 1 \u00b7 A100 40GB" in texts
    assert "97.0% \u00b7 39.4 GiB used" in texts
    assert "team-a/train-full-0" in texts and "39.0 GiB of 40.0 GiB" in texts
    assert "team-a" in texts and "team-b" in texts
    header = " ".join(texts[:3])
    assert "not known" in header
    assert not re.search(r"\b0 (GPUs|nodes)\b", " ".join(texts))
    assert layout_problems(figure, drawn) == []
    assert smallest_slack_px(figure, drawn)[0] >= MIN_SLACK_PX
    image = pixels(render_chart(summary))
    assert float(image[..., :3].std()) > 0.05


def test_runtime_chart_keeps_up_with_many_containers() -> None:
    base = runtime_only()
    hosts = tuple(
        HostGpuRuntime(f"node-{i // 8:03d}", i % 8, f"GPU-{i}", "NVIDIA L4", 1024.0 * i, i % 101,
                       None, False)
        for i in range(400)
    )  # fmt: skip
    containers = tuple(
        ContainerRuntime(f"ns-{i % 12}", f"pod-{i}", "c", "0", f"GPU-{i}", 100.0 * i, 40960.0,
                         None, None, None)
        for i in range(400)
    )  # fmt: skip
    summary = replace(base, runtime=RuntimeSection(hosts, containers))
    figure = build_figure(summary)
    drawn = drawn_texts(figure)
    texts = [d.text for d in drawn]
    assert any(t.startswith("and ") and "more GPUs" in t for t in texts)
    assert any("other namespaces" in t for t in texts)
    assert layout_problems(figure, drawn) == []


def test_figures_not_known_are_said_so_never_drawn_as_free() -> None:
    devices = [gpu(f"n-{i:02d}", 0, 20, 1024) for i in range(40)]
    devices.append(gpu("n-99", 0, 0, 0, flags=("incomplete",)))
    summary = hand_summary(devices, [workload("team-a", d, 20, 1024) for d in devices[:40]])
    data = chart_data(summary)
    assert data.incomplete_gpus == 1
    assert sum(row.free_whole for row in data.models) == 0
    texts = texts_of(build_figure(summary))
    assert "figures not known" in texts
    assert any("1 GPU with figures not known" in t for t in texts)


def test_an_input_with_nothing_to_draw_says_so() -> None:
    summary = replace(hand_summary([gpu("node-a", 0, 0, 0)], []), gpus=(), nodes=())
    assert choose_layout(summary) == "empty"
    texts = texts_of(build_figure(summary))
    assert any(t.startswith("No GPU devices in this input") for t in texts)
    assert any("not known" in t for t in texts)
    assert png_size(render_chart(summary)) == (1600, 900)


def test_a_namespace_with_only_a_quota_gets_a_chart_that_says_so() -> None:
    summary = filtered(2, 3, namespace="team-b")  # a quota, no pod holding a GPU
    assert not summary.gpus
    texts = texts_of(build_figure(summary))
    assert "No GPU in this input is allocated to namespace team-b" in texts
    assert any(t.startswith("cluster: 6 GPUs on 2 nodes") for t in texts)


# ---------------------------------------------------------------------------- number style


@pytest.mark.slow
def test_one_number_style_on_the_eight_thousand_gpu_chart() -> None:
    summary = simulated(1000, 8).summary
    texts = texts_of(build_figure(summary))[1:]  # the title carries the scrape date
    numbers = [t for t in texts if not t.startswith("gpu-node-")]
    for text in numbers:
        assert not re.search(r"(?<![\d,.])\d{4,}", text), text  # thousands separators
        for percent in re.findall(r"[\d.]+%", text):
            assert re.fullmatch(r"\d+\.\d%", percent), text
    header = texts[0]
    assert re.search(r"\(\d+(\.\d+)? TiB of \d+(\.\d+)? TiB\)", header), header
    assert "8,000 GPUs on 1,000 nodes" in header
    assert any(re.fullmatch(r"[\d.]+% \u00b7 [\d,]+ cores", t) for t in texts)


# ---------------------------------------------------------------------------- long names


def test_long_cloud_node_names_are_shortened_and_their_domain_named() -> None:
    gpus = [
        gpu(f"ip-10-0-{i // 200}-{i % 200}.eu-west-1.compute.internal", j, 50 * (j % 2), 0)
        for i in range(60)
        for j in range(2)
    ]
    figure = build_figure(hand_summary(gpus, []))
    drawn = drawn_texts(figure)
    texts = [d.text for d in drawn]
    assert any(t.startswith("ip-10-0-0-") and "compute" not in t for t in texts)
    assert layout_problems(figure, drawn) == []


@pytest.mark.slow  # 8,000 nodes
def test_eight_thousand_single_gpu_nodes_and_two_hundred_namespaces_stay_legible() -> None:
    devices = [gpu(f"gpu-node-{i:04d}", 0, (i * 37) % 101, (i * 53) % 40960) for i in range(8000)]
    summary = hand_summary(
        devices, [workload(f"tenant-{i % 200:03d}", d, d.core_allocated, 0) for i, d in
                  enumerate(devices) if d.core_allocated]
    )  # fmt: skip
    figure = build_figure(summary)
    assert layout_problems(figure) == []
    texts = texts_of(figure)
    assert "192 other namespaces" in texts
    assert len(render_chart(summary)) < 1_000_000


def test_many_models_share_one_row_beyond_six() -> None:
    types = [f"NVIDIA Model{i} {8 * (i + 1)}GB" for i in range(8)]
    devices = [gpu(f"n-{i:02d}", 0, 10, 0, device_type=types[i % 8]) for i in range(64)]
    data = chart_data(hand_summary(devices, []))
    assert len(data.models) == 6 and data.models[-1].label == "3 other models"
    assert sum(r.gpus for r in data.models) == 64


# ---------------------------------------------------------------------------- threads, purity


def test_concurrent_renders_match_serial_ones() -> None:
    summaries = [simulated(2, 3).summary, simulated(20, 8).summary, runtime_only()]
    expected = [simulated_chart(2, 3), simulated_chart(20, 8), render_chart(summaries[2])]
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
        "s = summarize_text(simulate_exposition(8, 8), SourceInfo(kind='paste', label='x'))\n"
        "assert render_chart(s)[:4] == b'\\x89PNG'\n"
        "print('matplotlib.pyplot' in sys.modules)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert result.stdout.strip() == "False"
