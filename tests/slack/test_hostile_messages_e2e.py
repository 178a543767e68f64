"""Pastes count against each user's allowance, and a 40,000-character message is acked at once.

Signed requests to the running bot, which answers through the local Slack Web API.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot.clusters.registry import load_registry
from tests.conftest import read_fixture
from tests.slack.conftest import CHANNEL, RunningBot, start_bot, stop_bot, write_registry
from tests.slack.test_http_e2e import ACK_LIMIT_SECONDS, answer_in, blocks_text, pasted
from tests.support.slack_api import SlackWebApi

REFUSAL = (
    "Sorry, you have reached the limit of 2 summaries of live clusters or pasted metrics per "
    "minute. Please try again in "
)
# Slack's longest message text.
SLACK_MESSAGE_CHARS = 40_000


def test_a_paste_over_the_allowance_is_refused_and_uses_up_live_scrapes_too(
    slack_api: SlackWebApi, metrics_server: Any, tmp_path: Path
) -> None:
    registry = load_registry(write_registry(tmp_path, metrics_server.url))
    running, server = start_bot(slack_api, registry, {"HAMI_SUMMARY_LIVE_PER_MINUTE": "2"})
    metrics = pasted(read_fixture("scheduler-small.prom"))
    try:
        answers = []
        for _ in range(3):
            _, ts = running.sender.mention(metrics)
            answers.append(blocks_text(answer_in(slack_api, CHANNEL, ts).blocks))
        _, other_ts = running.sender.mention(metrics, user="U0OTHER01")
        other = blocks_text(answer_in(slack_api, CHANNEL, other_ts).blocks)
        running.sender.command("demo fresh", response_url=slack_api.response_url("live"))
        live = blocks_text(slack_api.wait_for("response_url")[0].params["blocks"])
    finally:
        stop_bot(running, server)
    assert all("cores *45.8%* allocated (275 / 600 cores)" in text for text in answers[:2])
    assert REFUSAL in answers[2] and "275 / 600" not in answers[2]
    # Another user's allowance is their own.
    assert "cores *45.8%* allocated (275 / 600 cores)" in other
    assert REFUSAL in live
    assert metrics_server.scrapes == 0


@pytest.mark.slow
def test_a_40000_character_message_is_acknowledged_in_time(bot: RunningBot) -> None:
    """A long digit run followed by junk: the shape that made backtracking patterns stall (40 s
    before they were made linear, checked exactly in test_user_text_patterns). Slack's own
    deadline is the bound here, not a tighter one that a loaded machine could miss."""
    hostile = "a{} " + "1" * (SLACK_MESSAGE_CHARS - 5) + "x"
    assert len(hostile) == SLACK_MESSAGE_CHARS
    response, ts = bot.sender.mention(hostile)
    assert response.status == 200
    assert response.elapsed_seconds < ACK_LIMIT_SECONDS
    text = blocks_text(answer_in(bot.api, CHANNEL, ts).blocks)
    assert "Traceback" not in text


def test_a_file_with_a_four_megabyte_label_is_summarised_without_that_line(
    bot: RunningBot,
) -> None:
    metrics = read_fixture("scheduler-small.prom").replace(
        'node="gpu-node-1"', 'node="' + "a" * 4_000_000 + '"', 1
    )
    file = bot.api.add_private_file("huge-label.prom", metrics.encode())
    _, ts = bot.sender.mention("", files=[file])
    text = blocks_text(answer_in(bot.api, CHANNEL, ts).blocks)
    # The GPU's cores allocated were left out with the line: the cluster's share is not known.
    assert "cores allocated: *not known* (1 GPU lacks a limit or allocation series)" in text
    assert "1 line(s) over the size limits were left out: line 6" in text
    assert "it is 4,000,161 characters long, over the limit of 16,384" in text


def test_a_file_with_unreadable_lines_says_so_in_the_first_reply(bot: RunningBot) -> None:
    # Markup and a stray quote in a node name: every line of that node is unreadable.
    metrics = read_fixture("scheduler-small.prom").replace("gpu-node-1", '<b>gpu-node-1</b>&"x')
    file = bot.api.add_private_file("broken-node.prom", metrics.encode())
    _, ts = bot.sender.mention("", files=[file])
    text = blocks_text(answer_in(bot.api, CHANNEL, ts).blocks)
    assert "27 line(s) could not be read as metrics and are in no figure (first at line 6" in text
    assert text.index("could not be read as metrics") < text.index("3 GPUs")
    assert "<b>" not in text


def test_a_pasted_fetch_error_is_quoted_with_what_to_fix(bot: RunningBot) -> None:
    failed = 'Error from server (NotFound): services "hami-scheduler" not found'
    _, ts = bot.sender.mention(f"```\n$ kubectl get --raw .../proxy/metrics\n{failed}\n```")
    text = blocks_text(answer_in(bot.api, CHANNEL, ts).blocks)
    assert "That is the error of the command that fetched the metrics, not metrics" in text
    assert 'services "hami-scheduler" not found' in text
    assert "No metrics here yet" not in text
