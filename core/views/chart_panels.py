"""The aggregated chart: who holds each GPU model, namespaces against quotas, nodes that matter.

Four panels a person reads in seconds, the same at 100 GPUs as at 8,000:

* GPU models (left, top): one bar per model, its GPUs split by namespace, fragments (free cores
  on partly used GPUs, hatched) and whole GPUs free; beside it the whole GPUs free and the
  cores free in fragments.
* Namespaces (left, bottom): the eight largest and the rest, cores allocated, each quota's
  cores limit drawn as an outline, and the most used quota limit as a percentage.
* Nodes (right): the nodes with the most whole GPUs free and the most fragmented ones (free
  cores on partly used GPUs), each bar the node's GPUs split as above. In a namespace's chart
  the first list is where that namespace holds the most.

Places are in inches; text widths are measured with the figure's renderer, and the rows of
each panel are cut to the room there is, so no two labels overlap.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from core.views import chart_text as fmt
from core.views.chart_data import (
    FRAGMENT_KEY,
    FREE_KEY,
    NON_NAMESPACE_KEYS,
    OTHER_KEY,
    UNKNOWN_KEY,
    BarRow,
    ChartData,
    NamespaceRow,
    Style,
)
from core.views.chart_style import (
    BODY_PT,
    MUTED_COLOUR,
    OVER_COLOUR,
    PANEL_TITLE_PT,
    SMALL_PT,
    WARN_COLOUR,
    Frame,
)
from core.views.palette import EDGE_COLOUR, OTHER_COLOUR

MARGIN_IN: Final = 0.25
COLUMN_GAP_IN: Final = 0.4
RIGHT_COLUMN_IN: Final = 4.75
PITCH_IN: Final = 0.25  # the least room per row; more when there are few rows
MAX_PITCH_IN: Final = 0.34
BAR_IN: Final = 0.17
TITLE_GAP_IN: Final = 0.32
PANEL_GAP_IN: Final = 0.2
TEXT_GAP_IN: Final = 0.1
KEY_IN: Final = 0.4
QUOTA_REACH: Final = 1.35  # a quota outline longer than this many largest bars is cut
QUOTA_EDGE_COLOUR: Final = "#333333"
MIN_NODE_ROWS: Final = 3
LIGHT_KEYS: Final = frozenset({FRAGMENT_KEY, FREE_KEY, UNKNOWN_KEY})  # outlined, not white-edged


@dataclass(frozen=True, slots=True)
class Box:
    """A panel's place in inches: left edge, top (below the figure's top), width, height."""

    left: float
    top: float
    width: float
    height: float
    pitch: float = PITCH_IN  # between rows

    def row_centre(self, index: int) -> float:
        return self.top + TITLE_GAP_IN + (index + 0.5) * self.pitch

    def rows(self) -> int:
        return max(0, int((self.height - TITLE_GAP_IN + 1e-6) / self.pitch))


def draw_panels(frame: Frame, data: ChartData, top_in: float) -> None:
    """The panels between ``top_in`` (inches below the top) and the key at the bottom."""
    bottom_in = frame.height_in - KEY_IN - 0.1
    left_width = frame.width_in - 2 * MARGIN_IN - COLUMN_GAP_IN - RIGHT_COLUMN_IN
    rows = len(data.models) + max(len(data.namespaces), 1)
    room = bottom_in - top_in - 2 * TITLE_GAP_IN - PANEL_GAP_IN
    pitch = min(MAX_PITCH_IN, max(PITCH_IN, room / rows))
    models_height = TITLE_GAP_IN + len(data.models) * pitch
    _models_panel(frame, data, Box(MARGIN_IN, top_in, left_width, models_height, pitch))
    ns_top = top_in + models_height + PANEL_GAP_IN
    _namespaces_panel(frame, data, Box(MARGIN_IN, ns_top, left_width, bottom_in - ns_top, pitch))
    right = Box(
        frame.width_in - MARGIN_IN - RIGHT_COLUMN_IN, top_in, RIGHT_COLUMN_IN, bottom_in - top_in
    )
    _nodes_panels(frame, data, right)
    _key(frame, data)


# ------------------------------------------------------------------------------ models


def _models_panel(frame: Frame, data: ChartData, box: Box) -> None:
    what = "its GPUs, by model" if data.scope == "namespace" else "GPU models"
    _title(frame, box, f"{what}: who holds the cores, what is free")
    labels = [f"{row.gpus:,} \u00d7 {fmt.short_name(row.label, 20)}" for row in data.models]
    texts = [_model_text(row, data.scope == "namespace") for row in data.models]
    label_in = max(frame.measure(t, BODY_PT) for t in labels) + TEXT_GAP_IN
    text_in = max(frame.measure(t, SMALL_PT) for t in texts) + TEXT_GAP_IN
    bar_in = box.width - label_in - text_in
    axes = _bar_axes(frame, box, label_in, bar_in, len(data.models))
    _stack(axes, box, data.models, data.styles, lambda row: float(row.gpus))
    for i, (label, text) in enumerate(zip(labels, texts, strict=True)):
        _line(frame, box.left, box.row_centre(i), label, BODY_PT)
        _line(frame, box.left + label_in + bar_in + TEXT_GAP_IN, box.row_centre(i), text, SMALL_PT)


def _model_text(row: BarRow, held: bool) -> str:
    if held:  # a namespace's chart: its GPUs are never free as a whole
        return f"{fmt.cores(row.held_cores)} held \u00b7 {fmt.cores(row.fragment_cores)} free"
    free = f"{row.free_whole:,} whole free"
    return f"{free} \u00b7 {fmt.cores(row.fragment_cores)} in fragments"


# ------------------------------------------------------------------------------ namespaces


def _namespaces_panel(frame: Frame, data: ChartData, box: Box) -> None:
    if data.scope == "namespace":
        title = f"namespace {fmt.short_name(data.scope_name, 24)}: cores against its quota"
    else:
        title = "namespaces: share of cores allocated, quota limit as outline"
    _title(frame, box, title)
    pods = data.pods if data.scope == "namespace" else ()
    rows = _fit_namespace_rows(list(data.namespaces), box.rows() - (len(pods) + 1 if pods else 0))
    if pods and rows:
        pod_top = box.top + TITLE_GAP_IN + len(rows) * box.pitch + PANEL_GAP_IN / 2
        _pods(
            frame,
            data,
            Box(box.left, pod_top, box.width, box.top + box.height - pod_top, box.pitch),
        )
    if not rows:
        _note(frame, box, "no namespace holds GPU allocations in this input")
        return
    _namespace_rows(frame, data, box, rows)


def _namespace_rows(frame: Frame, data: ChartData, box: Box, rows: Sequence[NamespaceRow]) -> None:
    """Name, cores bar (quota limit as outline), share and cores, most used quota limit."""
    labels = [fmt.short_name(r.label) for r in rows]
    shares = [f"{fmt.percent(r.core_share_percent)} \u00b7 {fmt.cores(r.cores)}" for r in rows]
    quotas = [_quota_words(r) for r in rows]
    label_in = max(frame.measure(t, BODY_PT) for t in labels) + TEXT_GAP_IN
    share_in = max(frame.measure(t, SMALL_PT) for t in shares) + TEXT_GAP_IN
    quota_in = max((frame.measure(q[0], SMALL_PT, bold=True) for q in quotas if q[0]), default=0.0)
    bar_in = box.width - label_in - share_in - quota_in - TEXT_GAP_IN
    axes = _bar_axes(frame, box, label_in, bar_in, len(rows))
    peak = max(max(r.cores for r in rows), 1.0)
    limits = [min(r.limit_cores, peak * QUOTA_REACH) for r in rows if r.limit_cores]
    axes.set_xlim(0, max([peak, *limits]) * 1.02)
    height = BAR_IN / box.pitch
    colours = [data.styles.get(r.key, Style(OTHER_COLOUR, "", r.label)).colour for r in rows]
    _row_bars(axes, [r.cores for r in rows], height, facecolors=colours)
    outlines = [r.limit_cores or 0.0 for r in rows]
    _row_bars(axes, outlines, height + 0.12, edgecolors=QUOTA_EDGE_COLOUR, linewidths=0.9)
    for i in range(len(rows)):
        centre = box.row_centre(i)
        _line(frame, box.left, centre, labels[i], BODY_PT)
        _line(frame, box.left + label_in + bar_in + TEXT_GAP_IN, centre, shares[i], SMALL_PT)
        text, colour = quotas[i]
        if text:
            weight = "normal" if colour == MUTED_COLOUR else "bold"
            frame.text(box.left + box.width, centre, text, fontsize=SMALL_PT, ha="right",
                       va="center", color=colour, fontweight=weight)  # fmt: skip


def _pods(frame: Frame, data: ChartData, box: Box) -> None:
    """A namespace's chart: its largest pods, cores and memory."""
    frame.text(box.left, box.top, "its largest pods", fontsize=BODY_PT, fontweight="bold")
    pods = data.pods[: max(box.rows(), 0)]
    if not pods:
        return
    labels = [fmt.short_name(pod, 30) for pod, _, _ in pods]
    texts = [f"{fmt.cores(c)} \u00b7 {fmt.memory_each(m)}" for _, c, m in pods]
    label_in = max(frame.measure(t, SMALL_PT) for t in labels) + TEXT_GAP_IN
    text_in = max(frame.measure(t, SMALL_PT) for t in texts) + TEXT_GAP_IN
    bar_in = box.width - label_in - text_in
    axes = _bar_axes(frame, box, label_in, bar_in, len(pods))
    axes.set_xlim(0, max(max(c for _, c, _ in pods), 1.0) * 1.02)
    colour = data.styles[data.scope_name].colour
    _row_bars(axes, [cores for _, cores, _ in pods], BAR_IN / box.pitch, facecolors=colour)
    for i in range(len(pods)):
        _line(frame, box.left, box.row_centre(i), labels[i], SMALL_PT)
        _line(
            frame, box.left + label_in + bar_in + TEXT_GAP_IN, box.row_centre(i), texts[i], SMALL_PT
        )


