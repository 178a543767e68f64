"""Text, Markdown, JSON and CSV renderings: contract, order, width and completeness."""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import UTC, datetime, timedelta

import pytest

from core.api import summarize_text
from core.model import SourceInfo, Summary
from core.simulate import simulate_exposition
from core.views import TEXT_FORMATS, render
from core.views.csv_view import table_csv
from tests.conftest import read_fixture


def cluster_source(fetched_at: datetime) -> SourceInfo:
    return SourceInfo(
        kind="cluster", label="prod", cluster="prod", context="prod-admin", fetched_at=fetched_at
    )


@pytest.fixture
def small() -> Summary:
    """Scraped 42 s before the test runs (not before the module was imported), so the age reads
    "42 s ago" however long the tests before it took."""
    fetched = datetime.now(UTC) - timedelta(seconds=42)
    return summarize_text(read_fixture("scheduler-small.prom"), cluster_source(fetched))


@pytest.fixture(scope="module")
def large() -> Summary:
    text = simulate_exposition(1000, 8, seed=7)
    return summarize_text(text, SourceInfo(kind="paste", label="pasted text"))


def test_text_report_follows_spec_order_and_says_what_it_is_based_on(small: Summary) -> None:
    text = render(small, "text")
    first_page = [
        "Source: cluster prod, context prod-admin; scraped",
        "This report reflects scheduler allocation state",
        "6 GPUs on 2 nodes",
        "By GPU model",
        "Every GPU",
        "Namespaces",
        "Needs attention",
        "Capacity outlook by GPU model",
    ]
    positions = [text.index(marker) for marker in first_page]
    assert positions == sorted(positions)
    details = text[text.index("\nDetails\n") :]
    order = [
        "Cluster overview",
        "Nodes",
        "GPUs",
        "Workloads",
        "Namespaces",
        "Findings",
        "Consistency checks",
        "Runtime usage",
        "Capacity outlook, whole cluster",
    ]
    positions = [details.index(marker) for marker in order]
    assert positions == sorted(positions)
    age = re.search(r"scraped \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \((\d+) s ago\)", text)
    assert age is not None and int(age.group(1)) >= 42
    assert "Cores allocated 275 / 600 cores (45.8%)" in text
    assert "Memory allocated 77.0 GiB / 165 GiB (46.7%)" in text
    assert "Free: 2 whole GPUs, 325 cores, 88.0 GiB" in text
    assert "(none: no vGPU monitor metrics in the input" in text


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_reports_fit_100_columns_and_stay_short_on_1000_nodes(large: Summary, fmt: str) -> None:
    report = render(large, fmt)
    lines = report.splitlines()
    if fmt == "text":
        too_wide = [line for line in lines if len(line) > 100]
        assert too_wide == []
        # The first page is one screen: everything before the details.
        assert lines.index("Details") < 70
    assert len(lines) < 330  # every table is cut to its top 20 rows
    assert f"{len(large.gpus) - 20:,} more row(s) not shown (full table: --format csv)" in report
    assert "Nodes (20 of 1,000, most free first" in report
    whole = next(s for s in large.capacity if s.name == "1 whole GPU")
    assert whole.node_count > len(whole.nodes) == 5
    assert f"and {whole.node_count - 5:,} more node(s)" in " ".join(report.split())


def test_markdown_has_the_same_sections(small: Summary) -> None:
    md = render(small, "markdown")
    headings = [line for line in md.splitlines() if line.startswith("#")]
    assert headings[:15] == [
        "# HAMi GPU allocation summary",
        "## By GPU model",
        "## Every GPU",
        "## Namespaces (5 pods)",
        "## Needs attention",
        "## Capacity outlook by GPU model",
        "# Details",
        "## Cluster overview",
        "## Nodes (I/P/F/X = idle/partial/full/inconsistent GPUs)",
        "## GPUs",
        "## Workloads",
        "## Namespaces (over quota and near it first; quota = highest use of a limit)",
        "## Top pods per namespace (up to 3 each)",
        "## Quotas (over and near the limit first; limit 0 or none means no limit)",
        "## Findings",
    ]
    assert "| team-b | nvidia.com/gpumem | 12.0 GiB | 16.0 GiB | 75.0% of limit |" in md
    assert "| gpu-node-1/1 | A100-PCIE-40GB | 100.0% | 40.0/40.0 GiB | 100.0% |" in md


