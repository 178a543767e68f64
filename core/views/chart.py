"""PNG chart of GPU allocation, grouped by node and stacked by namespace.

Rendered with matplotlib's object API on the Agg canvas (``Figure`` + ``FigureCanvasAgg``),
never pyplot: no global figure state, no display, usable from a bot's worker threads.
matplotlib itself is not thread-safe ("set up the proper locks to serialize access to
Matplotlib artists", its FAQ), so drawing is serialised by a module lock.

The layout follows the size of the input, so labels never pile up:

* up to ``PER_GPU_MAX_GPUS`` GPUs: one bar per GPU, grouped by node, cores and memory panels;
* up to ``PER_NODE_MAX_NODES`` nodes: one bar per node (share of the node's capacity);
* beyond: a node x GPU heatmap of allocation %, plus each namespace's share of the cluster.

Bars are stacked by namespace from ``summary.workloads``; the free part of each GPU or node is
light grey. A namespace's colour comes from a hash of its name into a fixed palette, so it is
the same in every chart; namespaces whose colours collide in one chart are told apart by hatch.
Percentages are of each device's (or node's) limit, so GPUs of different sizes compare.
"""

from __future__ import annotations

import io
import math
import threading
import zlib
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final, Literal

from core.model import GpuSummary, NodeSummary, Summary
from core.views.visible_text import visible

Layout = Literal["per-gpu", "per-node", "heatmap", "empty"]

PER_GPU_MAX_GPUS: Final = 64
PER_NODE_MAX_NODES: Final = 300
HEATMAP_MAX_COLUMNS: Final = 500  # nodes per heatmap row band: 2+ pixels per node column
LEGEND_MAX_NAMESPACES: Final = 8
MAX_PNG_BYTES: Final = 1_000_000
MAX_NODE_LABELS: Final = 48
MAX_LABEL_CHARS: Final = 24

FIG_WIDTH_IN: Final = 16.0
FIG_HEIGHT_IN: Final = 10.0
LEGEND_WIDTH_IN: Final = 2.3
LEFT_IN: Final = 1.0  # y-axis label and tick labels
HEADER_IN: Final = 1.05  # title and subtitle
DPI_STEPS: Final = (100, 80, 64)
LABEL_PT: Final = 7.5
# Average glyph width of DejaVu Sans, as a share of the font size (for label room estimates).
GLYPH_EM: Final = 0.62

# Sixteen distinct hues (tab10 without its grey, plus seven from tab20b/c and ColorBrewer);
# grey is kept for "free", "other namespaces" and "allocated, no pod series".
PALETTE: Final[tuple[str, ...]] = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22",
    "#17becf", "#393b79", "#e7ba52", "#843c39", "#7b4173", "#a1d76a", "#fdd0a2", "#9ecae1",
)  # fmt: skip
HATCHES: Final = ("", "//", "..", "xx", "\\\\", "oo")
FREE_COLOUR: Final = "#ececec"
OTHER_COLOUR: Final = "#9e9e9e"
UNATTRIBUTED_COLOUR: Final = "#5a5a5a"
OTHER_KEY: Final = "\x00other"  # cannot clash with a namespace name (RFC 1123 labels)
FREE_LABEL: Final = "free"
UNATTRIBUTED_LABEL: Final = "allocated, no pod series"

_DRAW_LOCK = threading.Lock()


@contextmanager
def drawing() -> Iterator[None]:
    """Held while a chart is built and written: one at a time (matplotlib's settings are
    shared by the process), with mathtext off, so a name such as ``$x^$`` in a label is drawn
    as written instead of parsed as a formula (a malformed one raised and lost the chart)."""
    import matplotlib

    with _DRAW_LOCK, matplotlib.rc_context({"text.parse_math": False}):
        yield


def namespace_colour(namespace: str) -> str:
    """The palette colour of ``namespace``: CRC-32 of the name, the same in every run."""
    return PALETTE[zlib.crc32(namespace.encode("utf-8")) % len(PALETTE)]


