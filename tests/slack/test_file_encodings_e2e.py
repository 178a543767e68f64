"""Attached metrics files are read in the encoding they were saved in: UTF-8, or UTF-16 as
Windows tools write it (downloaded from the local Slack Web API with the bot token)."""

from __future__ import annotations

import pytest

from tests.conftest import read_fixture
from tests.slack.conftest import CHANNEL, RunningBot
from tests.slack.test_http_e2e import answer_in, blocks_text


@pytest.mark.parametrize(
    "encoding",
    # Windows PowerShell's ">" (UTF-16 LE with a byte-order mark), then without marks.
    ["utf-16", "utf-16-le", "utf-16-be", "utf-8-sig"],
)
def test_a_metrics_file_in_utf16_is_summarised(bot: RunningBot, encoding: str) -> None:
    content = read_fixture("scheduler-small.prom").encode(encoding)
    file = bot.api.add_private_file("scheduler.prom", content)
    _, ts = bot.sender.mention("from my Windows box", files=[file])
    shown = blocks_text(answer_in(bot.api, CHANNEL, ts).blocks)
    assert "cores *45.8%* allocated (275 / 600 cores)" in shown and "gpu-node-1" in shown
    assert bot.api.calls_to("download")


def test_a_binary_file_is_called_binary_data(bot: RunningBot) -> None:
    file = bot.api.add_private_file("scheduler.prom", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 20)
    _, ts = bot.sender.mention("this?", files=[file])
    assert "That is binary data, not metrics text" in blocks_text(
        answer_in(bot.api, CHANNEL, ts).blocks
    )
