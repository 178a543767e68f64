"""One column definition per table: a column added to ``core.views.columns`` reaches every output.

The GPU table gains a column the way a change to the code would add it (a new ``TableSpec`` in
``core.views.columns``), and the text and Markdown reports, the CSV table, the JSON document
and the Slack GPUs table all show it, each in its own form.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, replace
from typing import Any

import pytest

from bot.conversation.formatting import WIDE, gpu_sections, table_text
from core.api import summarize_text
from core.model import GpuSummary, SourceInfo, Summary
from core.views import columns, render
from core.views import table_spec as col
from core.views.csv_view import table_csv
from core.views.table_spec import TableSpec
from tests.conftest import read_fixture


@pytest.fixture
def summary() -> Summary:
    return summarize_text(
        read_fixture("scheduler-small.prom"), SourceInfo(kind="file", label="fixture")
    )


def _free_share(g: GpuSummary) -> float:
    return g.free_cores / g.core_limit * 100.0 if g.core_limit else 0.0


@pytest.fixture
def with_free_share(monkeypatch: pytest.MonkeyPatch) -> None:
    """The GPU table with one more column, shown as "free %" and written as free_percent."""
    added = col.percent("free %", "free_percent", _free_share)
    spec: TableSpec[GpuSummary] = replace(columns.GPUS, columns=(*columns.GPUS.columns, added))
    monkeypatch.setattr(columns, "GPUS", spec)


@pytest.mark.usefixtures("with_free_share")
def test_a_new_column_reaches_every_output(summary: Summary) -> None:
    gpu = summary.gpus[0]
    shown = f"{_free_share(gpu):.1f}%"
    exact = round(_free_share(gpu), 4)

    text = render(summary, "text", top=50)
    assert "free %" in text
    markdown = render(summary, "markdown", top=50)
    assert "| free % |" in markdown
    assert shown in markdown

    rows = list(csv.DictReader(io.StringIO(table_csv(summary, "gpus"))))
    assert float(rows[0]["free_percent"]) == exact
    first_csv_table = render(summary, "csv").split("\n\n")[0]
    assert "free_percent" in first_csv_table.splitlines()[0]

    document = json.loads(render(summary, "json"))
    assert document["gpus"][0]["free_percent"] == exact

    slack = table_text(gpu_sections(summary), WIDE)
    assert "free %" in slack.splitlines()[0]
    assert shown in slack


def test_shown_and_exact_columns_keep_their_own_order(summary: Summary) -> None:
    """One definition gives the people's table and the machines' table: the report's GPU
    table has the shown headers, the CSV and JSON the keys, each in its order."""
    spec = columns.GPUS
    assert spec.headers[:3] == ("GPU", "model", "cores")
    header = table_csv(summary, "gpus").splitlines()[0].split(",")
    assert header == list(spec.csv_header())
    assert header[:4] == ["node", "device_index", "device_uuid", "device_type"]
    document = json.loads(render(summary, "json"))
    assert list(document["gpus"][0]) == list(spec.json_order)
    assert set(spec.json_order) == {c.key for c in spec.columns if c.key and c.in_json}
    # JSON lists, CSV words.
    assert isinstance(document["gpus"][0]["flags"], list)
    assert "containers" in document["gpus"][0] and "containers" not in header


def test_select_names_only_shown_columns() -> None:
    narrow = columns.GPUS.select("GPU", "state")
    assert narrow.headers == ("GPU", "state")
    assert narrow.csv_header() == ()
    with pytest.raises(ValueError, match="no column free_cores"):
        columns.GPUS.select("GPU", "free_cores")


@dataclass(frozen=True)
class _Slot:
    name: str
    share: float | None
    tags: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Pair:
    name: str
    share: float | None
    tags: tuple[str, ...]


@pytest.mark.parametrize("row_type", [_Slot, _Pair])
def test_exact_values_are_the_same_however_rows_are_read(row_type: type) -> None:
    """Rows of fields only are read without a call per column (slotted or not); their records
    and CSV rows are those of the column definitions all the same."""
    spec: TableSpec[Any] = TableSpec(
        (
            col.text("name", "name"),
            col.percent("share", "share_percent", value=col.Field("share")),
            col.exact("tags", col.Field("tags", list), csv=col.Field("tags", " ".join)),
            col.exact("first_tag", col.Field("tags", lambda t: t[0] if t else None)),
        )
    )
    rows = [row_type("a", 12.345678, ("x", "y")), row_type("b", None, ())]
    assert spec.records(rows) == [
        {"name": "a", "share_percent": 12.3457, "tags": ["x", "y"], "first_tag": "x"},
        {"name": "b", "share_percent": None, "tags": [], "first_tag": None},
    ]
    assert spec.csv_rows(rows) == [("a", 12.3457, "x y", "x"), ("b", None, "", None)]
    assert spec.records([]) == [] and spec.csv_rows(iter(rows)) == spec.csv_rows(rows)


@dataclass(frozen=True, slots=True)
class _Share:
    share: Any


def test_a_rounded_column_is_what_rounding_each_value_gives() -> None:
    """Percentages are rounded once per distinct value and looked up; the result is that of
    ``rounded`` on each value: a zero keeps its sign, None stays None, NaN stays NaN, and
    values that are not plain floats (a bool rounds to an int) are rounded one by one."""
    spec: TableSpec[Any] = TableSpec(
        (col.percent("share", "share_percent", value=col.Field("share")),)
    )

    def written(values: list[Any]) -> list[str]:
        return [repr(r["share_percent"]) for r in spec.records(map(_Share, values))]

    floats = [12.345678, -0.0, 0.0, None, 12.345678, -0.00001, 1e300, 50.0, float("nan")]
    assert written(floats) == [repr(col.rounded(v)) for v in floats]
    mixed = [True, 1.0, 1, 2.00004, 0.0, -0.0]
    assert written(mixed) == ["1", "1.0", "1", "2.0", "0.0", "-0.0"]


class _Key:
    """A getter that cannot be a dict key (it defines ``__eq__`` only)."""

    def __eq__(self, other: object) -> bool:
        return self is other

    def __call__(self, row: Any) -> Any:
        return row.share


def test_a_table_whose_getters_cannot_be_kept_is_compiled_each_time() -> None:
    spec: TableSpec[Any] = TableSpec((col.exact("share", _Key()),))
    rows = [_Share(1.5), _Share("x")]
    assert spec.records(rows) == [{"share": 1.5}, {"share": "x"}]
    assert spec.csv_rows(rows) == [(1.5,), ("x",)]
