"""CSV text cells never start a spreadsheet formula; numbers stay numbers."""

from __future__ import annotations

import csv
import io

from hypothesis import strategies as st

from core.api import summarize_text
from core.model import SourceInfo
from core.views import render
from core.views.csv_view import table_csv
from core.views.spreadsheet import may_start_a_formula
from tests.conftest import read_fixture
from tests.support.properties import quick_and_full

SOURCE = SourceInfo(kind="paste", label="pasted text")
FORMULA = ("=", "+", "-", "@", "\t", "\r")


def hostile_names() -> str:
    """The fixture with pod, namespace, node and device type names that start formulas."""
    return (
        read_fixture("scheduler-small.prom")
        .replace('pod="llm-infer-0"', 'pod="=HYPERLINK(\\"http://evil\\",\\"x\\")"')
        .replace('namespace="team-b"', 'namespace="+team-b"')
        .replace('node="gpu-node-2"', 'node="@gpu-node-2"')
        .replace('pod="notebook-0"', 'pod="-2+3"')
        .replace('pod="embed-svc-0"', 'pod="\tcmd"')
    )


def rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def test_cells_that_would_start_a_formula_get_a_leading_quote() -> None:
    summary = summarize_text(hostile_names(), SOURCE)
    workloads = rows(table_csv(summary, "workloads"))
    pods = {row[1] for row in workloads[1:]}
    assert '\'=HYPERLINK("http://evil","x")' in pods
    assert {"'-2+3", "'\tcmd"} <= pods
    assert {row[0] for row in workloads[1:]} >= {"'+team-b", "team-a"}
    nodes = {row[0] for row in rows(table_csv(summary, "nodes"))[1:]}
    assert nodes == {"gpu-node-1", "'@gpu-node-2"}
    every_cell = [cell for row in rows(render(summary, "csv")) for cell in row]
    assert not any(cell.startswith(("=", "+", "-", "@", "\t", "\r")) for cell in every_cell)


def test_numbers_and_plain_names_are_written_unchanged() -> None:
    summary = summarize_text(read_fixture("scheduler-small.prom"), SOURCE)
    workloads = rows(table_csv(summary, "workloads"))
    assert workloads[1][:7] == [
        "ml-batch",
        "ddp-worker-0",
        "0",
        "gpu-node-2",
        "GPU-6b7c8d9e-0f1a-4b2c-bd3e-4f5a6b7c8d9e",
        "50.0",
        "7680.0",
    ]


def test_runtime_csv_quotes_formula_cells_too() -> None:
    monitor = read_fixture("vgpumonitor-small.prom").replace('pod="llm-infer-0"', 'pod="=1+1"')
    summary = summarize_text(monitor, SOURCE)
    containers = rows(table_csv(summary, "runtime").split("\n\n")[1])
    assert "'=1+1" in {row[1] for row in containers[1:]}


def _plain_csv(table: list[list[object]]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(table)
    return buffer.getvalue()


CELLS = st.one_of(
    st.text(alphabet=st.sampled_from("ab =+-@\t\r\n,\"'"), max_size=6),
    st.integers(min_value=0, max_value=10**6),
    st.floats(min_value=0, max_value=1e6, allow_nan=False),
)


def _the_one_scan_check_never_misses_a_formula_cell(table: list[list[object]]) -> None:
    needs_quoting = any(isinstance(c, str) and c.startswith(FORMULA) for r in table for c in r)
    if needs_quoting:
        assert may_start_a_formula(_plain_csv(table))


(
    test_the_one_scan_check_never_misses_a_formula_cell,
    test_the_one_scan_check_never_misses_a_formula_cell_in_full,
) = quick_and_full(300, st.lists(st.lists(CELLS, min_size=1, max_size=4), min_size=1, max_size=5))(
    _the_one_scan_check_never_misses_a_formula_cell
)


def test_the_one_scan_check_passes_plain_tables() -> None:
    assert not may_start_a_formula(_plain_csv([["node", "gpus"], ["gpu-node-1", 8, 12.5]]))
    assert may_start_a_formula(_plain_csv([["node"], ["a,=b"]]))  # quoted cell, formula inside
    assert may_start_a_formula(_plain_csv([["x", "=1"]]))
