"""A new metric family is one row of the family table: added there, it is read and shown.

The case: a scheduler that renames the per-GPU core allocation family (as HAMi v2.10 renamed
``GPUDeviceCoreAllocated`` to ``hami_gpu_core_allocated_ratio``). The fixture is the small
scheduler export with that family under a new name. Without the row the family is foreign and
the GPUs' cores are missing; with the one row added to the table (nothing else changed) both the
bulk reader and the general parser read it, and the summary shows the same figures as the
export under today's name.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core import families
from core.families import Family
from core.model import SourceInfo, Summary
from core.summary.build import summarize_text
from core.views import render

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "scheduler-small.prom"
TODAY = "hami_gpu_core_allocated_ratio"
RENAMED = "hami_device_core_allocated_ratio"
SOURCE = SourceInfo(kind="file", label="fixture")

NEW_ROW = Family(
    RENAMED,
    None,
    "core_allocated",
    "scheduler",
    "device",
    "core_allocated",
    families.FAMILIES[TODAY].value_range,
    (
        ("node", "node"),
        ("device_uuid", "device_uuid"),
        ("device_index", "device_index"),
        ("device_type", "device_type"),
    ),
)


def _texts() -> tuple[str, str]:
    """The export as the Go client writes it, and the same with a pasted prompt line (which
    the bulk reader refuses, so the general parser reads it)."""
    renamed = FIXTURE.read_text(encoding="utf-8").replace(TODAY, RENAMED)
    assert RENAMED in renamed and TODAY not in renamed
    return renamed, "$ curl -s http://hami-scheduler:31993/metrics\n" + renamed


def _add_row(monkeypatch: pytest.MonkeyPatch, row: Family) -> None:
    for spec in row.specs():
        monkeypatch.setitem(families.FAMILIES, spec.name, spec)


def _cores(summary: Summary) -> list[float]:
    return [gpu.core_allocated for gpu in summary.gpus]


def test_without_its_row_the_renamed_family_is_not_read() -> None:
    go_text, _ = _texts()
    summary = summarize_text(go_text, SOURCE)
    assert summary.input.ignored_series == dict(summary.input.families)[RENAMED] == 6
    assert summary.cluster.core_allocated == 0
    shown = render(summary, "text")
    assert RENAMED in shown  # named among the ignored families
    assert "not known" in "\n".join(_gpu_table(shown))


@pytest.mark.parametrize("route", ["bulk reader", "general parser"])
def test_one_table_row_makes_it_read_and_shown(monkeypatch: pytest.MonkeyPatch, route: str) -> None:
    reference = summarize_text(FIXTURE.read_text(encoding="utf-8"), SOURCE)
    assert reference.cluster.core_allocated > 0  # the fixture allocates cores
    _add_row(monkeypatch, NEW_ROW)
    go_text, pasted = _texts()
    summary = summarize_text(go_text if route == "bulk reader" else pasted, SOURCE)

    assert summary.input.ignored_series == 0
    assert dict(summary.input.families)[RENAMED] == dict(reference.input.families)[TODAY]
    assert _cores(summary) == _cores(reference)
    assert summary.cluster.core_allocated == reference.cluster.core_allocated
    assert summary.cluster.core_allocated_percent == reference.cluster.core_allocated_percent
    shown = render(summary, "text")
    expected = render(reference, "text")
    # The GPU table is the same, row for row: the new family fills the same figure.
    assert _gpu_table(shown) == _gpu_table(expected)
    assert "not known" not in "\n".join(_gpu_table(shown))


def test_the_row_screens_values_like_every_family(monkeypatch: pytest.MonkeyPatch) -> None:
    _add_row(monkeypatch, NEW_ROW)
    go_text, _ = _texts()
    broken = go_text.replace('zone="vGPU"} 50\n', 'zone="vGPU"} -50\n', 1)
    assert broken != go_text
    summary = summarize_text(broken, SOURCE)
    assert [p.family for p in summary.input.problems] == [RENAMED]
    assert summary.input.problems[0].reason == "negative"


def _gpu_table(text: str) -> list[str]:
    """The lines of the text report's GPU table (from its header to the next blank line)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("GPU"))
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start:end]
