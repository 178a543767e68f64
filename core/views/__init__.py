"""Renderings of a ``Summary``, registered by name so a new format touches one module.

Each view formats; none recomputes a number.
"""

from __future__ import annotations

from collections.abc import Callable

from core.model import Summary
from core.views import csv_view, json_view, markdown_view, text_view
from core.views.csv_view import CSV_TABLES

__all__ = ["CSV_TABLES", "TEXT_FORMATS", "TextView", "render"]

TextView = Callable[[Summary], str]

VIEWS: dict[str, TextView] = {
    "text": text_view.render,
    "markdown": markdown_view.render,
    "json": json_view.render,
    "csv": csv_view.render,
}
TEXT_FORMATS = ("text", "markdown", "json", "csv")


def render(summary: Summary, fmt: str, *, top: int | None = None) -> str:
    """Render ``summary`` in one of ``TEXT_FORMATS``.

    ``top``: rows per table in the text and Markdown reports (``Limits.top_rows``); the JSON and
    CSV views always carry every row.
    """
    if fmt in ("text", "markdown") and top is not None:
        if fmt == "text":
            return text_view.render(summary, top)
        return markdown_view.render(summary, top)
    if fmt not in VIEWS:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(TEXT_FORMATS)}")
    return VIEWS[fmt](summary)
