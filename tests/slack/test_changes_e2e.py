"""``changes`` end to end: signed Slack requests in, Web API calls out, history in the store."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from bot.live import RegistryLiveSource
from core.api import summarize_text
from core.history.snapshot import snapshot_of
from core.model import SourceInfo
from core.simulate import drift_cluster, render_exposition, simulate_cluster
from tests.conftest import read_fixture
from tests.core.history_support import pods_of
from tests.slack.conftest import RunningBot
from tests.slack.test_http_e2e import blocks_text, pasted
from tests.support.slack_api import StoredFile, StoredMessage


def _message_with(bot: RunningBot, thread_ts: str | None, words: str) -> StoredMessage:
    """The first message (after its updates) in the thread whose text holds ``words``."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        for message in list(bot.api.messages.values()):
            if message.thread_ts == thread_ts and words in blocks_text(message.blocks):
                return message
        time.sleep(0.05)
    raise AssertionError(f"no message with {words!r} in thread {thread_ts}")


def _uploaded(bot: RunningBot, filename: str) -> StoredFile:
    """The file of that name once its upload is complete (other files may finish first)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        found = [f for f in bot.api.uploaded_files() if f.filename == filename]
        if found:
            return found[-1]
        time.sleep(0.05)
    raise AssertionError(f"no upload of {filename}")


def test_a_second_paste_is_compared_with_the_first(bot: RunningBot) -> None:
    first = simulate_cluster(3, 2, seed=1)
    second = drift_cluster(first, steps=8)  # more pods change than the text shows
    old_pods, new_pods = pods_of(first), pods_of(second)
    started = sorted(new_pods.keys() - old_pods.keys())
    stopped = sorted(old_pods.keys() - new_pods.keys())
    assert started and stopped

    _, root = bot.sender.mention(pasted(render_exposition(first)))
    _message_with(bot, root, "Cores allocated")
    bot.sender.mention(pasted(render_exposition(second)), thread_ts=root)
    note = _message_with(bot, root, "Since the previous paste")
    assert f"{len(started)} pod(s) started and {len(stopped)} stopped holding GPUs" in blocks_text(
        note.blocks
    )
    bot.sender.mention("changes", thread_ts=root)
    answer = blocks_text(_message_with(bot, root, "Changes since the previous paste").blocks)
    assert f"Started holding GPUs: {len(started)} pod(s)" in answer
    assert f"Stopped holding GPUs: {len(stopped)} pod(s)" in answer
    assert len(started) > 5 and f"... and {len(started) - 5} more" in answer
    listing = _uploaded(bot, "hami-changes-pods.csv")
    assert listing.thread_ts == root and listing.content is not None
    rows = [line.split(",") for line in listing.content.decode().splitlines()[1:]]
    assert sorted((ns, pod) for change, ns, pod, *_ in rows if change == "started") == started
    assert sorted((ns, pod) for change, ns, pod, *_ in rows if change == "stopped") == stopped


def test_changes_in_a_thread_with_one_paste_says_what_to_do(bot: RunningBot) -> None:
    _, root = bot.sender.mention(pasted(read_fixture("scheduler-small.prom")))
    _message_with(bot, root, "Cores allocated")
    bot.sender.mention("changes", thread_ts=root)
    answer = _message_with(bot, root, "Nothing to compare with yet")
    assert "one paste of metrics so far" in blocks_text(answer.blocks)


def test_cluster_changes_compare_with_the_kept_history(
    bot: RunningBot, metrics_server: Any
) -> None:
    live = bot.slack.services.conversation.live
    assert isinstance(live, RegistryLiveSource)
    # What an earlier collection two hours ago would have kept: the same cluster without
    # one of its pods.
    source = SourceInfo(kind="cluster", label="cluster demo", cluster="demo")
    now = snapshot_of(summarize_text(metrics_server.text, source), time.time() - 7200)
    gone = now.pods[0]
    earlier = dataclasses.replace(now, pods=now.pods[1:])
    assert live.history.record("demo", None, earlier)

    response = bot.sender.command(
        "demo changes since=1h", response_url=bot.api.response_url("changes")
    )
    assert response.status == 200
    answer = blocks_text(_message_with(bot, None, "Changes in cluster demo").blocks)
    assert "(2.0 h ago; the newest snapshot kept from before 60 min ago)" in answer
    assert "Started holding GPUs: 1 pod(s)" in answer
    assert f"{gone.namespace}/{gone.pod}" in answer
    assert "Stopped holding GPUs" not in answer
    assert metrics_server.scrapes == 1
    # The collection itself was kept: two snapshots now, both in the trend chart.
    assert len(live.history.times("demo")) == 2
    chart = _uploaded(bot, "hami-trend.png")
    assert chart.content is not None and chart.content[:8] == b"\x89PNG\r\n\x1a\n"


def test_changes_of_a_cluster_not_allowed_here_show_nothing_of_it(
    bot: RunningBot, metrics_server: Any
) -> None:
    response = bot.sender.command("secret-lab changes", response_url=bot.api.response_url("secret"))
    assert response.status == 200
    text = blocks_text(response.json()["blocks"])
    assert "'secret-lab' is not a cluster you may query here" in text
    assert metrics_server.scrapes == 0
    bad = bot.sender.command("demo changes since=90d", response_url=bot.api.response_url("b"))
    assert "'since=90d' is not a time span I keep history for" in blocks_text(bad.json()["blocks"])