def choose_layout(summary: Summary) -> Layout:
    """The layout ``render_chart`` uses for this summary (see the module docstring)."""
    if not summary.gpus:
        return "empty"
    if len(summary.gpus) <= PER_GPU_MAX_GPUS:
        return "per-gpu"
    if len({g.node for g in summary.gpus}) <= PER_NODE_MAX_NODES:
        return "per-node"
    return "heatmap"


def render_chart(summary: Summary, *, title: str | None = None) -> bytes:
    """The allocation chart of ``summary`` as PNG bytes, under 1 MB."""
    data = b""
    for dpi in DPI_STEPS:  # lower resolutions only if a rendering were ever too large
        with drawing():
            data = _png_bytes(build_figure(summary, title=title), dpi)
        if len(data) < MAX_PNG_BYTES:
            break
    return data


def build_figure(summary: Summary, *, title: str | None = None) -> Any:
    """The matplotlib ``Figure`` behind ``render_chart`` (exposed for layout checks)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    layout = choose_layout(summary)
    legend = _legend_for(summary)
    figure = Figure(figsize=(_figure_width_in(summary, layout), FIG_HEIGHT_IN), dpi=DPI_STEPS[0])
    FigureCanvasAgg(figure)
    frame = _Frame(figure)
    figure.text(frame.x(0.2), frame.y_top(0.25), _title(summary, title), fontsize=14, va="top")
    figure.text(
        frame.x(0.2),
        frame.y_top(0.62),
        _subtitle(summary, layout),
        fontsize=9.5,
        color="#444444",
        va="top",
        linespacing=1.5,
    )
    if layout == "empty":
        figure.text(
            0.5,
            0.5,
            "No GPU devices in this input: it has no scheduler allocation series",
            ha="center",
            va="center",
            fontsize=13,
            color="#444444",
        )
    elif layout == "per-gpu":
        _draw_per_gpu(frame, summary, legend)
    elif layout == "per-node":
        _draw_per_node(frame, summary, legend)
    else:
        _draw_heatmap(frame, summary, legend)
    return figure


def _png_bytes(figure: Any, dpi: int) -> bytes:
    buffer = io.BytesIO()
    # No "Software" text chunk: the same summary gives the same bytes.
    figure.savefig(buffer, format="png", dpi=dpi, metadata={"Software": None})
    return buffer.getvalue()


def _figure_width_in(summary: Summary, layout: Layout) -> float:
    # A handful of GPUs on a 16-inch canvas would be a few lonely bars.
    if layout == "per-gpu" and len(summary.gpus) <= 8:
        return 11.0
    if layout == "per-gpu" and len(summary.gpus) <= 24:
        return 13.0
    return FIG_WIDTH_IN


class _Frame:
    """Placement in inches, converted to the figure fractions matplotlib wants."""

    def __init__(self, figure: Any) -> None:
        self.figure = figure
        self.width_in = float(figure.get_figwidth())
        self.height_in = float(figure.get_figheight())

    def x(self, inches: float) -> float:
        return inches / self.width_in

    def y(self, inches: float) -> float:
        return inches / self.height_in

    def y_top(self, inches: float) -> float:
        return 1.0 - inches / self.height_in

    @property
    def plot_right_in(self) -> float:
        return self.width_in - LEGEND_WIDTH_IN - 0.25

    def axes(
        self, left_in: float, bottom_in: float, right_in: float, top_in: float, **kw: Any
    ) -> Any:
        box = (
            self.x(left_in),
            self.y(bottom_in),
            self.x(right_in - left_in),
            self.y(top_in - bottom_in),
        )
        return self.figure.add_axes(box, **kw)


# ------------------------------------------------------------------------------ text


def _title(summary: Summary, title: str | None) -> str:
    source = summary.source
    where = source.label
    if source.cluster:
        where = source.cluster + (f" / {source.context}" if source.context else "")
    when = "scrape time unknown"
    if source.fetched_at is not None:
        when = source.fetched_at.strftime("%Y-%m-%d %H:%M:%S %Z").strip()
    return f"{title or 'HAMi GPU allocation'} \u2014 {visible(where)} \u2014 {when}"


def _subtitle(summary: Summary, layout: Layout) -> str:
    c = summary.cluster
    how = {
        "per-gpu": "one bar per GPU, grouped by node",
        "per-node": "one bar per node (its GPUs summed)",
        "heatmap": "node x GPU heatmap of allocation %",
        "empty": "nothing to draw",
    }[layout]
    scope = ""
    if summary.filters:
        scope = " \u00b7 filtered: " + ", ".join(f"{k}={visible(v)}" for k, v in summary.filters)
    if not summary.gpus and not summary.filters:
        # Zeros would read as facts: the input simply has no allocation series.
        return "no scheduler allocation series in this input (vGPU monitor metrics only?)"
    return (
        f"{c.nodes} nodes, {c.gpus} GPUs \u00b7 cores {c.core_allocated_percent:.1f}% and "
        f"memory {c.mem_allocated_percent:.1f}% allocated \u00b7 {c.idle_gpus} idle, "
        f"{c.partial_gpus} partial, {c.full_gpus} full GPUs\n"
        f"HAMi scheduler allocation, not GPU utilisation \u00b7 {how}{scope}"
    )


def _text_width_in(text: str, points: float = LABEL_PT) -> float:
    return len(text) * points * GLYPH_EM / 72.0


def _node_labels(names: Sequence[str]) -> tuple[dict[str, str], str]:
    """Short labels for node names, and a note naming what was left out of them.

    Cloud node names share long suffixes (``.eu-west-1.compute.internal``): the suffix is
    dropped when every name has it; names still too long keep their start and end.
    """
    suffix = ""
    if len(names) > 1 and all("." in n for n in names):
        tails = [n[n.index(".") :] for n in names]
        if len(set(tails)) == 1:
            suffix = tails[0]
    labels: dict[str, str] = {}
    for name in names:
        short = visible(name[: len(name) - len(suffix)] if suffix else name)
        if len(short) > MAX_LABEL_CHARS:
            keep = (MAX_LABEL_CHARS - 1) // 2
            short = f"{short[:keep]}\u2026{short[-keep:]}"
        labels[name] = short
    return labels, (f"node names shown without {suffix!r}" if suffix else "")


def _thin(count: int, max_labels: int) -> tuple[list[int], int]:
    """Positions to label when ``count`` labels would overlap, and the step between them."""
    step = max(1, math.ceil(count / max_labels))
    return list(range(0, count, step)), step


# ------------------------------------------------------------------------------ colours, legend


@dataclass(frozen=True, slots=True)
class _Style:
    colour: str
    hatch: str
    label: str


@dataclass(frozen=True, slots=True)
class _Legend:
    """Namespaces with their own colour (the largest ones); the rest share "other"."""

    styles: dict[str, _Style]  # namespace or OTHER_KEY -> style, in legend order

    def key(self, namespace: str) -> str:
        return namespace if namespace in self.styles else OTHER_KEY

    def order(self) -> list[str]:
        return list(self.styles)


def _legend_for(summary: Summary) -> _Legend:
    weight: dict[str, float] = defaultdict(float)
    for usage in summary.namespaces:
        weight[usage.namespace] += usage.core_share_percent + usage.mem_share_percent
    for w in summary.workloads:
        weight.setdefault(w.namespace, 0.0)
    ranked = sorted(weight, key=lambda n: (-weight[n], n))  # largest first, then by name
    shown = ranked[:LEGEND_MAX_NAMESPACES]
    hatch_of: dict[str, str] = {}
    by_colour: dict[str, list[str]] = defaultdict(list)
    for ns in sorted(shown):
        by_colour[namespace_colour(ns)].append(ns)
    for names in by_colour.values():
        for i, ns in enumerate(names):  # colours collide: first by name plain, then hatched
            hatch_of[ns] = HATCHES[i % len(HATCHES)]
    styles = {ns: _Style(namespace_colour(ns), hatch_of[ns], visible(ns)) for ns in shown}
    others = len(ranked) - len(shown)
    if others:
        styles[OTHER_KEY] = _Style(
            OTHER_COLOUR, "", f"{others} other namespace" + "s" * (others > 1)
        )
    return _Legend(styles)


def _add_legend(frame: _Frame, legend: _Legend, extra: Sequence[tuple[str, str, str]]) -> None:
    from matplotlib.patches import Patch

    handles = [
        Patch(facecolor=s.colour, hatch=s.hatch, edgecolor="white", label=s.label)
        for s in legend.styles.values()
    ]
    handles += [Patch(facecolor=c, hatch=h, edgecolor="#bbbbbb", label=t) for c, h, t in extra]
    frame.figure.legend(
        handles=handles,
        loc="upper left",
        bbox_to_anchor=(frame.x(frame.plot_right_in + 0.35), frame.y_top(HEADER_IN + 0.1)),
        fontsize=9,
        frameon=False,
        title="namespace",
        title_fontsize=10,
        alignment="left",
    )


# ------------------------------------------------------------------------------ data


def _stacks_by_device(
    summary: Summary, legend: _Legend
) -> dict[str, dict[str, tuple[float, float]]]:
    """Device UUID -> legend key -> (cores, MiB) summed over the workloads on it."""
    known = {g.device_uuid for g in summary.gpus}
    stacks: dict[str, dict[str, tuple[float, float]]] = defaultdict(dict)
    for w in summary.workloads:
        if w.device_uuid in known:
            key = legend.key(w.namespace)
            cores, mem = stacks[w.device_uuid].get(key, (0.0, 0.0))
            stacks[w.device_uuid][key] = (cores + w.cores, mem + w.mem_mib)
    return stacks


def _percent(part: float, whole: float) -> float:
    return part / whole * 100.0 if whole > 0 else 0.0


def _has_unattributed(summary: Summary, stacks: dict[str, dict[str, tuple[float, float]]]) -> bool:
    """Whether any device reports more than its pod series add up to (SPEC 10 check)."""
    for g in summary.gpus:
        parts = stacks.get(g.device_uuid, {}).values()
        if g.core_allocated - sum(c for c, _ in parts) > 0.5:
            return True
        if g.mem_allocated_mib - sum(m for _, m in parts) > 0.5:
            return True
    return False


# ------------------------------------------------------------------------------ bars


def _bars(
    ax: Any,
    xs: Sequence[float],
    heights: Sequence[float],
    bottoms: Sequence[float],
    width: float,
    colour: str,
    *,
    hatch: str = "",
    edgecolor: str = "white",
) -> None:
    """Rectangles as one ``PolyCollection``: ``ax.bar`` adds one patch per bar and costs
    about half a millisecond each, seconds for a few hundred nodes stacked by namespace."""
    from matplotlib.collections import PolyCollection

    half = width / 2
    boxes = [
        ((x - half, b), (x - half, b + h), (x + half, b + h), (x + half, b))
        for x, h, b in zip(xs, heights, bottoms, strict=True)
        if h > 0
    ]
    if boxes:
        ax.add_collection(
            PolyCollection(
                boxes,
                facecolors=colour,
                edgecolors=edgecolor,
                linewidths=0.3 if width > 0.5 else 0.0,
                hatch=hatch or None,
            ),
            autolim=False,
        )


def _stack_bars(
    ax: Any,
    xs: Sequence[float],
    stacks: Sequence[dict[str, float]],
    totals: Sequence[float],
    legend: _Legend,
    width: float,
) -> float:
    """Namespace segments, then what the device reports beyond its pods, then free to 100 %.

    Returns the highest top in percent (over 100 when a device is overcommitted).
    """
    bottoms = [0.0] * len(xs)
    for key in legend.order():
        heights = [s.get(key, 0.0) for s in stacks]
        if any(heights):
            style = legend.styles[key]
            _bars(ax, xs, heights, bottoms, width, style.colour, hatch=style.hatch)
            bottoms = [b + h for b, h in zip(bottoms, heights, strict=True)]
    # Device totals above the pod series: a stale scheduler cache or pods without series.
    rest = [t - b if t - b > 0.5 else 0.0 for t, b in zip(totals, bottoms, strict=True)]
    _bars(ax, xs, rest, bottoms, width, UNATTRIBUTED_COLOUR, hatch="//")
    tops = [max(t, b) for t, b in zip(totals, bottoms, strict=True)]
    free = [max(0.0, 100.0 - t) for t in tops]
    _bars(ax, xs, free, tops, width, FREE_COLOUR, edgecolor="#d0d0d0")
    return max([100.0, *tops])


def _percent_axis(ax: Any, ylabel: str, top: float) -> None:
    ax.set_ylim(0, top * 1.02)
    ax.set_ylabel(ylabel, fontsize=9.5)
    ax.yaxis.set_major_formatter("{x:.0f}%")
    ax.spines[["top", "right"]].set_visible(False)
    ax.tick_params(axis="both", labelsize=LABEL_PT)
    ax.axhline(100, color="#888888", linewidth=0.6, linestyle="--")


def _two_panels(frame: _Frame, bottom_in: float) -> tuple[Any, Any]:
    """Cores above memory, sharing the x axis, between the header and ``bottom_in``."""
    top_in = frame.height_in - HEADER_IN - 0.15
    gap_in = 0.45
    height_in = (top_in - bottom_in - gap_in) / 2
    right = frame.plot_right_in
    ax_mem = frame.axes(LEFT_IN, bottom_in, right, bottom_in + height_in)
    ax_cores = frame.axes(LEFT_IN, top_in - height_in, right, top_in, sharex=ax_mem)
    ax_cores.tick_params(axis="x", labelbottom=False, length=0)
    return ax_cores, ax_mem


def _legend_extras(
    summary: Summary, stacks: dict[str, dict[str, tuple[float, float]]]
) -> list[tuple[str, str, str]]:
    extra = [(FREE_COLOUR, "", FREE_LABEL)]
    if _has_unattributed(summary, stacks):
        extra.append((UNATTRIBUTED_COLOUR, "//", UNATTRIBUTED_LABEL))
    return extra


def _footnote(frame: _Frame, notes: Sequence[str]) -> None:
    text = " \u00b7 ".join(n for n in notes if n)
    if text:
        frame.figure.text(
            frame.x(LEFT_IN),
            frame.y(0.12),
            text[0].upper() + text[1:] + ".",
            fontsize=8,
            color="#555555",
        )


# ------------------------------------------------------------------------------ layouts


def _draw_per_gpu(frame: _Frame, summary: Summary, legend: _Legend) -> None:
    gpus = sorted(summary.gpus, key=lambda g: (g.node, g.device_index))
    labels, label_note = _node_labels(sorted({g.node for g in gpus}))
    xs: list[float] = []
    groups: list[tuple[str, float, float]] = []  # (node, first x, last x)
    x = 0.0
    for i, g in enumerate(gpus):
        if i and g.node != gpus[i - 1].node:
            x += 0.6  # a gap between nodes
        xs.append(x)
        if groups and groups[-1][0] == g.node:
            groups[-1] = (g.node, groups[-1][1], x)
        else:
            groups.append((g.node, x, x))
        x += 1.0
    slots = max(xs[-1] + 1.0, 8.0)  # at least 8 bar widths, so one GPU is not one wide slab
    slot_in = (frame.plot_right_in - LEFT_IN) / (slots + 0.4)
    several = any(last > first for _, first, last in groups)
    # Node names lie flat when each fits under its group, else they stand up.
    flat = all(
        _text_width_in(labels[node], 8) < (last - first + 1.0) * slot_in
        for node, first, last in groups
    )
    label_in = 0.25 if flat else max(_text_width_in(labels[n], 8) for n, _, _ in groups)
    bottom_in = 0.45 + label_in + (0.2 if several else 0.0)
    ax_cores, ax_mem = _two_panels(frame, bottom_in)
    stacks = _stacks_by_device(summary, legend)
    for ax, what, index, limit, total in (
        (ax_cores, "cores", 0, "core_limit", "core_allocated_percent"),
        (ax_mem, "memory", 1, "mem_limit_mib", "mem_allocated_percent"),
    ):
        bars = [
            {
                k: _percent(v[index], getattr(g, limit))
                for k, v in stacks.get(g.device_uuid, {}).items()
            }
            for g in gpus
        ]
        top = _stack_bars(ax, xs, bars, [getattr(g, total) for g in gpus], legend, 0.8)
        _percent_axis(ax, f"{what} allocated\n(% of each GPU)", top)
    ax_mem.set_xlim(-0.7, slots - 0.3)
    _label_gpu_groups(ax_mem, gpus, xs, groups, labels, flat=flat, several=several)
    _add_legend(frame, legend, _legend_extras(summary, stacks))
    _footnote(frame, [label_note])


def _label_gpu_groups(
    ax: Any,
    gpus: Sequence[GpuSummary],
    xs: Sequence[float],
    groups: Sequence[tuple[str, float, float]],
    labels: dict[str, str],
    *,
    flat: bool,
    several: bool,
) -> None:
    """GPU index under each bar (when nodes have several), node name under each group."""
    from matplotlib.transforms import ScaledTranslation, blended_transform_factory

    ax.set_xticks(list(xs), [str(g.device_index) for g in gpus] if several else [""] * len(xs))
    ax.tick_params(axis="x", length=2 if several else 0, labelsize=LABEL_PT)
    # Node names sit a fixed distance (in inches) below the axis, under the GPU indexes.
    drop_in = 0.3 if several else 0.08
    base = blended_transform_factory(ax.transData, ax.transAxes)
    shifted = base + ScaledTranslation(0, -drop_in, ax.figure.dpi_scale_trans)
    for node, first, last in groups:
        centre = (first + last) / 2
        if flat:
            ax.text(centre, 0, labels[node], transform=shifted, fontsize=8, ha="center", va="top")
        else:
            ax.text(
                centre,
                0,
                labels[node],
                transform=shifted,
                fontsize=8,
                ha="right",
                va="center",
                rotation=90,
                rotation_mode="anchor",
            )
        if last > first:  # a bracket under the node's GPUs
            bracket = base + ScaledTranslation(0, -(drop_in - 0.06), ax.figure.dpi_scale_trans)
            ax.plot(
                [first - 0.4, last + 0.4],
                [0, 0],
                transform=bracket,
                color="#999999",
                linewidth=0.8,
                clip_on=False,
            )


def _draw_per_node(frame: _Frame, summary: Summary, legend: _Legend) -> None:
    nodes: list[NodeSummary] = sorted(summary.nodes, key=lambda n: n.node)
    node_of = {g.device_uuid: g.node for g in summary.gpus}
    stacks = _stacks_by_device(summary, legend)
    per_node: dict[str, dict[str, list[float]]] = defaultdict(dict)
    for dev_uuid, keyed in stacks.items():
        bucket = per_node[node_of[dev_uuid]]
        for key, (cores, mem) in keyed.items():
            sums = bucket.setdefault(key, [0.0, 0.0])
            sums[0] += cores
            sums[1] += mem
    labels, label_note = _node_labels([n.node for n in nodes])
    positions, step = _thin(len(nodes), MAX_NODE_LABELS)
    label_in = max(_text_width_in(labels[nodes[i].node]) for i in positions)
    ax_cores, ax_mem = _two_panels(frame, 0.45 + label_in + 0.1)
    xs = [float(i) for i in range(len(nodes))]
    for ax, what, index, limit, total in (
        (ax_cores, "cores", 0, "core_limit", "core_allocated_percent"),
        (ax_mem, "memory", 1, "mem_limit_mib", "mem_allocated_percent"),
    ):
        bars = [
            {k: _percent(v[index], getattr(n, limit)) for k, v in per_node.get(n.node, {}).items()}
            for n in nodes
        ]
        top = _stack_bars(ax, xs, bars, [getattr(n, total) for n in nodes], legend, 0.85)
        _percent_axis(ax, f"{what} allocated\n(% of the node's GPUs)", top)
    ax_mem.set_xlim(-0.6, max(len(nodes), 8) - 0.4)
    ax_mem.set_xticks(positions, [labels[nodes[i].node] for i in positions], rotation=90)
    ax_mem.tick_params(axis="x", labelsize=LABEL_PT, length=2)
    thinned = f"one node name in {step} is shown ({len(nodes)} nodes)" if step > 1 else ""
    _add_legend(frame, legend, _legend_extras(summary, stacks))
    _footnote(frame, [thinned, label_note])


def _draw_heatmap(frame: _Frame, summary: Summary, legend: _Legend) -> None:
    import numpy as np
    from matplotlib import colormaps
    from matplotlib.colors import Normalize

    names = sorted({g.node for g in summary.gpus})
    column = {n: i for i, n in enumerate(names)}
    depth = max(g.device_index for g in summary.gpus) + 1
    per_band = min(len(names), HEATMAP_MAX_COLUMNS)
    bands = math.ceil(len(names) / per_band)
    cores = np.full((bands * depth, per_band), np.nan)
    mem = np.full((bands * depth, per_band), np.nan)
    for g in summary.gpus:
        band, col = divmod(column[g.node], per_band)
        cores[band * depth + g.device_index, col] = g.core_allocated_percent
        mem[band * depth + g.device_index, col] = g.mem_allocated_percent

    labels, label_note = _node_labels(names)
    row_labels = _band_labels(names, labels, per_band, bands, depth)
    left_in = max(LEFT_IN, 0.3 + max(_text_width_in(t) for _, t in row_labels))
    positions, step = _thin(len(names), 32) if bands == 1 else _thin(per_band, 20)
    tick_in = max(_text_width_in(labels[names[i]]) for i in positions) if bands == 1 else 0.2
    right_in = frame.plot_right_in - 0.6  # the colour bar sits right of the heatmaps
    share_top_in = 1.35
    mem_bottom_in = share_top_in + 0.75 + tick_in + 0.3
    top_in = frame.height_in - HEADER_IN - 0.35
    height_in = (top_in - mem_bottom_in - 0.45) / 2
    ax_mem = frame.axes(left_in, mem_bottom_in, right_in, mem_bottom_in + height_in)
    ax_cores = frame.axes(left_in, top_in - height_in, right_in, top_in, sharex=ax_mem)

    cmap = colormaps["YlOrRd"].with_extremes(over="#4a0a5c", bad="#ffffff")
    image = None
    for ax, values, what in ((ax_cores, cores, "cores"), (ax_mem, mem, "memory")):
        image = ax.imshow(
            np.ma.masked_invalid(values),
            aspect="auto",
            cmap=cmap,
            norm=Normalize(vmin=0, vmax=100),
            interpolation="nearest",
        )
        ax.set_title(f"{what} allocated, % of each GPU", fontsize=9.5, loc="left")
        ax.set_yticks([r for r, _ in row_labels], [t for _, t in row_labels])
        ax.tick_params(axis="both", labelsize=LABEL_PT, length=2)
        for b in range(1, bands):
            ax.axhline(b * depth - 0.5, color="white", linewidth=1.5)
    ax_cores.tick_params(axis="x", labelbottom=False)
    if bands == 1:
        ax_mem.set_xticks(positions, [labels[names[i]] for i in positions], rotation=90)
        notes = [f"one node name in {step} is shown ({len(names)} nodes)" if step > 1 else ""]
    else:
        ax_mem.set_xticks(positions, [f"+{p}" for p in positions])
        rows = f"; each band is GPU 0-{depth - 1} of its nodes, top to bottom" if depth > 1 else ""
        ax_mem.set_xlabel(
            f"node position within each band of {per_band} nodes, sorted by name{rows}", fontsize=8
        )
        notes = []
    if bool(np.isnan(cores).any()):
        notes.append("white: no GPU at that index on the node")
    colourbar = frame.figure.colorbar(
        image, cax=frame.axes(right_in + 0.15, mem_bottom_in, right_in + 0.27, top_in), extend="max"
    )
    colourbar.ax.tick_params(labelsize=LABEL_PT)
    colourbar.ax.yaxis.set_major_formatter("{x:.0f}%")
    colourbar.set_label("allocated (over 100%: overcommitted)", fontsize=8)
    _draw_namespace_shares(frame.axes(left_in, 0.55, right_in, share_top_in), summary, legend)
    _add_legend(frame, legend, [])
    _footnote(frame, [*notes, label_note])


def _band_labels(
    names: Sequence[str], labels: dict[str, str], per_band: int, bands: int, depth: int
) -> list[tuple[float, str]]:
    """(row, text) for the heatmap's y axis: GPU indexes, or each band's node range."""
    if bands == 1:
        rows, _ = _thin(depth, 16)
        return [(float(r), f"GPU {r}") for r in rows]
    centres, _ = _thin(bands, max(1, int(6 * depth)))  # at most ~6 labels per GPU row height
    out = []
    for b in centres:
        first = labels[names[b * per_band]]
        last = labels[names[min(len(names), (b + 1) * per_band) - 1]]
        out.append((b * depth + (depth - 1) / 2, _range_label(first, last)))
    return out


def _range_label(first: str, last: str) -> str:
    """``gpu-node-0001 \u2013 0500``: the last name without the start it shares with the first."""
    shared = 0
    while shared < min(len(first), len(last)) and first[shared] == last[shared]:
        shared += 1
    while shared > 0 and last[shared - 1] not in "-._/":
        shared -= 1  # cut at a separator, so 0500 is not shown as 500
    return first if first == last else f"{first} \u2013 {last[shared:]}"


def _draw_namespace_shares(ax: Any, summary: Summary, legend: _Legend) -> None:
    """Each namespace's share of all allocated cores and memory, as two stacked rows."""
    shares: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for ns in summary.namespaces:
        key = legend.key(ns.namespace)
        shares[key][0] += ns.core_share_percent
        shares[key][1] += ns.mem_share_percent
    lefts = [0.0, 0.0]
    for key in legend.order():
        widths = shares.get(key, [0.0, 0.0])
        style = legend.styles[key]
        ax.barh(
            [1, 0],
            widths,
            left=lefts,
            color=style.colour,
            hatch=style.hatch,
            edgecolor="white",
            linewidth=0.5,
            height=0.7,
        )
        lefts = [a + b for a, b in zip(lefts, widths, strict=True)]
    ax.set_yticks([1, 0], ["cores", "memory"])
    ax.set_xlim(0, 100)
    ax.xaxis.set_major_formatter("{x:.0f}%")
    ax.set_title("share of all allocated cores and memory, by namespace", fontsize=9.5, loc="left")
    ax.tick_params(labelsize=LABEL_PT)
    ax.spines[["top", "right"]].set_visible(False)
