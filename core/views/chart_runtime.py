"""The chart of an input with vGPU monitor readings but no scheduler allocation series.

What the monitor says at the scrape, in three panels: each GPU's utilisation and memory in use
(the busiest first), memory in use per namespace, and the containers using the most memory
against their limits. Allocation, free capacity and node counts are not known from such input,
and the header says so; nothing is drawn as 0 for a figure that is missing.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any, Final

from core.model import ContainerRuntime, HostGpuRuntime, Summary
from core.views import chart_text as fmt
from core.views import palette
from core.views.chart_style import (
    BODY_PT,
    MUTED_COLOUR,
    PANEL_TITLE_PT,
    SMALL_PT,
    Frame,
)

MARGIN_IN: Final = 0.25
PITCH_IN: Final = 0.3
BAR_IN: Final = 0.19
TITLE_GAP_IN: Final = 0.34
UTILISATION_COLOUR: Final = "#4d4d4d"  # not a namespace colour: a reading, not a tenant
LIMIT_COLOUR: Final = palette.FREE_COLOUR


def draw_runtime(
    frame: Frame, summary: Summary, top_in: float, ranking: Sequence[str] | None
) -> None:
    runtime = summary.runtime
    hosts = list(runtime.host_gpus) if runtime else []
    containers = list(runtime.containers) if runtime else []
    used = _memory_by_namespace(containers)
    order = list(ranking) if ranking is not None else sorted(used, key=lambda n: (-used[n], n))
    colours = palette.assign_colours(list(dict.fromkeys(order))[: palette.NAMED_NAMESPACES])
    bottom_in = frame.height_in - 0.3
    half = (frame.width_in - 2 * MARGIN_IN - 0.35) / 2
    room = bottom_in - top_in - 2 * TITLE_GAP_IN - 0.25
    gpu_rows = max(1, min(len(hosts), int(room * 0.55 / PITCH_IN)))
    after_gpus = _gpus(frame, hosts, MARGIN_IN, top_in, half, gpu_rows)
    _namespaces(frame, used, colours, MARGIN_IN, top_in + after_gpus + 0.25, half, bottom_in)
    _containers(frame, containers, colours, MARGIN_IN + half + 0.35, top_in, half, bottom_in)


def _memory_by_namespace(containers: Sequence[ContainerRuntime]) -> dict[str, float]:
    used: dict[str, float] = defaultdict(float)
    for c in containers:
        if c.mem_used_mib is not None:
            used[c.namespace] += c.mem_used_mib
        else:
            used.setdefault(c.namespace, 0.0)
    return dict(used)


def _gpus(
    frame: Frame, hosts: Sequence[HostGpuRuntime], left: float, top: float, width: float, rows: int
) -> float:
    frame.text(
        left, top, "GPUs: utilisation and memory in use", fontsize=PANEL_TITLE_PT, fontweight="bold"
    )
    if not hosts:
        frame.text(
            left,
            top + TITLE_GAP_IN,
            "no host GPU readings (hami_host_gpu_*) in the input",
            fontsize=SMALL_PT,
            color=MUTED_COLOUR,
        )
        return TITLE_GAP_IN + PITCH_IN
    busiest = sorted(
        hosts, key=lambda h: (-(h.utilization_percent or -1.0), h.node, h.device_index)
    )
    shown = busiest[:rows]
    models = fmt.model_short_names(h.device_type for h in hosts)
    labels = [
        f"{fmt.short_name(h.node, 18)} / {h.device_index} \u00b7 {models[h.device_type]}"
        for h in shown
    ]
    label_in = min(2.5, max(frame.measure(t, SMALL_PT) for t in labels) + 0.1)
    bar_in = width - label_in - 2.1
    axes = _axes(frame, left + label_in, top + TITLE_GAP_IN, bar_in, len(shown))
    axes.set_xlim(0, 100)
    for i, (h, label) in enumerate(zip(shown, labels, strict=True)):
        axes.barh(i + 0.5, 100, height=BAR_IN / PITCH_IN, color=LIMIT_COLOUR, linewidth=0)
        if h.utilization_percent is not None:
            axes.barh(
                i + 0.5,
                min(h.utilization_percent, 100.0),
                height=BAR_IN / PITCH_IN,
                color=UTILISATION_COLOUR,
                linewidth=0,
            )
        centre = top + TITLE_GAP_IN + (i + 0.5) * PITCH_IN
        frame.text(left, centre, label, fontsize=SMALL_PT, va="center")
        value = (
            f"{fmt.percent(h.utilization_percent)} \u00b7 {fmt.memory_each(h.mem_used_mib)} used"
        )
        frame.text(left + label_in + bar_in + 0.12, centre, value, fontsize=SMALL_PT, va="center")
    used = TITLE_GAP_IN + len(shown) * PITCH_IN
    if len(hosts) > len(shown):
        frame.text(
            left,
            top + used,
            f"and {fmt.count(len(hosts) - len(shown), 'more GPU')}",
            fontsize=SMALL_PT,
            color=MUTED_COLOUR,
        )
        used += PITCH_IN
    return used


def _namespaces(
    frame: Frame,
    used: dict[str, float],
    colours: dict[str, str],
    left: float,
    top: float,
    width: float,
    bottom: float,
) -> None:
    frame.text(left, top, "memory in use per namespace", fontsize=PANEL_TITLE_PT, fontweight="bold")
    if not used:
        frame.text(
            left,
            top + TITLE_GAP_IN,
            "no container readings in the input",
            fontsize=SMALL_PT,
            color=MUTED_COLOUR,
        )
        return
    ranked = sorted(used, key=lambda n: (-used[n], n))
    room = max(1, int((bottom - top - TITLE_GAP_IN) / PITCH_IN))
    named = [n for n in ranked if n in colours][: room - 1 if len(ranked) > room else room]
    rows = [(n, fmt.short_name(n), used[n], colours[n]) for n in named]
    rest = [n for n in ranked if n not in named]
    if rest:
        word = "namespace" if len(rest) == 1 else "namespaces"
        rows.append(
            ("", f"{len(rest)} other {word}", sum(used[n] for n in rest), palette.OTHER_COLOUR)
        )
    label_in = 1.95
    bar_in = width - label_in - 1.6
    axes = _axes(frame, left + label_in, top + TITLE_GAP_IN, bar_in, len(rows))
    axes.set_xlim(0, max(max(r[2] for r in rows), 1.0))
    for i, (_, label, mib, colour) in enumerate(rows):
        axes.barh(i + 0.5, mib, height=BAR_IN / PITCH_IN, color=colour, linewidth=0)
        centre = top + TITLE_GAP_IN + (i + 0.5) * PITCH_IN
        frame.text(left, centre, label, fontsize=BODY_PT, va="center")
        frame.text(
            left + label_in + bar_in + 0.12,
            centre,
            fmt.memory_total(mib),
            fontsize=SMALL_PT,
            va="center",
        )


def _containers(
    frame: Frame,
    containers: Sequence[ContainerRuntime],
    colours: dict[str, str],
    left: float,
    top: float,
    width: float,
    bottom: float,
) -> None:
    frame.text(
        left,
        top,
        "containers using the most memory, of their limit",
        fontsize=PANEL_TITLE_PT,
        fontweight="bold",
    )
    if not containers:
        frame.text(
            left,
            top + TITLE_GAP_IN,
            "no container readings in the input",
            fontsize=SMALL_PT,
            color=MUTED_COLOUR,
        )
        return
    room = max(1, int((bottom - top - TITLE_GAP_IN) / PITCH_IN) - 1)
    ordered = sorted(containers, key=lambda c: (-(c.mem_used_mib or 0.0), c.namespace, c.pod))
    shown = ordered[:room]
    labels = [fmt.short_name(f"{c.namespace}/{c.pod}", 26) for c in shown]
    label_in = min(2.4, max(frame.measure(t, SMALL_PT) for t in labels) + 0.1)
    bar_in = width - label_in - 1.9
    axes = _axes(frame, left + label_in, top + TITLE_GAP_IN, bar_in, len(shown))
    axes.set_xlim(0, 100)
    for i, (c, label) in enumerate(zip(shown, labels, strict=True)):
        share = _share(c)
        axes.barh(i + 0.5, 100, height=BAR_IN / PITCH_IN, color=LIMIT_COLOUR, linewidth=0)
        if share is not None:
            colour = colours.get(c.namespace, palette.OTHER_COLOUR)
            axes.barh(
                i + 0.5, min(share, 100.0), height=BAR_IN / PITCH_IN, color=colour, linewidth=0
            )
        centre = top + TITLE_GAP_IN + (i + 0.5) * PITCH_IN
        frame.text(left, centre, label, fontsize=SMALL_PT, va="center")
        value = f"{fmt.memory_each(c.mem_used_mib)} of {fmt.memory_each(c.mem_limit_mib)}"
        frame.text(left + label_in + bar_in + 0.12, centre, value, fontsize=SMALL_PT, va="center")
    if len(containers) > len(shown):
        frame.text(
            left,
            top + TITLE_GAP_IN + len(shown) * PITCH_IN,
            f"and {fmt.count(len(containers) - len(shown), 'more container')}",
            fontsize=SMALL_PT,
            color=MUTED_COLOUR,
        )


def _share(c: ContainerRuntime) -> float | None:
    if c.mem_used_percent is not None:
        return c.mem_used_percent
    if c.mem_used_mib is not None and c.mem_limit_mib:
        return c.mem_used_mib / c.mem_limit_mib * 100.0
    return None


def _axes(frame: Frame, left: float, top: float, width: float, rows: int) -> Any:
    height = max(rows, 1) * PITCH_IN
    axes = frame.axes(left, frame.height_in - top - height, width, height)
    axes.set_axis_off()
    axes.set_ylim(max(rows, 1), 0)
    return axes