def test_json_contract(small: Summary) -> None:
    doc = json.loads(render(small, "json"))
    assert doc["schema_version"] == 1
    assert set(doc) >= {
        "schema_version",
        "source",
        "cluster",
        "nodes",
        "gpus",
        "workloads",
        "namespaces",
        "findings",
        "checks",
        "runtime",
        "real_usage",
        "notes",
    }
    source = doc["source"]
    assert (source["kind"], source["cluster"], source["context"]) == (
        "cluster",
        "prod",
        "prod-admin",
    )
    assert datetime.fromisoformat(source["fetched_at"]) == small.source.fetched_at
    assert (source["surface"], source["components"]) == ("current", ["scheduler"])
    assert source["families"]["hami_vgpu_core_allocated_ratio"] == 6
    cluster = doc["cluster"]
    assert cluster["core_allocated_percent"] == 45.8333
    assert cluster["mem_allocated_mib"] == 78848 and cluster["distribution"] == "even"
    assert [n["node"] for n in doc["nodes"]] == ["gpu-node-1", "gpu-node-2"]
    assert [(g["node"], g["device_index"]) for g in doc["gpus"]] == sorted(
        (g["node"], g["device_index"]) for g in doc["gpus"]
    )
    keys = [(w["namespace"], w["pod"], w["device_uuid"]) for w in doc["workloads"]]
    assert keys == sorted(keys)
    team_b = next(ns for ns in doc["namespaces"] if ns["namespace"] == "team-b")
    assert team_b["quota"] == {
        "nvidia.com/gpucores": {"used": 45, "limit": None},
        "nvidia.com/gpumem": {"used": 12288, "limit": 16384},
    }
    assert team_b["class"] == "major tenant, fractions" and team_b["mem_mib"] == 12288
    assert {c["status"] for c in doc["checks"]} == {"pass"}
    assert doc["runtime"] is None and doc["real_usage"] is None
    gpu = doc["gpus"][1]
    assert set(gpu) >= {
        "node",
        "device_index",
        "device_uuid",
        "device_type",
        "core_limit",
        "core_allocated",
        "core_allocated_percent",
        "mem_limit_mib",
        "mem_allocated_mib",
        "mem_allocated_percent",
        "shared_count",
        "state",
        "flags",
    }


@pytest.mark.slow
def test_csv_tables_are_complete(large: Summary) -> None:
    gpus = list(csv.DictReader(io.StringIO(table_csv(large, "gpus"))))
    assert len(gpus) == len(large.gpus) == 8000
    workloads = list(csv.DictReader(io.StringIO(table_csv(large, "workloads"))))
    assert len(workloads) == len(large.workloads)
    assert sum(float(w["cores"]) for w in workloads) == pytest.approx(large.cluster.core_allocated)
    both = render(large, "csv")
    assert both.startswith("node,device_index,device_uuid")
    assert "\n\nnamespace,pod,container_index" in both


def test_every_format_renders_a_monitor_only_summary() -> None:
    summary = summarize_text(
        read_fixture("vgpumonitor-small.prom"), SourceInfo(kind="paste", label="pasted text")
    )
    for fmt in TEXT_FORMATS:
        assert render(summary, fmt)
    text = render(summary, "text")
    assert (
        "Host GPUs (vGPU monitor)" in text and "(none: no GPU device series in the input)" in text
    )
    assert "Scheduler allocation metrics are absent" in text


def test_unknown_format_is_refused(small: Summary) -> None:
    with pytest.raises(ValueError, match="choose one of text, markdown, json, csv"):
        render(small, "yaml")


@pytest.mark.slow
def test_the_first_page_names_the_commands_of_its_surface(large: Summary) -> None:
    from core.views import text_view
    from core.views.attention import Hints

    chat = Hints(
        "type gpus",
        "type csv",
        "type csv",
        "type workloads",
        "type csv",
        "type csv",
        "type fit 4xH100",
    )
    page = text_view.first_page(large, chat)
    assert "type gpus" in page and "type csv" in page
    assert "--format csv" not in page and "Details" not in page
