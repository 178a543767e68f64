"""Write the README's example charts: simulated clusters of 6, 160 and 8,000 GPUs.

    .venv/bin/python docs/charts/render_charts.py

writes ``chart-6-gpus.png``, ``chart-160-gpus.png`` and ``chart-8000-gpus.png`` next to this
script. The simulator's seed and the scrape time are fixed, so the files change only when the
simulator, the summary or the chart does (``tests/core/test_chart_examples.py`` checks that
the committed files are what this script writes).
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from core.api import summarize_text
from core.model import SourceInfo, Summary
from core.simulate import simulate_exposition
from core.views.chart import render_chart

HERE = Path(__file__).resolve().parent
SEED: Final = 1
SCRAPED: Final = datetime(2026, 8, 21, 6, 30, tzinfo=UTC)
# (file name, nodes, GPUs per node)
EXAMPLES: Final = (
    ("chart-6-gpus.png", 2, 3),
    ("chart-160-gpus.png", 20, 8),
    ("chart-8000-gpus.png", 1000, 8),
)


def example_summary(nodes: int, gpus_per_node: int) -> Summary:
    text = simulate_exposition(nodes, gpus_per_node, seed=SEED)
    label = f"simulated {nodes:,} nodes x {gpus_per_node} GPUs, seed {SEED}"
    return summarize_text(text, SourceInfo(kind="paste", label=label, fetched_at=SCRAPED))


def example_charts() -> dict[str, bytes]:
    """File name -> PNG bytes, as this script writes them."""
    return {name: render_chart(example_summary(n, g)) for name, n, g in EXAMPLES}


def main() -> int:
    for name, data in example_charts().items():
        (HERE / name).write_bytes(data)
        print(f"wrote {name}: {len(data):,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
