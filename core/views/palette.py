"""Colours of the charts: one per namespace, distinct within a chart, and greys for the rest.

A namespace's colour is assigned from a ranking (largest first): each namespace in turn takes
the palette colour its name hashes to (CRC-32, the same in every process), or the next colour
not yet taken. So the colours in one chart are always distinct, the same ranking always gives
the same colours, and a namespace keeps its colour across charts of one cluster unless a larger
namespace already took it. Charts of one cluster or thread pass the cluster's ranking
(``namespace_ranking`` of the unfiltered summary) to agree exactly.

The palette is matplotlib's ``tab10`` without its grey: nine hues for the eight namespaces a
chart names. Grey is kept for what is not one namespace (other namespaces, allocation without a
pod series, free capacity), so none of those can be read as a tenant.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Sequence
from typing import Final

from core.model import Summary

PALETTE: Final[tuple[str, ...]] = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#bcbd22", "#17becf",
)  # fmt: skip
NAMED_NAMESPACES: Final = 8  # the rest share OTHER_COLOUR

OTHER_COLOUR: Final = "#9e9e9e"  # other namespaces
UNATTRIBUTED_COLOUR: Final = "#5c5c5c"  # allocated on the device, no pod series for it
FRAGMENT_COLOUR: Final = "#f3f3f3"  # free cores on a partly allocated GPU (hatched)
FRAGMENT_HATCH: Final = "////"
FREE_COLOUR: Final = "#d9d9d9"  # whole GPUs free
UNKNOWN_COLOUR: Final = "#ffffff"  # figures not known (outlined, dotted)
EDGE_COLOUR: Final = "#8a8a8a"  # outlines of the light segments


def preferred_colour(namespace: str) -> str:
    """The palette colour ``namespace`` hashes to: CRC-32 of the name, stable across runs."""
    return PALETTE[zlib.crc32(namespace.encode("utf-8")) % len(PALETTE)]


def assign_colours(ranking: Sequence[str], limit: int = NAMED_NAMESPACES) -> dict[str, str]:
    """The colour of each of the first ``limit`` namespaces of ``ranking`` (largest first).

    Each takes its preferred colour, or the next free one after it in the palette: the first
    ``len(PALETTE)`` namespaces never share a colour.
    """
    taken: set[str] = set()
    colours: dict[str, str] = {}
    for name in ranking:
        if len(colours) >= min(limit, len(PALETTE)):
            break
        if name in colours:
            continue
        start = PALETTE.index(preferred_colour(name))
        colour = next(c for c in PALETTE[start:] + PALETTE[:start] if c not in taken)
        taken.add(colour)
        colours[name] = colour
    return colours


def namespace_ranking(summary: Summary, extra: Iterable[str] = ()) -> list[str]:
    """Namespaces largest first: share of allocated cores plus share of memory, then name.

    Namespaces with workloads but no namespace row (and ``extra``) rank last, by name.
    """
    weight: dict[str, float] = {}
    for usage in summary.namespaces:
        weight[usage.namespace] = (
            weight.get(usage.namespace, 0.0) + usage.core_share_percent + usage.mem_share_percent
        )
    for name in (*(w.namespace for w in summary.workloads), *extra):
        weight.setdefault(name, 0.0)
    return sorted(weight, key=lambda name: (-weight[name], name))
