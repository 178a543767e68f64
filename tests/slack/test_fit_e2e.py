"""``fit`` through Slack: signed requests in, the local Slack Web API out. The numbers in the
answers are checked against the placement oracle of ``tests/core/test_fit.py``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.clusters.registry import load_registry
from bot.conversation.fit import CODE_WIDTH, fit_reply
from bot.slack.mrkdwn import mrkdwn
from core.api import summarize_text
from core.fit_shape import parse_shape
from core.model import GpuSummary, SourceInfo
from core.simulate import simulate_exposition
from tests.conftest import read_fixture
from tests.core.test_fit import oracle_fit
from tests.slack.conftest import (
    CHANNEL,
    MetricsServer,
    RunningBot,
    start_bot,
    stop_bot,
    write_registry,
)
from tests.slack.test_http_e2e import (
    ACK_LIMIT_SECONDS,
    answer_in,
    blocks_text,
    pasted,
    thread_reply,
)
from tests.support.slack_api import SlackWebApi

SIMULATED = simulate_exposition(20, 8, seed=5)


@pytest.fixture
def simulated_bot(slack_api: SlackWebApi, tmp_path: Path) -> Iterator[RunningBot]:
    server = MetricsServer(SIMULATED)
    registry = load_registry(write_registry(tmp_path, server.url))
    running, http = start_bot(slack_api, registry)
    yield running
    stop_bot(running, http)
    server.stop()


@pytest.fixture(scope="module")
def simulated_gpus() -> tuple[GpuSummary, ...]:
    return summarize_text(SIMULATED, SourceInfo(kind="file", label="sim")).gpus


def test_slash_fit_answers_with_the_nodes_and_placements(
    simulated_bot: RunningBot, simulated_gpus: tuple[GpuSummary, ...]
) -> None:
    bot = simulated_bot
    response = bot.sender.command("demo fit 2x50c/20GiB", response_url=bot.api.response_url("f"))
    assert response.status == 200 and response.elapsed_seconds < ACK_LIMIT_SECONDS
    text = blocks_text(answer_in(bot.api, CHANNEL, None).blocks)
    nodes, placements = oracle_fit(simulated_gpus, "2x50c/20GiB")
    assert nodes > 0
    assert f"2 GPUs, 50 cores and 20.0 GiB each: fits now on {nodes:,} nodes, " in text
    assert f"{placements:,} placements." in text
    assert "fewest GPUs left fragmented" in text
    for line in text.split("```")[1].splitlines():
        assert len(line) <= 72


def test_thread_follow_up_fit_uses_the_thread_cluster(
    simulated_bot: RunningBot, simulated_gpus: tuple[GpuSummary, ...]
) -> None:
    bot = simulated_bot
    bot.sender.command("demo", response_url=bot.api.response_url("s"))
    summary = answer_in(bot.api, CHANNEL, None)

    bot.sender.mention("fit 8xH100", thread_ts=summary.ts)
    text = blocks_text(answer_in(bot.api, CHANNEL, summary.ts).blocks)
    nodes, placements = oracle_fit(simulated_gpus, "8xH100")
    if placements:
        assert f"fits now on {nodes:,} node" in text
    else:
        assert "8 x H100, whole GPUs: does not fit now." in text
        assert "*Why:*" in text and "needs 8 on one node" in text and "*Closest:*" in text

    bot.sender.mention("fit 1xB200", thread_ts=summary.ts)
    bot.api.wait_for("chat.update", 3)
    answers = [
        blocks_text(m.blocks) for m in bot.api.messages.values() if m.thread_ts == summary.ts
    ]
    refused = [t for t in answers if "no GPU model matches 'B200'" in t]
    assert refused and "NVIDIA H100 80GB HBM3" in refused[0]


def test_pasted_metrics_thread_answers_fit(bot: RunningBot) -> None:
    file = bot.api.add_private_file(
        "scheduler.prom", read_fixture("scheduler-small.prom").encode(), mode="snippet"
    )
    _, root = bot.sender.mention("", files=[file])
    answer_in(bot.api, CHANNEL, root)
    bot.sender.mention("fit 2xA100", thread_ts=root)
    bot.api.wait_for("chat.update", 2)
    texts = [blocks_text(m.blocks) for m in bot.api.messages.values() if m.thread_ts == root]
    fit = [t for t in texts if "2 x A100, whole GPUs" in t]
    assert fit, texts
    assert "Model 'A100' matches: NVIDIA A100-PCIE-40GB" in fit[0]


def test_fit_with_a_gpu_count_alone_is_the_follow_up_not_a_paste(bot: RunningBot) -> None:
    # "fit 1" has the shape of a sample named fit with the value 1.
    _, root = bot.sender.mention(pasted(read_fixture("scheduler-small.prom")))
    answer_in(bot.api, CHANNEL, root)
    bot.sender.mention("fit 1", thread_ts=root)
    text = thread_reply(bot.api, root, "1 GPU, whole GPU")
    assert "1 GPU, whole GPU: fits now on 2 nodes, 2 placements." in text
    assert "No HAMi scheduler" not in text


def test_bad_shape_is_answered_in_the_acknowledgement(bot: RunningBot) -> None:
    response = bot.sender.command("demo fit 2x50", response_url=bot.api.response_url("b"))
    body = response.json()
    assert body["response_type"] == "ephemeral"
    text = blocks_text(body["blocks"])
    assert "'50' has no unit" in text and "2x50c/20GiB" in text
    empty = bot.sender.command("demo fit", response_url=bot.api.response_url("e")).json()
    assert "`fit` needs a job shape" in blocks_text(empty["blocks"])
    assert bot.api.calls_to("chat.postMessage") == []


def test_long_node_names_are_cut_in_the_middle_to_keep_code_blocks_narrow() -> None:
    node = "gpu-pool-very-long-name-for-a-rack-in-a-far-datacentre-0042"
    summary = summarize_text(
        read_fixture("scheduler-small.prom").replace("gpu-node-1", node),
        SourceInfo(kind="file", label="renamed"),
    )
    text = mrkdwn(fit_reply(summary, parse_shape("1")).text)
    table = text.split("```")[1].splitlines()
    assert max(len(line) for line in table) <= CODE_WIDTH
    cut = next(line.split()[0] for line in table if "…" in line)
    assert cut.startswith("gpu-pool-very") and cut.endswith("datacentre-0042")
