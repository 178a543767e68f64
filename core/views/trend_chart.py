"""PNG trend chart over a cluster's kept history: allocation per namespace, free GPUs per model.

Two panels sharing a time axis: cores allocated per namespace, stacked (the eight largest in
the newest snapshot, the rest as "other"), and free whole GPUs per model as lines. Snapshots are
kept at uneven intervals (recent ones 10 minutes apart, older ones one a day), so the x axis is
real time and every snapshot is marked: a long straight segment is a gap, not a steady state.

Drawn like ``core.views.chart`` (matplotlib's object API on Agg, under its drawing lock), with
namespace colours assigned as in the allocation chart (``core.views.palette``).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from core.history.snapshot import Snapshot
from core.views.chart import drawing
from core.views.names import short_type
from core.views.palette import OTHER_COLOUR, PALETTE, assign_colours
from core.visible_text import visible

TOP_NAMESPACES: Final = 8
OTHER_LABEL: Final = "other namespaces"
FIG_SIZE_IN: Final = (14.0, 8.0)
DPI: Final = 100


@dataclass(frozen=True, slots=True)
class TrendSeries:
    """The numbers behind the chart, oldest snapshot first."""

    times: tuple[datetime, ...]
    # (namespace or OTHER_LABEL, cores per snapshot), largest in the newest snapshot first
    namespace_cores: tuple[tuple[str, tuple[float, ...]], ...]
    # (model, free whole GPUs per snapshot), by model name
    free_whole: tuple[tuple[str, tuple[int, ...]], ...]


def trend_series(snapshots: Sequence[Snapshot], top: int = TOP_NAMESPACES) -> TrendSeries:
    """Per-snapshot series; a namespace or model absent from a snapshot counts 0 there."""
    ordered = sorted(snapshots, key=lambda s: s.taken_at)
    cores = [{n.namespace: n.cores for n in s.namespaces} for s in ordered]
    newest = cores[-1] if cores else {}
    everyone = {name for figures in cores for name in figures}
    ranked = sorted(everyone, key=lambda name: (-newest.get(name, 0.0), name))
    shown, rest = ranked[:top], ranked[top:]
    series = [(name, tuple(figures.get(name, 0.0) for figures in cores)) for name in shown]
    if rest:
        other = tuple(sum(figures.get(name, 0.0) for name in rest) for figures in cores)
        series.append((OTHER_LABEL, other))
    free = [{m.model: m.free_whole for m in s.models} for s in ordered]
    models = sorted({model for figures in free for model in figures})
    return TrendSeries(
        times=tuple(datetime.fromtimestamp(s.taken_at, UTC) for s in ordered),
        namespace_cores=tuple(series),
        free_whole=tuple((m, tuple(figures.get(m, 0) for figures in free)) for m in models),
    )


def render_trend_chart(snapshots: Sequence[Snapshot], *, title: str | None = None) -> bytes:
    """The trend chart as PNG bytes."""
    with drawing():
        figure = build_trend_figure(snapshots, title=title)
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    return buffer.getvalue()


def build_trend_figure(snapshots: Sequence[Snapshot], *, title: str | None = None) -> Any:
    """The matplotlib ``Figure`` behind ``render_trend_chart`` (exposed for checks)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    series = trend_series(snapshots)
    figure = Figure(figsize=FIG_SIZE_IN, dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    cluster = next((s.cluster for s in snapshots if s.cluster), None)
    figure.suptitle(title or _title(cluster, series), fontsize=13)
    top, bottom = figure.subplots(2, 1, sharex=True, height_ratios=(3, 2))
    if len(series.times) < 2:
        top.text(
            0.5,
            0.5,
            "Fewer than two snapshots kept: no trend yet",
            ha="center",
            va="center",
            transform=top.transAxes,
            color="#444444",
        )
    _draw_namespaces(top, series)
    _draw_free_gpus(bottom, series)
    return figure


def _title(cluster: str | None, series: TrendSeries) -> str:
    where = f"cluster {visible(cluster)}" if cluster else "the kept history"
    if not series.times:
        return f"Trend of {where}: no snapshots"
    first, last = series.times[0], series.times[-1]
    return (
        f"Trend of {where}: {len(series.times)} snapshots, "
        f"{first:%Y-%m-%d %H:%M} to {last:%Y-%m-%d %H:%M} UTC"
    )


def _draw_namespaces(ax: Any, series: TrendSeries) -> None:
    if series.times and series.namespace_cores:
        names = [name for name, _ in series.namespace_cores]
        colours = _distinct_colours(names)
        labels = [visible(name) for name in names]
        ax.stackplot(
            list(series.times),
            *[list(values) for _, values in series.namespace_cores],
            labels=labels,
            colors=colours,
            alpha=0.9,
        )
        for when in series.times:
            ax.axvline(when, color="#ffffff", linewidth=0.4, alpha=0.6)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    ax.set_ylabel("cores allocated (100 = one GPU)")
    ax.set_title(
        "Allocation per namespace (largest 8 now, the rest as other)", fontsize=10, loc="left"
    )
    ax.grid(axis="y", color="#dddddd", linewidth=0.6)


def _distinct_colours(names: Sequence[str]) -> list[str]:
    """Each namespace the colour the allocation chart gives it for this ranking (largest
    first); "other" in grey. Nine areas are told apart without hatching."""
    colours = assign_colours([name for name in names if name != OTHER_LABEL], len(names))
    return [OTHER_COLOUR if name == OTHER_LABEL else colours[name] for name in names]


def _draw_free_gpus(ax: Any, series: TrendSeries) -> None:
    for index, (model, values) in enumerate(series.free_whole):
        ax.plot(
            list(series.times),
            list(values),
            marker="o",
            markersize=3,
            linewidth=1.4,
            color=PALETTE[index % len(PALETTE)],
            label=visible(short_type(model)),
        )
    if series.free_whole:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    ax.set_ylabel("free whole GPUs")
    ax.set_ylim(bottom=0)
    ax.set_title("Free whole GPUs per model", fontsize=10, loc="left")
    ax.grid(axis="y", color="#dddddd", linewidth=0.6)
    ax.set_xlabel("time (UTC)")
