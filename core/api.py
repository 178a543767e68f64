"""The front door of ``core``: metrics text in, one ``Summary`` out.

``bot`` (Slack, CLI, live scrapes) calls ``summarize_text``, ``filter_summary`` (a summary
narrowed to a namespace or node; ``cluster_of`` gives back the whole one) and ``core.views``.
"""

from __future__ import annotations

from core.summary.build import summarize_text
from core.summary.filtered import cluster_of, filter_summary

__all__ = ["cluster_of", "filter_summary", "summarize_text"]