def _fit_namespace_rows(rows: list[NamespaceRow], room: int) -> list[NamespaceRow]:
    """The rows that fit: when they do not, the smallest named ones join "other"."""
    if len(rows) <= room or room <= 0:
        return rows[: max(room, 0)]
    keep, rest = rows[: room - 1], rows[room - 1 :]
    count = sum(r.members for r in rest)
    merged = NamespaceRow(
        key=OTHER_KEY,
        label=f"{count:,} other namespace" + ("s" if count != 1 else ""),
        cores=sum(r.cores for r in rest),
        mem_mib=sum(r.mem_mib for r in rest),
        core_share_percent=sum(r.core_share_percent for r in rest),
        mem_share_percent=sum(r.mem_share_percent for r in rest),
        quota=None,
        members=count,
    )
    return [*keep, merged]


def _quota_words(row: NamespaceRow) -> tuple[str, str]:
    """``quota 92.0%`` (``memory quota`` when memory is the most used) and its colour."""
    quota = row.quota
    if quota is None:
        return "", MUTED_COLOUR
    what = "quota" if quota.resource == "cores" else f"{fmt.short_name(quota.resource, 14)} quota"
    return f"{what} {fmt.percent(quota.percent)}", quota_colour(quota.percent)


def quota_colour(percent: float) -> str:
    """Red from 100 % of a limit, orange from 90 %, else the muted text colour."""
    if percent >= 100:
        return OVER_COLOUR
    return WARN_COLOUR if percent >= 90 else MUTED_COLOUR


