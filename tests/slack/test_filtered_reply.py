"""A filtered first reply (``ns=``, ``node=``) at fleet size: the filter's own rows first, the
whole cluster after, labelled so, on one screen.

Simulated clusters of several GPU models, 160, 1,600 and 8,000 GPUs; the Slack message is
built the way the bot posts it and measured by ``tests.support.block_measure``. Expected rows
come from the simulator's allocations, not from the summary.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

import pytest

from bot.conversation.replies import SummaryRef, SummaryReply
from bot.slack.messages import slack_message
from core.api import summarize_text
from core.model import SourceInfo
from core.number_style import cores_value
from core.simulate import SimulatedCluster, render_exposition, simulate_cluster
from core.views import render
from tests.slack.test_blocks import assert_valid
from tests.support.block_measure import code_blocks, rendered_lines, visible_text

MAX_LINES = 45
MAX_VISIBLE_CHARACTERS = 3500
CODE_BLOCK_WIDTH = 72

SIZES = [
    pytest.param((20, 8), id="160-gpus"),
    pytest.param((200, 8), id="1600-gpus"),
    pytest.param((1000, 8), id="8000-gpus", marks=pytest.mark.slow),
]


@pytest.fixture(scope="module", params=SIZES)
def fleet(request: pytest.FixtureRequest) -> tuple[SimulatedCluster, str]:
    nodes, gpus_per_node = request.param
    cluster = simulate_cluster(nodes, gpus_per_node, seed=0)
    return cluster, render_exposition(cluster)


def reply(text: str, **filters: str) -> dict[str, Any]:
    summary = summarize_text(text, SourceInfo("cluster", "fleet", cluster="fleet"), **filters)
    ref = SummaryRef(channel="C0TEAM01", thread_ts="1700000000.000100", **filters)
    message = slack_message(SummaryReply(summary, ref, 3.0))
    return {"blocks": message.blocks, "files": message.attachments, "summary": summary}


def section(blocks: list[dict[str, Any]], title: str) -> str:
    return next(
        b["text"]["text"]
        for b in blocks
        if b["type"] == "section" and b["text"]["text"].startswith(f"*{title}")
    )


def assert_one_screen(blocks: list[dict[str, Any]]) -> None:
    assert_valid(blocks)
    assert rendered_lines(blocks) <= MAX_LINES
    assert len(visible_text(blocks)) <= MAX_VISIBLE_CHARACTERS
    widths = [len(line) for block in code_blocks(blocks) for line in block]
    assert widths and max(widths) <= CODE_BLOCK_WIDTH


def largest_namespace(cluster: SimulatedCluster) -> str:
    cores: dict[str, int] = defaultdict(int)
    for a in cluster.allocations:
        cores[a.namespace] += a.cores
    return max(cores, key=lambda ns: (cores[ns], ns))


def test_a_namespace_reply_is_its_own_then_the_whole_cluster(
    fleet: tuple[SimulatedCluster, str],
) -> None:
    cluster, text = fleet
    namespace = largest_namespace(cluster)
    answer = reply(text, namespace=namespace)
    blocks = answer["blocks"]
    assert_one_screen(blocks)
    shown = visible_text(blocks)
    assert shown.startswith(f"HAMi GPU allocation: fleet, namespace {namespace}")
    mine = [a for a in cluster.allocations if a.namespace == namespace]
    pods = {a.pod for a in mine}
    gpus = {(a.node, a.device_uuid) for a in mine}
    nodes = {a.node for a in mine}
    cores = sum(a.cores for a in mine)
    assert f"namespace {namespace}: {cores_value(cores)} cores" in shown
    assert f"{len(pods):,} pods on {len(gpus):,} GPUs of {len(nodes):,} nodes" in shown
    # Its largest pod first, then where the rest are.
    largest: dict[str, int] = defaultdict(int)
    for a in mine:
        largest[a.pod] += a.cores
    top = max(largest.values())
    listed = section(blocks, "Its pods")
    first_row = listed.split("```")[1].split("\n")[1]
    assert largest[first_row.split()[0]] == top
    assert f"{len(pods) - 8:,} more pods: Workloads button" in listed
    assert "more GPUs: GPUs button" in section(blocks, "GPUs it uses")
    assert f"of {len(nodes):,}*" in section(blocks, "Nodes it uses")
    # No other namespace's pod on the page; the cluster comes last, labelled.
    others = {a.pod for a in cluster.allocations if a.namespace != namespace}
    code = "\n".join(line for block in code_blocks(blocks) for line in block)
    assert not {pod for pod in others if re.search(rf"\b{re.escape(pod)}\b", code)}
    titles = [
        b["text"]["text"].split("*")[1]
        for b in blocks
        if b["type"] == "section" and b["text"]["text"].startswith("*")
    ]
    assert titles[-1] == "Whole cluster (fleet)"
    total = sum(d.core_limit for d in cluster.devices)
    assert f"/ {cores_value(total)} cores)" in section(blocks, "Whole cluster")


def test_a_node_reply_lists_every_gpu_of_the_node_and_the_namespaces_there(
    fleet: tuple[SimulatedCluster, str],
) -> None:
    cluster, text = fleet
    used = {a.device_uuid for a in cluster.allocations}
    node = next(d.node for d in cluster.devices if d.uuid not in used)  # one with an idle GPU
    answer = reply(text, node=node)
    blocks = answer["blocks"]
    assert_one_screen(blocks)
    assert visible_text(blocks).startswith(f"HAMi GPU allocation: fleet, node {node}")
    every = section(blocks, "Every GPU of the node")
    rows = every.split("```")[1].split("\n")[1:]
    devices = sorted(d.index for d in cluster.devices if d.node == node)
    assert [row.split()[0] for row in rows] == [f"{node}/{i}" for i in devices]
    assert any(row.split()[-1] == "idle" for row in rows)
    on_node: dict[str, int] = defaultdict(int)
    for a in cluster.allocations:
        if a.node == node:
            on_node[a.namespace] += a.cores
    listed = section(blocks, "Namespaces on the node").split("```")[1].split("\n")[1:]
    for row in listed:
        name, cores = row.split()[:2]
        assert cores == cores_value(on_node[name])
    assert len(listed) == min(len(on_node), 5)


def test_the_text_report_opens_with_the_same_filtered_page(
    fleet: tuple[SimulatedCluster, str],
) -> None:
    cluster, text = fleet
    namespace = largest_namespace(cluster)
    summary = summarize_text(text, SourceInfo("paste", "fleet"), namespace=namespace)
    report = render(summary, "text")
    assert report.startswith(f"HAMi GPU allocation summary, namespace {namespace}\n")
    page = report[: report.index("\nDetails\n")]
    assert page.index("Its pods") < page.index("GPUs it uses") < page.index("Nodes it uses")
    assert page.index("Nodes it uses") < page.index("Whole cluster (fleet)")
    # The details carry its share of every GPU and node it uses.
    assert f"GPUs namespace {namespace} uses, its share of each" in report
    assert f"Nodes namespace {namespace} uses, its share of each" in report
