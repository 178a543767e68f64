"""``Table`` is an immutable value: equal by its fields, changed through ``dataclasses.replace``,
its cells made visible (no newline ends a row) however it is built."""

from __future__ import annotations

import copy
import pickle
from dataclasses import replace

import pytest

from core.views.table_spec import Table, fixed_width


def test_cells_are_made_visible_when_built_and_replaced() -> None:
    table = Table("t", ("a", "b"), (("one\ntwo", "x"),), omitted=2)
    assert "\n" not in table.rows[0][0]
    changed = replace(table, rows=(("three\nfour", "y"),), title="u")
    assert "\n" not in changed.rows[0][0]
    assert (changed.title, changed.omitted, table.title) == ("u", 2, "t")


def test_a_table_is_an_immutable_value() -> None:
    table = Table("t", ("a",), (("1",),), align=("right",))
    assert table == Table("t", ("a",), (("1",),), 0, "", "", (), ("right",))
    assert hash(table) == hash(copy.deepcopy(table))
    assert pickle.loads(pickle.dumps(table)) == table
    assert table != replace(table, omitted=1)
    assert table.aligned(0) == "right" and table.aligned(5) == "left"
    with pytest.raises(AttributeError):
        table.title = "u"  # type: ignore[misc]
    assert repr(table).startswith("Table(title='t', headers=('a',)")


def test_a_narrow_layout_drops_columns_through_replace() -> None:
    table = Table("t", ("name", "extra", "n"), (("gpu-node-1", "x" * 30, "12"),), droppable=(1,))
    lines = fixed_width(table, 24)
    assert all("xxxx" not in line for line in lines) and "gpu-node-1" in lines[-1]


def test_gpu_columns_are_immutable_and_equal_by_their_columns() -> None:
    from core.api import summarize_text
    from core.model import SourceInfo
    from core.summary.columns import GpuColumns
    from tests.conftest import read_fixture

    summary = summarize_text(read_fixture("scheduler-small.prom"), SourceInfo("file", "t"))
    columns = GpuColumns.of(summary.gpus)
    assert columns == GpuColumns.of(list(summary.gpus))
    assert columns != GpuColumns.of(summary.gpus[1:])
    assert len(columns) == len(summary.gpus)
    with pytest.raises(AttributeError):
        columns.cores = ()  # type: ignore[misc]
