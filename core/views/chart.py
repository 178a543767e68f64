"""PNG chart of GPU allocation: who holds the GPUs, and where there is room.

Rendered with matplotlib's object API on the Agg canvas (``Figure`` + ``FigureCanvasAgg``),
never pyplot: no global figure state, no display, usable from a bot's worker threads.
matplotlib itself is not thread-safe ("set up the proper locks to serialize access to
Matplotlib artists", its FAQ), so drawing is serialised by a module lock.

The layout follows what the input holds:

* up to ``PER_GPU_MAX_GPUS`` GPUs: one bar per GPU, grouped by node (``chart_per_gpu``);
* more GPUs: aggregated panels, per GPU model, per namespace against quotas, and the nodes
  with the most room or the most fragments (``chart_panels``), the same at any size;
* no scheduler device series but vGPU monitor readings: the runtime chart (``chart_runtime``);
* neither: a figure that says what the input lacks.

Namespace colours come from ``core.views.palette``: distinct in one chart, the same for a
namespace across charts given the same ranking (pass the cluster's ``ranking`` when drawing a
filtered summary, so a thread's charts agree).
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Final, Literal

from core.model import Summary
from core.views import chart_text as fmt
from core.views.chart_data import ChartData, chart_data
from core.views.chart_panels import draw_panels
from core.views.chart_per_gpu import draw_per_gpu
from core.views.chart_runtime import draw_runtime
from core.views.chart_style import MUTED_COLOUR, Frame, header, load_matplotlib, new_figure
from core.views.png_indexed import figure_png

Layout = Literal["per-gpu", "panels", "runtime", "empty"]

PER_GPU_MAX_GPUS: Final = 32
MAX_PNG_BYTES: Final = 1_000_000
DPI_STEPS: Final = (125, 100, 80)

NOTHING_KNOWN: Final = (
    "GPUs, nodes and allocation not known: no scheduler device series in this input"
)

_DRAW_LOCK = threading.Lock()


@contextmanager
def drawing() -> Iterator[None]:
    """Held while a chart is built and written: one at a time, with mathtext off for every
    text matplotlib makes (tick labels and legends too), so a name such as ``$x^$`` is drawn
    as written instead of parsed as a formula (a malformed one raised and lost the chart).
    A glyph the font lacks is drawn as a box without a warning: the warning would print the
    character itself, an escape sequence from a label among them, to the terminal or the log.

    Glyphs are drawn unhinted. matplotlib sets the font's size before each glyph it draws, and
    with the font's own (TrueType bytecode) hinting FreeType then reruns the font's set-up
    program for every glyph: that was a third of the time spent on text, and at 125 dpi the
    unhinted text reads the same."""
    load_matplotlib()
    import matplotlib

    with (
        _DRAW_LOCK,
        matplotlib.rc_context({"text.parse_math": False, "text.hinting": "no_hinting"}),
        warnings.catch_warnings(),
    ):
        warnings.filterwarnings("ignore", "Glyph .* missing from font", UserWarning)
        yield


def choose_layout(summary: Summary) -> Layout:
    """The layout ``render_chart`` uses for this summary (see the module docstring)."""
    if summary.gpus:
        return "per-gpu" if len(summary.gpus) <= PER_GPU_MAX_GPUS else "panels"
    runtime = summary.runtime
    if runtime is not None and (runtime.host_gpus or runtime.containers):
        return "runtime"
    return "empty"


def render_chart(
    summary: Summary, *, title: str | None = None, ranking: Sequence[str] | None = None
) -> bytes:
    """The chart of ``summary`` as PNG bytes, under 1 MB.

    ``ranking``: the cluster's namespaces, largest first (``palette.namespace_ranking`` of the
    unfiltered summary), so a filtered chart gives each namespace its cluster chart's colour.
    """
    data = b""
    for dpi in DPI_STEPS:  # lower resolutions only if a rendering were ever too large
        with drawing():
            data = _png_bytes(build_figure(summary, title=title, ranking=ranking), dpi)
        if len(data) < MAX_PNG_BYTES:
            break
    return data


def build_figure(
    summary: Summary, *, title: str | None = None, ranking: Sequence[str] | None = None
) -> Any:
    """The matplotlib ``Figure`` behind ``render_chart`` (exposed for layout checks)."""
    layout = choose_layout(summary)
    frame = new_figure()
    if layout == "runtime":
        top = header(frame, chart_title(summary, title, "HAMi GPU runtime"), runtime_lines(summary))
        draw_runtime(frame, summary, top, ranking)
        return frame.figure
    if layout == "empty":
        known = ["cluster: " + cluster_line(summary)] if summary.filters else [NOTHING_KNOWN]
        header(frame, chart_title(summary, title), known)
        _draw_nothing(frame, summary)
        return frame.figure
    data = chart_data(summary, ranking)
    top = header(frame, chart_title(summary, title), allocation_lines(summary, data, layout))
    if layout == "per-gpu":
        draw_per_gpu(frame, summary, data, top)
    else:
        draw_panels(frame, data, top)
    return frame.figure


def _png_bytes(figure: Any, dpi: int) -> bytes:
    # An indexed PNG: a quarter of matplotlib's RGBA file, and no "Software" text chunk, so
    # the same summary gives the same bytes.
    return figure_png(figure, dpi)


# ------------------------------------------------------------------------------ header text


def chart_title(summary: Summary, title: str | None, default: str = "HAMi GPU allocation") -> str:
    source = summary.source
    where = source.label
    if source.cluster:
        where = source.cluster + (f" / {source.context}" if source.context else "")
    when = "scrape time unknown"
    if source.fetched_at is not None:
        when = source.fetched_at.strftime("%Y-%m-%d %H:%M:%S %Z").strip()
    return f"{title or default} \u2014 {fmt.short_name(where, 48)} \u2014 {when}"


def cluster_line(summary: Summary) -> str:
    """The cluster's headline: GPUs, nodes, cores and memory allocated, whole GPUs free."""
    c = summary.cluster
    return (
        f"{fmt.count(c.gpus, 'GPU')} on {fmt.count(c.nodes, 'node')} \u00b7 cores "
        f"{fmt.percent(c.core_allocated_percent)} and memory {fmt.percent(c.mem_allocated_percent)}"
        f" allocated ({fmt.memory_total(c.mem_allocated_mib)} of "
        f"{fmt.memory_total(c.mem_limit_mib)}) \u00b7 {fmt.count(c.free_whole_gpus, 'whole GPU')}"
        " free"
    )


