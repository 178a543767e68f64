"""The Markdown report as a CommonMark renderer shows it: names are text, never HTML or links.

Label values can hold any character (a hand-edited export, a crafted paste). The report is
rendered here with raw HTML allowed, as many renderers do, and read back as a reader sees it.
"""

from __future__ import annotations

import html
import re

from markdown_it import MarkdownIt

from core.api import summarize_text
from core.model import SourceInfo
from core.views import render
from tests.conftest import read_fixture

# As written in the exposition: a backslash and a quote are escaped there.
POD = "<img src=x onerror=alert(1)>"
NAMESPACE = "[login](http://evil.example)"
NODE = "a&b|c\\d"
EXPOSITION_NODE = NODE.replace("\\", "\\\\")


def hostile_report() -> str:
    text = (
        read_fixture("scheduler-small.prom")
        .replace('"notebook-0"', f'"{POD}"')
        .replace('"team-a"', f'"{NAMESPACE}"')
        .replace('"gpu-node-1"', f'"{EXPOSITION_NODE}"')
    )
    summary = summarize_text(text, SourceInfo(kind="paste", label="pasted text"))
    assert {w.pod for w in summary.workloads} >= {POD}
    return render(summary, "markdown", top=20)


def rendered(markdown: str) -> str:
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)


def shown_text(page: str) -> str:
    """What a reader sees: the page without its tags, entities read."""
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def test_names_are_shown_as_written_never_as_html_or_links() -> None:
    page = rendered(hostile_report())
    assert "<img" not in page
    assert "evil.example" not in re.findall(r'href="([^"]*)"', page)
    assert not re.search(r'href="[^"]*evil', page)
    seen = shown_text(page)
    for name in (POD, NAMESPACE, NODE):
        assert name in seen, name


def test_a_pipe_in_a_name_never_splits_a_table_cell() -> None:
    page = rendered(hostile_report())
    for table in re.findall(r"<table>.*?</table>", page, re.S):
        header = re.search(r"<thead>(.*?)</thead>", table, re.S)
        assert header is not None
        columns = header.group(1).count("<th")
        for row in re.findall(r"<tr>(.*?)</tr>", table.split("</thead>")[1], re.S):
            assert row.count("<td") == columns, row


def test_an_ordinary_report_reads_the_same_rendered() -> None:
    summary = summarize_text(
        read_fixture("scheduler-small.prom"), SourceInfo(kind="paste", label="p")
    )
    seen = shown_text(rendered(render(summary, "markdown", top=20)))
    assert "gpu-node-1" in seen and "notebook-0" in seen
    assert "\\" not in seen  # no escape is left showing
