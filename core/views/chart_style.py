"""Size, type and placement shared by the chart layouts.

Slack shows an image in a message 360 px tall. Text of ``pt`` points on a figure ``h`` inches
tall is ``pt * 360 / (72 * h)`` px there, whatever the DPI: the type sizes below keep the
smallest text at 7 px or more at that size on the 7.2-inch figure (and sharp when opened at full
size, 1,600 x 900 px).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

FIG_WIDTH_IN: Final = 12.8
FIG_HEIGHT_IN: Final = 7.2
DPI: Final = 125

TITLE_PT: Final = 16.5
PANEL_TITLE_PT: Final = 13.5
BODY_PT: Final = 12.0
SMALL_PT: Final = 11.5
TEXT_COLOUR: Final = "#222222"
MUTED_COLOUR: Final = "#555555"
WARN_COLOUR: Final = "#b35900"
OVER_COLOUR: Final = "#c0001a"


def load_matplotlib() -> None:
    """Import the parts of matplotlib the charts draw with.

    Only a chart needs matplotlib, and importing it costs about half a second of CPU, so the
    chart modules import it here when they draw, not when they are imported: a summary without
    a chart never pays for it.
    """
    import matplotlib.backends.backend_agg
    import matplotlib.figure  # noqa: F401


def line_height_in(points: float) -> float:
    return points * 1.25 / 72.0


class Frame:
    """Placement in inches from the figure's bottom left, turned into figure fractions."""

    def __init__(self, figure: Any) -> None:
        self.figure = figure
        self.width_in = float(figure.get_figwidth())
        self.height_in = float(figure.get_figheight())

    def x(self, inches: float) -> float:
        return inches / self.width_in

    def y(self, inches: float) -> float:
        return inches / self.height_in

    def y_top(self, inches: float) -> float:
        """``inches`` below the top edge."""
        return 1.0 - inches / self.height_in

    def axes(self, left_in: float, bottom_in: float, width_in: float, height_in: float) -> Any:
        box = (self.x(left_in), self.y(bottom_in), self.x(width_in), self.y(height_in))
        ax = self.figure.add_axes(box)
        return ax

    def measure(self, text: str, points: float, *, bold: bool = False) -> float:
        """The width in inches ``text`` takes at ``points`` (the widest line)."""
        from matplotlib.font_manager import FontProperties

        renderer = self.figure.canvas.get_renderer()
        font = FontProperties(size=points, weight="bold" if bold else "normal")
        widest = 0.0
        for line in text.split("\n"):
            width, _, _ = renderer.get_text_width_height_descent(line, font, ismath=False)
            widest = max(widest, width)
        return float(widest / self.figure.dpi)

    def text(self, left_in: float, top_in: float, text: str, **kw: Any) -> Any:
        """Text at ``left_in`` from the left and ``top_in`` below the top (its top, by default)."""
        kw.setdefault("fontsize", BODY_PT)
        kw.setdefault("color", TEXT_COLOUR)
        kw.setdefault("va", "top")
        # Names come from the input: a "$" in one must not turn it into mathematical notation.
        kw.setdefault("parse_math", False)
        return self.figure.text(self.x(left_in), self.y_top(top_in), text, **kw)


def new_figure(width_in: float = FIG_WIDTH_IN, height_in: float = FIG_HEIGHT_IN) -> Frame:
    load_matplotlib()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width_in, height_in), dpi=DPI)
    FigureCanvasAgg(figure)
    return Frame(figure)


def bare(ax: Any) -> None:
    """An axes with no frame and no ticks: bars that carry their numbers as text."""
    ax.set_axis_off()


def header(frame: Frame, title: str, lines: Sequence[str]) -> float:
    """Title and subtitle lines at the top; returns the inches they take."""
    frame.text(0.25, 0.16, title, fontsize=TITLE_PT)
    top = 0.16 + line_height_in(TITLE_PT) + 0.08
    for line in lines:
        frame.text(0.25, top, line, fontsize=SMALL_PT, color=MUTED_COLOUR)
        top += line_height_in(SMALL_PT) + 0.02
    return top + 0.1