def allocation_lines(summary: Summary, data: ChartData, layout: Layout) -> list[str]:
    """What the chart covers: the cluster's headline, or the filter and the cluster beside it."""
    cluster = cluster_line(summary)
    what = (
        "one bar per GPU, grouped by node"
        if layout == "per-gpu"
        else "each bar counts GPUs, split by who holds their cores"
    )
    basis = f"HAMi scheduler allocation, not GPU utilisation \u00b7 {what}"
    if data.incomplete_gpus:
        basis += f" \u00b7 {fmt.count(data.incomplete_gpus, 'GPU')} with figures not known"
    if data.scope == "cluster":
        return [cluster, basis]
    gpus = summary.gpus
    cores = sum(w.cores for w in summary.workloads)
    mem = sum(w.mem_mib for w in summary.workloads)
    if data.scope == "namespace":
        scope = (
            f"namespace {fmt.short_name(data.scope_name, 40)}: {fmt.cores(cores)} and "
            f"{fmt.memory_total(mem)} on {fmt.count(len(gpus), 'GPU')} of "
            f"{fmt.count(len({g.node for g in gpus}), 'node')} (other namespaces' pods in grey)"
        )
    else:
        scope = (
            f"node {fmt.short_name(data.scope_name, 40)}: {fmt.count(len(gpus), 'GPU')}, "
            f"{fmt.cores(cores)} and {fmt.memory_total(mem)} held by pods"
        )
    return [scope, "cluster: " + cluster, basis]


def runtime_lines(summary: Summary) -> list[str]:
    runtime = summary.runtime
    hosts = runtime.host_gpus if runtime else ()
    containers = runtime.containers if runtime else ()
    nodes = len({h.node for h in hosts})
    return [
        f"{fmt.count(len(hosts), 'GPU')} on {fmt.count(nodes, 'node')} and "
        f"{fmt.count(len(containers), 'container')} read by the vGPU monitor \u00b7 memory in "
        "use and utilisation at the scrape, not allocation",
        "allocation, free capacity and the cluster's GPU count not known: the input has no "
        "scheduler series",
    ]


def _draw_nothing(frame: Frame, summary: Summary) -> None:
    filters = dict(summary.filters)
    if "namespace" in filters:
        text = f"No GPU in this input is allocated to namespace {filters['namespace']}"
    elif filters:
        text = "No GPU matches the filter " + ", ".join(f"{k}={v}" for k, v in summary.filters)
    else:
        text = (
            "No GPU devices in this input: it has no scheduler allocation series and no vGPU "
            "monitor readings"
        )
    frame.figure.text(0.5, 0.5, text, ha="center", va="center", fontsize=13, color=MUTED_COLOUR)