# ------------------------------------------------------------------------------ nodes


def _nodes_panels(frame: Frame, data: ChartData, box: Box) -> None:
    if data.scope == "namespace":
        first_title = f"nodes where {fmt.short_name(data.scope_name, 18)} holds the most"
        first_empty = "none"
    else:
        first_title = "nodes with the most whole GPUs free"
        first_empty = "no node has a whole GPU free"
    rows_room = int((box.height - 2 * TITLE_GAP_IN - PANEL_GAP_IN) / PITCH_IN)
    first = data.first_nodes[: max(MIN_NODE_ROWS, rows_room // 2)]
    second = data.fragmented_nodes[: max(MIN_NODE_ROWS, rows_room - max(len(first), 1))]
    upper = Box(box.left, box.top, box.width, TITLE_GAP_IN + max(len(first), 1) * PITCH_IN)
    _node_list(frame, data, upper, first_title, first, _first_value(data), first_empty)
    lower_top = upper.top + upper.height + PANEL_GAP_IN
    lower = Box(box.left, lower_top, box.width, box.top + box.height - lower_top)
    _node_list(
        frame,
        data,
        lower,
        "most fragmented nodes",
        second[: lower.rows()],
        lambda r: f"{fmt.cores(r.fragment_cores)} free",
        "no partly used GPU has free cores",
    )


def _first_value(data: ChartData) -> Callable[[BarRow], str]:
    if data.scope == "namespace":
        return lambda row: fmt.cores(row.held_cores)
    return lambda row: f"{row.free_whole:,} of {row.gpus:,} free"


def _node_list(
    frame: Frame,
    data: ChartData,
    box: Box,
    title: str,
    rows: Sequence[BarRow],
    value: Callable[[BarRow], str],
    empty: str,
) -> None:
    _title(frame, box, title)
    if not rows:
        _note(frame, box, empty)
        return
    labels = [row.label for row in rows]
    values = [value(row) for row in rows]
    label_in = max(frame.measure(t, SMALL_PT) for t in labels) + TEXT_GAP_IN
    value_in = max(frame.measure(t, SMALL_PT) for t in values) + TEXT_GAP_IN
    bar_in = box.width - label_in - value_in
    axes = _bar_axes(frame, box, label_in, bar_in, len(rows))
    widest = float(max(row.gpus for row in rows))
    _stack(axes, box, rows, data.styles, lambda row: widest)
    for i, (label, text) in enumerate(zip(labels, values, strict=True)):
        _line(frame, box.left, box.row_centre(i), label, SMALL_PT)
        _line(frame, box.left + label_in + bar_in + TEXT_GAP_IN, box.row_centre(i), text, SMALL_PT)


# ------------------------------------------------------------------------------ drawing


def _bar_axes(frame: Frame, box: Box, label_in: float, bar_in: float, rows: int) -> Any:
    """An axes without frame or ticks for ``rows`` bars, row 0 at the top; x from 0 to 1."""
    height = max(rows, 1) * box.pitch
    top = box.top + TITLE_GAP_IN
    axes = frame.axes(box.left + label_in, frame.height_in - top - height, max(bar_in, 0.2), height)
    axes.set_axis_off()
    axes.set_xlim(0, 1.0)
    axes.set_ylim(max(rows, 1), 0)
    return axes


def _stack(
    axes: Any,
    box: Box,
    rows: Sequence[BarRow],
    styles: dict[str, Style],
    scale: Callable[[BarRow], float],
) -> None:
    """Each row's parts left to right in ``styles`` order, one collection per part."""
    from matplotlib.collections import PolyCollection

    half = BAR_IN / box.pitch / 2
    lefts = [0.0] * len(rows)
    for key, style in styles.items():
        boxes = []
        for i, row in enumerate(rows):
            width = row.parts.get(key, 0.0) / scale(row)
            if width <= 0:
                continue
            x0, x1, y = lefts[i], lefts[i] + width, i + 0.5
            boxes.append(((x0, y - half), (x0, y + half), (x1, y + half), (x1, y - half)))
            lefts[i] = x1
        if boxes:
            axes.add_collection(
                PolyCollection(
                    boxes,
                    facecolors=style.colour,
                    edgecolors=EDGE_COLOUR if key in LIGHT_KEYS else "white",
                    linewidths=0.5 if key in LIGHT_KEYS else 0.3,
                    hatch=style.hatch or None,
                ),
                autolim=False,
            )


def _row_bars(
    axes: Any,
    widths: Sequence[float],
    height: float,
    *,
    facecolors: str | Sequence[str] = "none",
    edgecolors: str = "none",
    linewidths: float = 0.0,
) -> None:
    """A bar from 0 to each width, row ``i`` centred on ``i + 0.5``, as one collection (one
    patch per bar cost more to add to the axes than to draw); rows of width 0 stay empty.
    ``facecolors``: one colour, or one per row."""
    from matplotlib.collections import PolyCollection

    half = height / 2
    shown = [(i, w) for i, w in enumerate(widths) if w > 0]
    if not shown:
        return
    if not isinstance(facecolors, str):
        facecolors = [facecolors[i] for i, _ in shown]
    boxes = [
        ((0.0, i + 0.5 - half), (0.0, i + 0.5 + half), (w, i + 0.5 + half), (w, i + 0.5 - half))
        for i, w in shown
    ]
    axes.add_collection(
        PolyCollection(boxes, facecolors=facecolors, edgecolors=edgecolors, linewidths=linewidths),
        autolim=False,
    )


def _title(frame: Frame, box: Box, text: str) -> None:
    frame.text(
        box.left,
        box.top,
        fit_text(frame, text, PANEL_TITLE_PT, box.width, bold=True),
        fontsize=PANEL_TITLE_PT,
        fontweight="bold",
    )


def fit_text(frame: Frame, text: str, points: float, width_in: float, *, bold: bool = False) -> str:
    """``text``, shortened with an ellipsis at the end until it fits ``width_in``."""
    if frame.measure(text, points, bold=bold) <= width_in:
        return text
    keep = len(text)
    while keep > 4 and frame.measure(text[:keep] + "\u2026", points, bold=bold) > width_in:
        keep -= 2
    return text[:keep].rstrip() + "\u2026"


def _note(frame: Frame, box: Box, text: str) -> None:
    frame.text(box.left, box.top + TITLE_GAP_IN, text, fontsize=SMALL_PT, color=MUTED_COLOUR)


def _line(frame: Frame, left_in: float, centre_in: float, text: str, points: float) -> None:
    frame.text(left_in, centre_in, text, fontsize=points, va="center")


def _key(frame: Frame, data: ChartData) -> None:
    """The parts that are not one namespace (the namespace panel names the namespaces)."""
    from matplotlib.patches import Patch

    rows = (*data.models, *data.first_nodes, *data.fragmented_nodes)
    drawn = {key for row in rows for key, value in row.parts.items() if value > 0}
    drawn |= {row.key for row in data.namespaces}
    handles = [
        Patch(
            facecolor=s.colour, hatch=s.hatch, edgecolor=EDGE_COLOUR, linewidth=0.5, label=s.label
        )
        for key, s in data.styles.items()
        if key in NON_NAMESPACE_KEYS and key in drawn
    ]
    if not handles:
        return
    frame.figure.legend(
        handles=handles,
        loc="lower left",
        bbox_to_anchor=(frame.x(MARGIN_IN - 0.08), frame.y(0.06)),
        ncols=len(handles),
        fontsize=SMALL_PT,
        frameon=False,
        handlelength=1.8,
        handleheight=1.0,
        columnspacing=1.6,
        borderaxespad=0.0,
    )
