"""The first reply at fleet size: one screen from 6 to 8,000 GPUs, in every view.

Simulated clusters of several GPU models, 6, 160, 1,600 and 8,000 GPUs. The Slack message is
built the way the bot posts it (``slack_message``); its screen is measured by
``tests.support.block_measure`` (visible text, rendered lines in a thread pane, code-block
widths). The same first page opens the text and Markdown reports.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from bot.cli.main import main
from bot.conversation.replies import SummaryRef, SummaryReply
from bot.slack.messages import slack_message
from core.api import summarize_text
from core.model import SourceInfo, Summary
from core.simulate import simulate_exposition
from core.views import render
from core.views.names import gpu_name, short_type
from tests.conftest import read_fixture
from tests.slack.conftest import CHANNEL, RunningBot
from tests.slack.test_blocks import assert_valid
from tests.slack.test_http_e2e import answer_in
from tests.support.block_measure import code_blocks, rendered_lines, visible_text
from tests.support.number_style import number_style_problems

MAX_LINES = 45
MAX_VISIBLE_CHARACTERS = 3500
CODE_BLOCK_WIDTH = 72
TEXT_WIDTH = 100

SIZES = [
    pytest.param((3, 2), id="6-gpus"),
    pytest.param((20, 8), id="160-gpus"),
    pytest.param((200, 8), id="1600-gpus"),
    pytest.param((1000, 8), id="8000-gpus", marks=pytest.mark.slow),
]


def simulated(nodes: int, gpus_per_node: int) -> Summary:
    text = simulate_exposition(nodes, gpus_per_node, seed=0)
    return summarize_text(text, SourceInfo("cluster", "fleet", cluster="fleet"))


def first_reply(summary: Summary) -> dict[str, Any]:
    ref = SummaryRef(cluster=None, channel="C0TEAM01", thread_ts="1700000000.000100")
    message = slack_message(SummaryReply(summary, ref, 3.0))
    return {"text": message.text, "blocks": message.blocks, "files": message.attachments}


def section(blocks: list[dict[str, Any]], title: str) -> str:
    """The mrkdwn of the section whose title starts with ``title``."""
    return next(
        b["text"]["text"]
        for b in blocks
        if b["type"] == "section" and b["text"]["text"].startswith(f"*{title}")
    )


@pytest.fixture(scope="module", params=SIZES)
def fleet(request: pytest.FixtureRequest) -> Summary:
    nodes, gpus_per_node = request.param
    return simulated(nodes, gpus_per_node)


def test_the_first_reply_is_one_screen(fleet: Summary) -> None:
    reply = first_reply(fleet)
    assert_valid(reply["blocks"])
    shown = visible_text(reply["blocks"])
    assert rendered_lines(reply["blocks"]) <= MAX_LINES
    assert len(shown) <= MAX_VISIBLE_CHARACTERS
    widths = [len(line) for block in code_blocks(reply["blocks"]) for line in block]
    assert widths and max(widths) <= CODE_BLOCK_WIDTH
    # The buttons bring the full tables; nothing else goes with it but the chart.
    assert [a.filename for a in reply["files"]] == []
    buttons = next(b for b in reply["blocks"] if b["type"] == "actions")["elements"]
    assert [b["text"]["text"] for b in buttons] == ["Refresh", "GPUs", "Workloads", "CSV"]


def test_the_first_reply_answers_in_order_and_names_every_model(fleet: Summary) -> None:
    blocks = first_reply(fleet)["blocks"]
    text = "\n".join(b["text"]["text"] for b in blocks if b["type"] == "section")
    order = [
        "GPUs* on",
        "whole GPU",
        "that fits",
        "*By GPU model*",
        "*Namespaces",
        "*Needs attention*",
        "*Capacity outlook by GPU model*",
    ]
    positions = [text.index(marker) for marker in order]
    assert positions == sorted(positions)
    c = fleet.cluster
    assert f"*{c.gpus:,} GPUs* on {c.nodes:,} nodes" in text
    assert f"*{c.free_whole_gpus:,}* whole GPU" in text
    models = section(blocks, "By GPU model")
    outlook = section(blocks, "Capacity outlook by GPU model")
    assert len(fleet.models) >= 3
    for model in fleet.models:
        name = short_type(model.model)
        row = (
            re.escape(name)
            + r"\s+"
            + r"\s+".join(
                f"{n:,}"
                for n in (
                    model.nodes,
                    model.gpus,
                    model.idle_gpus,
                    model.partial_gpus,
                    model.full_gpus,
                )
            )
        )
        assert re.search(row, models), name
        assert re.search(re.escape(name) + r"\s+" + f"{model.capacity[0].placements:,}", outlook), (
            name
        )
    namespaces = section(blocks, "Namespaces")
    listed = [ns for ns in fleet.namespaces if f"\n{ns.namespace} " in namespaces]
    assert 0 < len(listed) <= 8
    if len(fleet.namespaces) > 8:
        assert f"{len(fleet.namespaces) - 8} more: CSV button" in namespaces


def test_one_number_style_everywhere(fleet: Summary) -> None:
    reply = first_reply(fleet)
    assert number_style_problems(visible_text(reply["blocks"])) == []
    assert number_style_problems(reply["text"]) == []
    for fmt in ("text", "markdown"):
        assert number_style_problems(render(fleet, fmt)) == []
    # Machine formats keep exact MiB and say so in their names.
    document = json.loads(render(fleet, "json"))
    assert document["cluster"]["mem_allocated_mib"] == fleet.cluster.mem_allocated_mib
    for line in render(fleet, "csv").split("\n\n"):
        header = line.splitlines()[0].split(",")
        assert all(h.endswith(("_mib", "_percent")) for h in header if "mem" in h)


def test_the_text_and_markdown_reports_open_with_the_same_page(fleet: Summary) -> None:
    text = render(fleet, "text")
    lines = text.splitlines()
    assert max(map(len, lines)) <= TEXT_WIDTH
    first_page = lines[: lines.index("Details")]
    assert len(first_page) <= 75
    for title in ("By GPU model", "Needs attention", "Capacity outlook by GPU model"):
        assert title in first_page
    markdown = render(fleet, "markdown")
    headings = [line for line in markdown.splitlines() if line.startswith("## ")]
    assert headings[0] == "## By GPU model"
    assert (
        headings.index("## Needs attention")
        < headings.index("## Capacity outlook by GPU model")
        < headings.index("## Cluster overview")
    )


def test_six_gpus_still_shows_every_gpu() -> None:
    summary = simulated(3, 2)
    every_gpu = section(first_reply(summary)["blocks"], "Every GPU")
    for gpu in summary.gpus:
        assert gpu_name(gpu.node, gpu.device_index) in every_gpu
    page = render(summary, "text").split("\nDetails\n")[0]
    assert all(gpu_name(g.node, g.device_index) in page for g in summary.gpus)


def test_above_a_few_gpus_the_models_stand_for_them() -> None:
    blocks = first_reply(simulated(20, 8))["blocks"]
    assert not any(b["type"] == "section" and "*Every GPU*" in b["text"]["text"] for b in blocks)


# -- incomplete input ------------------------------------------------------------------------


def test_monitor_metrics_only_get_a_runtime_first_answer_that_says_what_is_not_known() -> None:
    summary = summarize_text(read_fixture("vgpumonitor-small.prom"), SourceInfo("paste", "p"))
    reply = first_reply(summary)
    assert_valid(reply["blocks"])
    shown = visible_text(reply["blocks"])
    assert "allocation not known" in shown
    assert "3 GPUs on 1 node measured by the vGPU monitor" in shown
    runtime = shown.index("Runtime (vGPU monitor")
    assert runtime < shown.index("Needs attention")
    assert "By GPU model" not in shown and "Capacity outlook" not in shown
    # Never a zero for what the input does not give.
    assert not re.search(r"\b0 (nodes|GPUs)\b|0 / 0", shown)
    assert "not known: quota use (no quota series), GPU states" in shown
    page = render(summary, "text").split("\nDetails\n")[0]
    assert "allocation not known" in page and not re.search(r"\b0 (nodes|GPUs)\b", page)
    cluster = json.loads(render(summary, "json"))["cluster"]
    assert cluster["nodes"] is None and cluster["gpus"] is None and cluster["pods"] is None
    assert cluster["core_allocated"] is None and cluster["free_whole_gpus"] is None


def test_gpus_without_a_limit_series_are_not_known_not_zero() -> None:
    text = "\n".join(
        line
        for line in read_fixture("scheduler-small.prom").splitlines()
        if not (line.startswith("hami_gpu_core_limit_ratio{") and "gpu-node-1" in line)
    )
    summary = summarize_text(text + "\n", SourceInfo("paste", "p"))
    shown = visible_text(first_reply(summary)["blocks"])
    assert "cores allocated: not known (3 GPUs lack a limit or allocation series)" in shown
    assert "1 whole GPU free, 3 GPUs not known" in shown
    assert re.search(r"A100-P\S*\s+1\s+3\s+1\s+2\s+0\s+not known\s+not known", shown)
    assert re.search(r"gpu-node-1/0\s+A100-PCIE-40GB\s+not known\s+not known", shown)


# -- the preview is the message ----------------------------------------------------------------


def _same_parts(message: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    """The blocks after the header and source line, with the buttons' values (the thread they
    belong to) left out, and the notification text after its title."""
    blocks = json.loads(json.dumps(message["blocks"][2:]))
    for block in blocks:
        if block["type"] == "actions":
            for element in block["elements"]:
                element.pop("value", None)
    return blocks, message["text"].split(": ", 1)[1]


def test_summarize_format_blocks_prints_the_message_the_bot_posts(
    bot: RunningBot, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = simulate_exposition(20, 8, seed=2)
    path = tmp_path / "fleet.prom"
    path.write_text(text)
    file = bot.api.add_private_file("fleet.prom", text.encode())
    _, ts = bot.sender.mention("", files=[file])
    posted = answer_in(bot.api, CHANNEL, ts)
    assert main(["summarize", str(path), "--format", "blocks"]) == 0
    preview = json.loads(capsys.readouterr().out)
    assert set(preview) == {"text", "blocks"}
    assert _same_parts(preview) == _same_parts({"text": posted.text, "blocks": posted.blocks})
    # The same buttons, and the same place a header and a source line hold.
    assert [b["type"] for b in preview["blocks"][:2]] == ["header", "context"]
    actions = next(b for b in preview["blocks"] if b["type"] == "actions")
    assert [e["action_id"] for e in actions["elements"]] == [
        "summary_refresh",
        "summary_gpus",
        "summary_workloads",
        "summary_csv",
    ]
    assert_valid(preview["blocks"])


def test_namespaces_over_and_near_quota_come_first_and_need_attention() -> None:
    from tests.core.exposition_builder import Scheduler

    s = Scheduler()
    uuids = [s.device(f"n{i // 4}", i % 4, cores=0, mem_mib=0) for i in range(12)]
    for i, (name, cores) in enumerate([("big", 100), ("over", 30), ("near", 20), ("calm", 10)]):
        s.pod(name, "p", f"n{i}", uuids[i * 3], cores=cores, mem_mib=4096)
    s.quota("over", "nvidia.com/gpucores", 30, limit=20)  # 150 %
    s.quota("near", "nvidia.com/gpumem", 4096, limit=4300)  # 95.3 %
    s.quota("calm", "nvidia.com/gpucores", 10, limit=100)
    text = (
        s.text()
        .replace("hami_gpu_core_allocated_ratio", "ignored_core")
        .replace("hami_gpu_memory_allocated_bytes", "ignored_mem")
    )
    summary = summarize_text(text, SourceInfo("paste", "p"))
    blocks = first_reply(summary)["blocks"]
    namespaces = section(blocks, "Namespaces")
    rows = [line.split()[0] for line in namespaces.split("```")[1].splitlines()[1:]]
    assert rows == ["over", "near", "big", "calm"]
    assert re.search(r"over\s.*150\.0% !", namespaces)
    assert re.search(r"near\s.*95\.3% !", namespaces)
    assert re.search(r"calm\s.*10\.0%\s", namespaces)
    attention = section(blocks, "Needs attention")
    assert "*1 namespace over quota*: over 150.0% · *1 near quota*: near 95.3%" in attention
