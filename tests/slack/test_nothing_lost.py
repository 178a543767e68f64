"""Every figure the earlier, longer first reply showed stays reachable: in the one-screen reply,
through its buttons (GPUs, Workloads, CSV: the CSV tables and the whole report with every row)
or in a follow-up.

The figures are listed here from the Summary, the way that reply showed them (overview fields,
nodes, the GPUs that matter, namespaces with quota, findings, checks, each job shape with its
top nodes, notes), and each is looked for, in the one number style, in what those surfaces
deliver. Rows are matched whole: every figure of a node is on that node's line.
"""

from __future__ import annotations

import pytest

from bot.conversation.attachments import full_table_attachments
from bot.conversation.formatting import (
    WIDE,
    all_tables,
    gpu_sections,
    table_text,
    workload_sections,
)
from bot.conversation.replies import SummaryRef, SummaryReply
from bot.slack.messages import slack_message
from core import number_style as numbers
from core.api import summarize_text
from core.model import SourceInfo, Summary
from core.simulate import simulate_exposition
from core.views.names import gpu_name
from tests.conftest import read_fixture
from tests.support.block_measure import visible_text


@pytest.fixture(scope="module", params=["fixture", "160-gpus"])
def summary(request: pytest.FixtureRequest) -> Summary:
    text = (
        read_fixture("scheduler-small.prom")
        if request.param == "fixture"
        else simulate_exposition(20, 8, seed=4)
    )
    return summarize_text(text, SourceInfo("cluster", "lab", cluster="lab"))


def reachable(summary: Summary) -> str:
    """What the reply and its buttons deliver, as text."""
    reply = slack_message(SummaryReply(summary, SummaryRef(), None))
    files = [a.render().decode() for a in full_table_attachments(summary)]
    return "\n".join(
        [
            visible_text(reply.blocks),
            reply.text,
            table_text(gpu_sections(summary), WIDE),
            table_text(workload_sections(summary), WIDE),
            *files,
        ]
    )


def line_with(text: str, *cells: str) -> str | None:
    """The first line of ``text`` that holds every one of ``cells``."""
    return next((line for line in text.splitlines() if all(c in line for c in cells)), None)


def test_the_overview_fields(summary: Summary) -> None:
    everything = reachable(summary)
    c = summary.cluster
    count = numbers.count
    assert (
        f"Nodes {count(c.nodes)}, GPUs {count(c.gpus)}, pods {count(c.pods)}, namespaces "
        f"{count(c.namespaces)}" in everything
    )
    assert f"{count(c.core_allocated)} / {count(c.core_limit)} cores" in everything
    assert numbers.percent(c.core_allocated_percent) in everything
    assert (
        f"{numbers.mem_total(c.mem_allocated_mib)} / {numbers.mem_total(c.mem_limit_mib)}"
        in everything
    )
    assert numbers.percent(c.mem_allocated_percent) in everything
    assert (
        f"GPUs idle {count(c.idle_gpus)}, partial {count(c.partial_gpus)}, full "
        f"{count(c.full_gpus)}, inconsistent {count(c.inconsistent_gpus)}; shared "
        f"{count(c.shared_gpus)}, exclusive {count(c.exclusive_gpus)}"
    ) in everything
    assert (
        f"Free: {numbers.counted(c.free_whole_gpus, 'whole GPU')}, "
        f"{numbers.cores(c.free_cores)}, {numbers.mem_total(c.free_mem_mib)}"
    ) in everything
    assert f"Distribution: {c.distribution}" in everything
    assert c.capacity_answer in everything


def test_every_node_with_its_figures(summary: Summary) -> None:
    tables = all_tables(summary)
    for n in summary.nodes:
        row = line_with(
            tables,
            f"{n.node} ",
            f"{n.idle_gpus}/{n.partial_gpus}/{n.full_gpus}/{n.inconsistent_gpus}",
            numbers.cores_pair(n.core_allocated, n.core_limit),
            numbers.mem_total_pair(n.mem_allocated_mib, n.mem_limit_mib),
            f"{numbers.cores(n.largest_free_cores)}, {numbers.mem_each(n.largest_free_mem_mib)}",
            n.verdict,
        )
        assert row is not None, n.node
        assert f" {n.gpus} " in row


def test_every_gpu_with_its_figures(summary: Summary) -> None:
    table = table_text(gpu_sections(summary), WIDE)
    for g in summary.gpus:
        row = line_with(
            table,
            f"{gpu_name(g.node, g.device_index)} ",
            numbers.cores_pair(g.core_allocated, g.core_limit),
            numbers.mem_each_pair(g.mem_allocated_mib, g.mem_limit_mib),
            f" {g.state} ",
            ", ".join(g.flags) or "-",
        )
        assert row is not None, gpu_name(g.node, g.device_index)
        assert f" {g.shared_count} " in row


def test_every_namespace_with_its_shares_and_quota(summary: Summary) -> None:
    tables = all_tables(summary)
    for ns in summary.namespaces:
        row = line_with(
            tables,
            f"{ns.namespace} ",
            f"{numbers.cores_value(ns.cores)} ({numbers.percent(ns.core_share_percent)})",
            f"{numbers.mem_total(ns.mem_mib)} ({numbers.percent(ns.mem_share_percent)})",
            ns.usage_class,
        )
        assert row is not None, ns.namespace
        assert f" {len(ns.pods):,} " in row and f" {ns.gpus_touched:,} " in row
        for figure in ns.quota:
            assert line_with(tables, f"{ns.namespace} ", figure.resource) is not None


def test_every_finding_check_shape_and_note(summary: Summary) -> None:
    everything = reachable(summary)
    for finding in summary.findings:
        assert finding.message in everything
    for check in summary.checks:
        assert f"{check.name}: {check.message}" in everything
    tables = all_tables(summary)
    for shape in summary.capacity:
        outlook = tables[tables.index("Capacity outlook, whole cluster") :]
        row = line_with(outlook, f"{shape.name}  ", f" {shape.placements:,} ")
        assert row is not None, shape.name
        # The top nodes the reply named, with their placements, and how many more.
        assert all(f"{node} ({count:,})" in row for node, count in shape.nodes[:3])
        more = shape.node_count - len(shape.nodes)
        if more > 0:
            assert f"and {more:,} more node(s)" in row
    for note in summary.notes:
        assert note in everything
