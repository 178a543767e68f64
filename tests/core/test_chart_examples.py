"""The example charts the documents show are what ``docs/charts/render_charts.py`` writes today."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "docs" / "charts" / "render_charts.py"


def render_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("render_charts", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow  # builds the 1,000-node example
def test_committed_example_charts_are_up_to_date() -> None:
    charts = render_tool().example_charts()
    assert set(charts) == {"chart-6-gpus.png", "chart-160-gpus.png", "chart-8000-gpus.png"}
    for name, data in charts.items():
        committed = (SCRIPT.parent / name).read_bytes()
        assert committed == data, f"{name} is stale: run python docs/charts/render_charts.py"
        assert len(data) < 200_000  # small enough to keep in the repository


def test_the_docs_show_each_example_chart() -> None:
    page = (REPO / "docs" / "terminal.md").read_text(encoding="utf-8")
    for name in ("chart-6-gpus.png", "chart-160-gpus.png", "chart-8000-gpus.png"):
        assert f"](charts/{name})" in page
    assert "python docs/charts/render_charts.py" in page
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "](docs/charts/chart-160-gpus.png)" in readme
