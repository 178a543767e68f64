"""The chart of a small cluster: one bar per GPU, grouped by node, cores above memory.

Each bar is stacked by namespace (the pods' allocations on that GPU), then what the device
reports beyond its pod series (in a namespace's chart: the other namespaces' pods), then free
space to 100 %. Percentages are of each device's own limit, so GPUs of different sizes compare.
Under each node's group: its name and GPU model.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from core.model import GpuSummary, Summary
from core.views import chart_text as fmt
from core.views.chart_data import (
    FRAGMENT_KEY,
    FREE_KEY,
    OTHER_KEY,
    UNATTRIBUTED_KEY,
    UNKNOWN_KEY,
    ChartData,
    Style,
)
from core.views.chart_style import (
    BODY_PT,
    MUTED_COLOUR,
    SMALL_PT,
    Frame,
    line_height_in,
)
from core.views.palette import EDGE_COLOUR, FREE_COLOUR, OTHER_COLOUR, UNATTRIBUTED_COLOUR

LEFT_IN: Final = 1.05  # the y axis label and tick labels
MIN_LEGEND_IN: Final = 2.2
GROUP_GAP: Final = 0.6  # between nodes, in bar widths
MIN_SLOTS: Final = 8.0  # so one GPU is not one wide slab


@dataclass(frozen=True, slots=True)
class _Group:
    node: str
    first: float
    last: float


def draw_per_gpu(frame: Frame, summary: Summary, data: ChartData, top_in: float) -> None:
    gpus = sorted(summary.gpus, key=lambda g: (g.node, g.device_index, g.device_uuid))
    xs, groups = _positions(gpus)
    labels, label_note = fmt.node_labels(g.node for g in gpus)
    short_models = fmt.model_short_names(g.device_type for g in gpus)
    models = {
        node: " + ".join(sorted({short_models[g.device_type] for g in gpus if g.node == node}))
        for node in labels
    }
    stacks, beyond = _stacks(summary, data, gpus)
    styles = dict(data.styles)
    entries = _legend_entries(styles, stacks, beyond)
    legend_in = max(MIN_LEGEND_IN, max(frame.measure(s.label, BODY_PT) for s in entries) + 1.2)
    slots = max(xs[-1] + 1.0, MIN_SLOTS)
    right_in = frame.width_in - legend_in
    slot_in = (right_in - LEFT_IN) / (slots + 0.4)
    several = any(g.last > g.first for g in groups)
    flat = all(
        max(frame.measure(labels[g.node], SMALL_PT), frame.measure(models[g.node], SMALL_PT))
        < (g.last - g.first + 1.0) * slot_in
        for g in groups
    )
    if flat:
        label_in = 2 * line_height_in(SMALL_PT) + 0.1
    else:
        label_in = max(
            frame.measure(f"{labels[g.node]} \u00b7 {models[g.node]}", SMALL_PT) for g in groups
        )
    bottom_in = 0.35 + label_in + (line_height_in(SMALL_PT) + 0.12 if several else 0.05)
    panel_top = frame.height_in - top_in - 0.15
    gap_in = 0.4
    height_in = (panel_top - bottom_in - gap_in) / 2
    ax_mem = frame.axes(LEFT_IN, bottom_in, right_in - LEFT_IN, height_in)
    ax_cores = frame.axes(LEFT_IN, panel_top - height_in, right_in - LEFT_IN, height_in)
    for ax, index, what in ((ax_cores, 0, "cores"), (ax_mem, 1, "memory")):
        top = _stack_bars(ax, xs, gpus, stacks, styles, index, beyond)
        _percent_axis(ax, f"{what} allocated\n(% of each GPU)", top)
        ax.set_xlim(-0.7, slots - 0.3)
    ax_cores.tick_params(axis="x", labelbottom=False, length=0)
    _label_groups(ax_mem, gpus, xs, groups, labels, models, flat=flat, several=several)
    _legend(frame, entries, right_in + 0.3, top_in)
    if label_note:
        frame.text(
            LEFT_IN,
            frame.height_in - 0.3,
            label_note[0].upper() + label_note[1:] + ".",
            fontsize=SMALL_PT,
            color=MUTED_COLOUR,
        )


def _positions(gpus: Sequence[GpuSummary]) -> tuple[list[float], list[_Group]]:
    xs: list[float] = []
    groups: list[_Group] = []
    x = 0.0
    for i, g in enumerate(gpus):
        if i and g.node != gpus[i - 1].node:
            x += GROUP_GAP
        xs.append(x)
        if groups and groups[-1].node == g.node:
            groups[-1] = _Group(g.node, groups[-1].first, x)
        else:
            groups.append(_Group(g.node, x, x))
        x += 1.0
    return xs, groups


def _stacks(
    summary: Summary, data: ChartData, gpus: Sequence[GpuSummary]
) -> tuple[dict[str, dict[str, list[float]]], str]:
    """Device UUID -> part key -> [cores, MiB]; and the key of allocation beyond the pods."""
    named = {k for k in data.styles if not k.startswith("\x00")}
    stacks: dict[str, dict[str, list[float]]] = defaultdict(dict)
    for w in summary.workloads:
        key = w.namespace if w.namespace in named else OTHER_KEY
        sums = stacks[w.device_uuid].setdefault(key, [0.0, 0.0])
        sums[0] += w.cores
        sums[1] += w.mem_mib
    beyond = OTHER_KEY if data.scope == "namespace" else UNATTRIBUTED_KEY
    for g in gpus:
        parts = stacks[g.device_uuid]
        rest = [
            g.core_allocated - sum(v[0] for v in parts.values()),
            g.mem_allocated_mib - sum(v[1] for v in parts.values()),
        ]
        if rest[0] > 0.5 or rest[1] > 0.5:
            sums = parts.setdefault(beyond, [0.0, 0.0])
            sums[0] += max(0.0, rest[0])
            sums[1] += max(0.0, rest[1])
    return stacks, beyond


def _stack_bars(
    ax: Any,
    xs: Sequence[float],
    gpus: Sequence[GpuSummary],
    stacks: Mapping[str, Mapping[str, list[float]]],
    styles: Mapping[str, Style],
    index: int,
    beyond: str,
) -> float:
    """The stacked bars of one panel (0: cores, 1: memory); returns the highest top in %."""
    limit_of = [g.core_limit if index == 0 else g.mem_limit_mib for g in gpus]
    bottoms = [0.0] * len(gpus)
    order = [k for k in styles if k not in (FRAGMENT_KEY, FREE_KEY, UNKNOWN_KEY)]
    if beyond not in order:
        order.append(beyond)
    for key in order:
        heights = [
            _percent(stacks.get(g.device_uuid, {}).get(key, [0.0, 0.0])[index], limit)
            for g, limit in zip(gpus, limit_of, strict=True)
        ]
        style = styles.get(key) or _beyond_style(beyond)
        _bars(ax, xs, heights, bottoms, style)
        bottoms = [b + h for b, h in zip(bottoms, heights, strict=True)]
    free = [
        max(0.0, 100.0 - b) if limit > 0 else 0.0
        for b, limit in zip(bottoms, limit_of, strict=True)
    ]
    _bars(ax, xs, free, bottoms, Style(FREE_COLOUR, "", "free"), edge=EDGE_COLOUR)
    return max([100.0, *bottoms])


def _beyond_style(beyond: str) -> Style:
    if beyond == OTHER_KEY:
        return Style(OTHER_COLOUR, "", "other namespaces")
    return Style(UNATTRIBUTED_COLOUR, "xx", "allocated, no pod series")


def _percent(part: float, whole: float) -> float:
    return part / whole * 100.0 if whole > 0 else 0.0


def _bars(
    ax: Any,
    xs: Sequence[float],
    heights: Sequence[float],
    bottoms: Sequence[float],
    style: Style,
    *,
    edge: str = "white",
) -> None:
    from matplotlib.collections import PolyCollection

    half = 0.4
    boxes = [
        ((x - half, b), (x - half, b + h), (x + half, b + h), (x + half, b))
        for x, h, b in zip(xs, heights, bottoms, strict=True)
        if h > 0
    ]
    if boxes:
        ax.add_collection(
            PolyCollection(
                boxes,
                facecolors=style.colour,
                edgecolors=edge,
                linewidths=0.5,
                hatch=style.hatch or None,
            ),
            autolim=False,
        )


def _percent_axis(ax: Any, ylabel: str, top: float) -> None:
    ax.set_ylim(0, top * 1.02)
    ax.set_ylabel(ylabel, fontsize=SMALL_PT)
    ax.set_yticks([0, 50, 100] if top <= 110 else [0, 50, 100, 150, 200][: int(top // 50) + 1])
    ax.yaxis.set_major_formatter("{x:.0f}%")
    ax.spines[["top", "right"]].set_visible(False)
    ax.tick_params(axis="both", labelsize=SMALL_PT)
    ax.axhline(100, color="#888888", linewidth=0.6, linestyle="--")


def _label_groups(
    ax: Any,
    gpus: Sequence[GpuSummary],
    xs: Sequence[float],
    groups: Sequence[_Group],
    labels: Mapping[str, str],
    models: Mapping[str, str],
    *,
    flat: bool,
    several: bool,
) -> None:
    """GPU index under each bar (when nodes have several), node and model under each group."""
    from matplotlib.transforms import ScaledTranslation, blended_transform_factory

    ax.set_xticks(list(xs), [str(g.device_index) for g in gpus] if several else [""] * len(xs))
    ax.tick_params(axis="x", length=2 if several else 0, labelsize=SMALL_PT)
    drop_in = line_height_in(SMALL_PT) + 0.12 if several else 0.08
    base = blended_transform_factory(ax.transData, ax.transAxes)
    shifted = base + ScaledTranslation(0, -drop_in, ax.figure.dpi_scale_trans)
    for g in groups:
        centre = (g.first + g.last) / 2
        if flat:
            ax.text(
                centre,
                0,
                f"{labels[g.node]}\n{models[g.node]}",
                transform=shifted,
                fontsize=SMALL_PT,
                ha="center",
                va="top",
                linespacing=1.15,
                parse_math=False,
            )
        else:
            ax.text(
                centre,
                0,
                f"{labels[g.node]} \u00b7 {models[g.node]}",
                transform=shifted,
                fontsize=SMALL_PT,
                ha="right",
                va="center",
                rotation=90,
                rotation_mode="anchor",
                parse_math=False,
            )
        if g.last > g.first:  # a bracket under the node's GPUs
            bracket = base + ScaledTranslation(0, -(drop_in - 0.05), ax.figure.dpi_scale_trans)
            ax.plot(
                [g.first - 0.4, g.last + 0.4],
                [0, 0],
                transform=bracket,
                color="#999999",
                linewidth=0.8,
                clip_on=False,
            )


def _legend_entries(
    styles: Mapping[str, Style], stacks: Mapping[str, Mapping[str, list[float]]], beyond: str
) -> list[Style]:
    """The namespaces (and others) drawn, in stacking order, then free."""
    used = {key for parts in stacks.values() for key, (c, m) in parts.items() if c > 0 or m > 0}
    shown = [
        replace(s, label=fmt.short_name(s.label)) if not k.startswith("\x00") else s
        for k, s in styles.items()
        if k in used
    ]
    if beyond in used and beyond not in styles:
        shown.append(_beyond_style(beyond))
    shown.append(Style(FREE_COLOUR, "", "free"))
    return shown


def _legend(frame: Frame, entries: Sequence[Style], left_in: float, top_in: float) -> None:
    from matplotlib.patches import Patch

    handles = [
        Patch(
            facecolor=s.colour,
            hatch=s.hatch,
            edgecolor=EDGE_COLOUR if s.colour == FREE_COLOUR else "white",
            label=s.label,
        )
        for s in entries
    ]
    frame.figure.legend(
        handles=handles,
        loc="upper left",
        bbox_to_anchor=(frame.x(left_in), frame.y_top(top_in + 0.1)),
        fontsize=BODY_PT,
        frameon=False,
        title="namespace",
        title_fontsize=BODY_PT,
        alignment="left",
    )
