"""The first page of a summary: the cluster's page, or the filter's page for a filtered summary.

The two pages live in ``digest`` and ``digest_filtered``; the filtered page reuses the cluster
page's sections, so the choice between them is made here, above both, and neither module
imports the other's caller.
"""

from __future__ import annotations

from core.model import Summary
from core.views.attention import Hints
from core.views.digest import Digest, cluster_digest
from core.views.digest_filtered import filtered_digest


def build_digest(summary: Summary, hints: Hints) -> Digest:
    """The first page of ``summary``; ``hints`` say where the full lists are."""
    if summary.focus is not None:
        return filtered_digest(summary, hints)
    return cluster_digest(summary, hints)
