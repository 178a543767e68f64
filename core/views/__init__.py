"""Renderings of a ``Summary``, registered by name so a new format touches one module.

Each view formats; none recomputes a number.
"""

from __future__ import annotations

from collections.abc import Callable

from core.model import Summary

TextView = Callable[[Summary], str]


def _registry() -> dict[str, TextView]:
    from core.views import csv_view, json_view, markdown_view, text_view

    return {
        "text": text_view.render,
        "markdown": markdown_view.render,
        "json": json_view.render,
        "csv": csv_view.render,
    }


TEXT_FORMATS = ("text", "markdown", "json", "csv")
# The tables of the CSV view, each printable on its own (named here so that a command line can
# offer them without loading the CSV writer).
CSV_TABLES = ("gpus", "workloads", "nodes", "namespaces", "models", "runtime")


def render(summary: Summary, fmt: str, *, top: int | None = None) -> str:
    """Render ``summary`` in one of ``TEXT_FORMATS``.

    ``top``: rows per table in the text and Markdown reports (``Limits.top_rows``); the JSON and
    CSV views always carry every row.
    """
    if fmt in ("text", "markdown") and top is not None:
        from core.views import markdown_view, text_view

        if fmt == "text":
            return text_view.render(summary, top)
        return markdown_view.render(summary, top)
    views = _registry()
    if fmt not in views:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(TEXT_FORMATS)}")
    return views[fmt](summary)
