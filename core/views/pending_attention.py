"""Pods pending on HAMi's resources in a cluster summary's "Needs attention".

The metrics do not hold pods waiting to be placed; a cluster's scrape counts them beside the
metrics (``PendingCount``), and this puts them first in the attention list of the summary's
digest, for the surfaces that have them. A summary of metrics alone is unchanged.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from core import number_style as numbers
from core.pending.pending_list import PendingCount
from core.views.attention import Fact, Line
from core.views.digest import NOTHING_FOUND, Digest


def pending_line(count: PendingCount, now: datetime, ask: str) -> Line:
    """``3 pods pending on HAMi's resources (longest wait 2.0 h): ask `pending` ...``."""
    plural = "s" if count.pods != 1 else ""
    wait = count.longest_wait_seconds(now)
    longest = f" (longest wait {numbers.seconds(max(0.0, wait))})" if wait is not None else ""
    return (Fact(f"{count.pods:,} pod{plural} pending on HAMi's resources", f"{longest}: {ask}"),)


def with_pending(digest: Digest, count: PendingCount | None, now: datetime, ask: str) -> Digest:
    """``digest`` with the pending pods first in its attention list (when there are any);
    "nothing found" then gives way to them."""
    if count is None or count.pods == 0:
        return digest
    sections = []
    for section in digest.sections:
        if section.key == "attention":
            kept = tuple(line for line in section.lines if line[0].strong != NOTHING_FOUND)
            section = replace(section, lines=(pending_line(count, now, ask), *kept))
        sections.append(section)
    return replace(digest, sections=tuple(sections))
