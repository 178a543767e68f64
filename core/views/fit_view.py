"""A ``fit`` answer as a JSON document and as terminal text.

JSON contract: ``{"shape": {...}, "fits": bool, "placements": int, "nodes": [{"node": str,
"placements": int, ...}, ...], "reason": str | null}`` plus ``closest`` and the models seen.
``nodes`` lists every node the shape fits on now, best first (fewest GPUs left fragmented after
placing one job, then name). Memory is exact MiB there, and the keys say so.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence
from typing import Any

from core.fit import FitResult, NodeFit
from core.views.table_spec import aligned_lines
from core.visible_text import visible

PLACEMENTS_MEANING = (
    "placements: how many jobs of this shape could start now at once, each with all its GPUs "
    "on one node, by HAMi's rules"
)


def _shape(result: FitResult) -> dict[str, Any]:
    shape = result.shape
    return {
        "text": shape.text,
        "gpus": shape.gpus,
        "model": shape.model,
        "whole_gpu": shape.whole_gpu,
        "cores_per_gpu": shape.cores_per_gpu,
        "memory_per_gpu_mib": shape.mem_mib,
        "memory_percent_per_gpu": (
            shape.mem_percent
            if shape.mem_percent is not None
            else (100 if shape.mem_mib is None else None)
        ),
        "split_count": result.split_count,
    }


def _node(fit: NodeFit) -> dict[str, Any]:
    return {
        "node": fit.node,
        "placements": fit.placements,
        "gpus_fitting": fit.gpus_fitting,
        "fragmented_gpus_after": fit.fragmented_after,
        "gpus_chosen": [{"index": g.index, "uuid": g.uuid, "model": g.model} for g in fit.chosen],
    }


def fit_document(result: FitResult) -> dict[str, Any]:
    return {
        "shape": _shape(result),
        "fits": result.fits,
        "placements": result.placements,
        "nodes": [_node(n) for n in result.nodes],
        "reason": result.reason,
        "closest": result.closest,
        "models_matched": [{"model": m, "gpus": c} for m, c in result.matched],
        "models_present": [{"model": m, "gpus": c} for m, c in result.models],
    }


def fit_json(result: FitResult) -> str:
    return json.dumps(fit_document(result), indent=2, allow_nan=False) + "\n"


def headline(result: FitResult) -> str:
    """One line: does it fit, how often, on how many nodes."""
    what = result.shape.describe()
    if not result.fits:
        return f"{what}: does not fit now."
    nodes = len(result.nodes)
    return (
        f"{what}: fits now on {nodes:,} node{'s' if nodes != 1 else ''}, "
        f"{result.placements:,} placement{'s' if result.placements != 1 else ''}."
    )


def node_rows(result: FitResult, top: int) -> list[tuple[str, str, str, str, str]]:
    """(node, placements, GPUs fitting, fragmented after, GPUs chosen) for the first ``top``."""
    rows = []
    for fit in result.nodes[:top]:
        chosen = ",".join(str(g.index) for g in fit.chosen)
        rows.append(
            (
                fit.node,
                f"{fit.placements:,}",
                f"{fit.gpus_fitting:,}",
                f"{fit.fragmented_after:,}",
                chosen,
            )
        )
    return rows


NODE_HEADER = ("node", "placements", "GPUs free", "fragmented after", "GPUs chosen")
# Wide enough that no column of the fit table is ever cut.
UNCUT = 1_000_000_000


def table_lines(rows: Sequence[tuple[str, ...]], header: tuple[str, ...]) -> list[str]:
    """Aligned columns, the first left-aligned, never cut; names with control characters (a
    newline in a node label) shown escaped, so each row stays one line."""
    return aligned_lines([header, *rows], UNCUT)


def models_line(result: FitResult) -> str | None:
    if result.shape.model is None or not result.matched:
        return None
    names = ", ".join(f"{m} ({c:,} GPU{'s' if c != 1 else ''})" for m, c in result.matched)
    return visible(f"Model '{result.shape.model}' matches: {names}.")


def fit_text(result: FitResult, top: int = 20) -> str:
    lines = [headline(result)]
    models = models_line(result)
    if models:
        lines.append(models)
    if result.fits:
        lines.append("Nodes, best first (fewest GPUs left fragmented after placing one job):")
        lines.extend("  " + line for line in table_lines(node_rows(result, top), NODE_HEADER))
        more = len(result.nodes) - top
        if more > 0:
            lines.append(f"  ... and {more:,} more node(s); --format json lists every one.")
        lines.append(PLACEMENTS_MEANING + ".")
    else:
        lines.append(visible(f"Why: {result.reason}"))
        if result.closest:
            lines.append(visible(f"Closest: {result.closest}"))
    if result.shape.whole_gpu:
        lines.append("A whole GPU needs 100 free cores, all of its memory free and no task on it.")
    elif result.shape.mem_mib is None and result.shape.mem_percent is None:
        lines.append(
            "No memory given: each GPU needs all of its memory free (HAMi's default); "
            "give memory for a fractional slice, e.g. 2x50c/20GiB."
        )
    return "\n".join(_wrap(line) for line in lines) + "\n"


def _wrap(line: str, width: int = 100) -> str:
    """Prose lines wrapped at ``width`` without breaking words or names; tables kept."""
    if len(line) <= width or line.startswith("  "):
        return line
    return textwrap.fill(
        line, width, break_long_words=False, break_on_hyphens=False, subsequent_indent="  "
    )
