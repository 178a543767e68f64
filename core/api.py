"""The front door of ``core``: metrics text in, one ``Summary`` out.

``bot`` (Slack, CLI, live scrapes) calls only ``summarize_text`` and ``core.views``.
"""

from __future__ import annotations

from core.summary.build import summarize_text

__all__ = ["summarize_text"]
