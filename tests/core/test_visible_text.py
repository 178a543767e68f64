"""Newlines, tabs and other control characters in label values stay inside their cell."""

from __future__ import annotations

import csv
import io

from core.api import summarize_text
from core.model import SourceInfo, Summary
from core.views import render
from core.visible_text import visible
from tests.conftest import read_fixture

# In exposition text a label value's newline is written "\n"; tabs and ESC may appear as is.
POD_AS_WRITTEN = "llm\\ninfer\t0\x1b[31m"
POD = "llm\ninfer\t0\x1b[31m"
POD_SHOWN = "llm\\ninfer\\t0\\x1b[31m"
# In Markdown, each backslash of those escapes and the "[" escaped again: rendered, POD_SHOWN.
POD_MARKDOWN = "llm\\\\ninfer\\\\t0\\\\x1b\\[31m"


def summary_with_odd_pod() -> Summary:
    text = read_fixture("scheduler-small.prom").replace(
        'pod="llm-infer-0"', f'pod="{POD_AS_WRITTEN}"'
    )
    return summarize_text(text, SourceInfo(kind="paste", label="pasted text"))


def test_markdown_rows_stay_one_line_each() -> None:
    report = render(summary_with_odd_pod(), "markdown", top=20)
    rows = [line for line in report.split("\n") if "llm" in line]
    assert rows == [
        f"| team-a | {POD_MARKDOWN} | gpu-node-1/0 | 30 | 10.0 GiB | fraction, shared |",
        f"| team-a | 30 | 10.0 GiB | {POD_MARKDOWN} |",
    ]
    assert "\x1b" not in report


def test_text_rows_stay_one_line_each() -> None:
    report = render(summary_with_odd_pod(), "text", top=20)
    rows = [" ".join(line.split()) for line in report.split("\n") if "llm" in line]
    assert rows == [
        f"team-a {POD_SHOWN} gpu-node-1/0 30 10.0 GiB fraction, shared",
        f"team-a 30 10.0 GiB {POD_SHOWN}",
    ]
    assert "\x1b" not in report


def test_csv_keeps_the_value_and_stays_valid() -> None:
    rows = list(csv.reader(io.StringIO(render(summary_with_odd_pod(), "csv"))))
    pods = [row[1] for row in rows if row and row[0] == "team-a" and "llm" in row[1]]
    assert pods == [POD]


def test_visible_escapes_only_what_cannot_be_printed() -> None:
    assert visible("gpu-node-1 (3), ü, 名前") == "gpu-node-1 (3), ü, 名前"
    assert visible("a\r\nb\x00\x7f\u2028\U000e0001") == "a\\r\\nb\\x00\\x7f\\u2028\\U000e0001"
