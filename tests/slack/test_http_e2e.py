"""The bot end to end in HTTP mode: signed requests in, Web API calls out."""

from __future__ import annotations

import json
import re
import struct
import time
import zlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bot.clusters.registry import load_registry
from core.api import summarize_text
from core.model import SourceInfo
from core.views.names import short_type
from tests.conftest import read_fixture
from tests.slack.conftest import (
    CHANNEL,
    USER,
    MetricsServer,
    RunningBot,
    start_bot,
    stop_bot,
    write_registry,
)
from tests.support.block_measure import code_blocks, rendered_lines
from tests.support.slack_api import BOT_ID, BOT_USER_ID, SlackWebApi, StoredMessage
from tests.support.slack_press import press

ACK_LIMIT_SECONDS = 3.0  # Slack's deadline for every acknowledgement


def blocks_text(blocks: list[dict[str, Any]]) -> str:
    """Every piece of text in a message's blocks, joined (for content assertions)."""
    parts: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "text" and isinstance(value, str):
                    parts.append(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(blocks)
    return "\n".join(parts)


def answer_in(api: SlackWebApi, channel: str, thread_ts: str | None) -> StoredMessage:
    """The final answer: the working message posted in the thread, after its chat.update."""
    posted = api.wait_for(
        "chat.postMessage",
        where=lambda c: (
            c.params.get("channel") == channel and c.params.get("thread_ts") == thread_ts
        ),
    )[0]
    ts = None
    deadline = time.monotonic() + 20
    while ts is None and time.monotonic() < deadline:
        for (chan, message_ts), message in list(api.messages.items()):
            if chan == channel and message.thread_ts == thread_ts and message.updates:
                ts = message_ts
        time.sleep(0.02)
    assert ts is not None, f"no chat.update of the working message {posted.params.get('text')}"
    api.wait_for("chat.update", where=lambda c: c.params.get("ts") == ts)
    return api.message(channel, ts)


def first_reply_of_live_scrape(
    slack_api: SlackWebApi, tmp_path: Path, scheduler: MetricsServer
) -> StoredMessage:
    """The answer to ``/hami-summary demo`` of a bot whose one cluster is ``scheduler``; the
    bot and the scheduler are stopped after it."""
    running, server = start_bot(slack_api, load_registry(write_registry(tmp_path, scheduler.url)))
    try:
        running.sender.command("demo", response_url=slack_api.response_url("demo"))
        return answer_in(slack_api, CHANNEL, None)
    finally:
        stop_bot(running, server)
        scheduler.stop()


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG file"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def png_is_blank(data: bytes) -> bool:
    # Decompress the image data (IDAT chunks) and check that more than one byte value occurs.
    chunks, offset = [], 8
    while offset < len(data):
        length = struct.unpack(">I", data[offset : offset + 4])[0]
        kind = data[offset + 4 : offset + 8]
        if kind == b"IDAT":
            chunks.append(data[offset + 8 : offset + 8 + length])
        offset += 12 + length
    raw = zlib.decompress(b"".join(chunks))
    return len(set(raw[:200_000])) <= 2


def pasted(text: str) -> str:
    return "```" + text + "```"


# -- slash command ------------------------------------------------------------------------


def test_slash_help_is_answered_in_the_acknowledgement(bot: RunningBot) -> None:
    response = bot.sender.command("help", response_url=bot.api.response_url("help"))
    assert response.status == 200
    assert response.elapsed_seconds < ACK_LIMIT_SECONDS
    body = response.json()
    assert body["response_type"] == "ephemeral"
    text = blocks_text(body["blocks"])
    assert "/hami-summary clusters" in text
    assert "Slash commands cannot be used inside threads" in text
    assert "mention" in text
    assert "not live utilisation" in text


def test_bad_command_arguments_get_a_specific_ephemeral_answer(bot: RunningBot) -> None:
    response = bot.sender.command("demo ns=Team_A", response_url=bot.api.response_url("bad"))
    body = response.json()
    assert body["response_type"] == "ephemeral"
    assert "'Team_A' is not a Kubernetes namespace name" in blocks_text(body["blocks"])
    unknown = bot.sender.command("no-such-cluster", response_url=bot.api.response_url("u"))
    text = blocks_text(unknown.json()["blocks"])
    assert "'no-such-cluster' is not a cluster you may query here" in text
    assert "`demo`" in text and "secret-lab" not in text  # other channels' clusters stay private
    assert bot.api.calls_to("chat.postMessage") == []


def test_clusters_lists_only_what_this_user_may_query_here(bot: RunningBot) -> None:
    text = blocks_text(
        bot.sender.command("clusters", response_url=bot.api.response_url("c")).json()["blocks"]
    )
    assert "demo" in text and "prod" in text and "prod-readonly" in text
    assert "secret-lab" not in text


def test_cluster_command_posts_working_message_then_the_summary(
    bot: RunningBot, metrics_server: Any
) -> None:
    response = bot.sender.command("demo ns=team-a", response_url=bot.api.response_url("demo"))
    assert response.status == 200 and response.body == b""
    assert response.elapsed_seconds < ACK_LIMIT_SECONDS
    answer = answer_in(bot.api, CHANNEL, None)
    working = bot.api.calls_to("chat.postMessage")[0]
    assert "Working on it" in working.params["text"]
    text = blocks_text(answer.blocks)
    assert "cluster *demo*" in text and "filter `namespace=team-a`" in text
    assert "275 / 600 cores" in text  # cluster totals stay whole under a namespace filter
    assert metrics_server.scrapes == 1
    # The chart goes into the summary's own thread.
    complete = bot.api.wait_for("files.completeUploadExternal")[0]
    assert complete.params["thread_ts"] == answer.ts
    # A second ask within the cache TTL is answered from the cache.
    bot.sender.command("demo", response_url=bot.api.response_url("demo2"))
    bot.api.wait_for("chat.update", 2)
    assert metrics_server.scrapes == 1


def test_picker_then_confirm_collects_only_after_confirm(
    bot: RunningBot, metrics_server: Any
) -> None:
    response = bot.sender.command("", response_url=bot.api.response_url("pick"))
    picker = response.json()
    assert picker["response_type"] == "ephemeral"
    selects = [b for b in picker["blocks"] if b.get("block_id") == "picker_cluster"]
    options = [o["value"] for o in selects[0]["accessory"]["options"]]
    assert options == ["demo", "prod"]  # secret-lab is for another channel
    assert any(
        b["type"] == "input" and b["block_id"] == "picker_namespace" for b in picker["blocks"]
    )

    base = {
        "type": "block_actions",
        "user": {"id": USER, "username": "alice"},
        "channel": {"id": CHANNEL, "name": "gpu-team"},
        "container": {
            "type": "message",
            "message_ts": "1710000000.000001",
            "is_ephemeral": True,
            "channel_id": CHANNEL,
        },
        "response_url": bot.api.response_url("picker"),
    }
    # Choosing prod (two contexts) re-renders the picker with a context choice.
    bot.sender.interaction(
        {
            **base,
            "actions": [
                {
                    "type": "static_select",
                    "action_id": "picker_cluster",
                    "block_id": "picker_cluster",
                    "selected_option": {
                        "value": "prod",
                        "text": {"type": "plain_text", "text": "Production"},
                    },
                    "action_ts": "1710000001.1",
                }
            ],
        }
    )
    bot.api.wait_for("response_url", where=lambda c: c.params.get("replace_original") is True)
    rerendered = bot.api.response_posts["picker"][-1]["blocks"]
    contexts = [b for b in rerendered if b.get("block_id") == "picker_context"]
    assert [o["value"] for o in contexts[0]["accessory"]["options"]] == [
        "prod-admin",
        "prod-readonly",
    ]

    # Changing to demo and confirming with a namespace collects once and posts the summary.
    bot.sender.interaction(
        {
            **base,
            "actions": [
                {
                    "type": "static_select",
                    "action_id": "picker_cluster",
                    "block_id": "picker_cluster",
                    "selected_option": {
                        "value": "demo",
                        "text": {"type": "plain_text", "text": "Demo"},
                    },
                    "action_ts": "1710000002.1",
                }
            ],
        }
    )
    bot.api.wait_for("response_url", 2)
    assert metrics_server.scrapes == 0  # nothing collected before Confirm
    state = {
        "values": {
            "picker_cluster": {
                "picker_cluster": {"type": "static_select", "selected_option": {"value": "demo"}}
            },
            "picker_namespace": {
                "picker_namespace": {"type": "plain_text_input", "value": "team-b"}
            },
        }
    }
    confirm = bot.sender.interaction(
        {
            **base,
            "state": state,
            "actions": [
                {
                    "type": "button",
                    "action_id": "picker_confirm",
                    "block_id": "picker_actions",
                    "value": "confirm",
                    "action_ts": "1710000003.1",
                }
            ],
        }
    )
    assert confirm.status == 200 and confirm.elapsed_seconds < ACK_LIMIT_SECONDS
    answer = answer_in(bot.api, CHANNEL, None)
    assert "filter `namespace=team-b`" in blocks_text(answer.blocks)
    assert metrics_server.scrapes == 1
    assert any(p.get("delete_original") for p in bot.api.response_posts["picker"])


def test_confirm_of_unreachable_cluster_tells_only_the_user(bot: RunningBot) -> None:
    base = {
        "type": "block_actions",
        "user": {"id": USER},
        "channel": {"id": CHANNEL},
        "container": {"type": "message", "is_ephemeral": True, "message_ts": "1.1"},
        "response_url": bot.api.response_url("prod"),
    }
    state = {
        "values": {
            "picker_cluster": {"picker_cluster": {"selected_option": {"value": "prod"}}},
            "picker_context": {"picker_context": {"selected_option": {"value": "prod-readonly"}}},
        }
    }
    bot.sender.interaction(
        {
            **base,
            "state": state,
            "actions": [
                {
                    "type": "button",
                    "action_id": "picker_confirm",
                    "value": "confirm",
                    "action_ts": "2.1",
                }
            ],
        }
    )
    problem = bot.api.wait_for(
        "response_url",
        where=lambda c: (
            c.params.get("response_type") == "ephemeral"
            and "prod" in json.dumps(c.params.get("blocks"))
            and not c.params.get("delete_original")
        ),
        timeout=30,
    )[-1]
    text = blocks_text(problem.params["blocks"])
    assert "prod" in text and "kube-token" not in text
    # The working message was removed rather than left hanging in the channel.
    assert bot.api.wait_for("chat.delete")


def test_picker_without_registered_clusters_says_how_to_register(
    bot_without_clusters: RunningBot,
) -> None:
    body = bot_without_clusters.sender.command(
        "", response_url=bot_without_clusters.api.response_url("p")
    ).json()
    assert "HAMI_CLUSTERS_FILE" in blocks_text(body["blocks"])


# -- mentions, files, follow-ups ------------------------------------------------------------


def test_mention_with_pasted_metrics_answers_in_thread_with_numbers_and_chart(
    bot: RunningBot,
) -> None:
    metrics = pasted(read_fixture("scheduler-small.prom"))
    response, ts = bot.sender.mention("here you go\n" + metrics)
    assert response.status == 200 and response.elapsed_seconds < ACK_LIMIT_SECONDS
    answer = answer_in(bot.api, CHANNEL, ts)
    text = blocks_text(answer.blocks)
    assert "cores *45.8%* allocated (275 / 600 cores)" in text
    assert "memory *46.7%* allocated (77.0 GiB / 165 GiB)" in text
    assert "*2* whole GPUs free" in text and "*By GPU model*" in text
    assert "gpu-node-1" in text and "team-a" in text
    assert "*Allocation*" in text and "not live utilisation" in text
    actions = next(b for b in answer.blocks if b["type"] == "actions")
    assert [e["text"]["text"] for e in actions["elements"]] == [
        "Refresh",
        "GPUs",
        "Workloads",
        "CSV",
    ]
    assert len(answer.blocks) <= 50
    complete = bot.api.wait_for("files.completeUploadExternal")[0]
    assert complete.params["channel_id"] == CHANNEL and complete.params["thread_ts"] == ts
    chart = next(f for f in bot.api.uploaded_files() if f.filename.endswith(".png"))
    assert chart.content is not None
    width, height = png_size(chart.content)
    assert width >= 400 and height >= 200
    assert not png_is_blank(chart.content)


def test_snippet_file_is_downloaded_with_the_bot_token(bot: RunningBot) -> None:
    file = bot.api.add_private_file(
        "scheduler.prom", read_fixture("scheduler-small.prom").encode(), mode="snippet"
    )
    _, ts = bot.sender.mention("what about this one?", files=[file])
    text = blocks_text(answer_in(bot.api, CHANNEL, ts).blocks)
    assert "275 / 600 cores" in text and "scheduler.prom" in text
    download = bot.api.calls_to("download")[0]
    assert download.headers["authorization"] == f"Bearer {bot.api.bot_token}"


def test_wrong_kind_of_file_is_refused_with_the_reason(bot: RunningBot) -> None:
    file = bot.api.add_private_file(
        "screenshot.png", b"\x89PNG....", mimetype="image/png", filetype="png"
    )
    _, ts = bot.sender.mention("", files=[file])
    text = blocks_text(answer_in(bot.api, CHANNEL, ts).blocks)
    assert "screenshot.png" in text and "image/png" in text and ".prom or .txt" in text
    assert bot.api.calls_to("download") == []


def test_follow_ups_in_the_thread_use_the_metrics_given_there(bot: RunningBot) -> None:
    _, root = bot.sender.mention(pasted(read_fixture("scheduler-small.prom")))
    answer_in(bot.api, CHANNEL, root)
    bot.sender.mention("ns team-b", thread_ts=root)
    bot.api.wait_for("chat.update", 2)
    filtered = [
        m
        for m in bot.api.messages.values()
        if m.thread_ts == root and "filter `namespace=team-b`" in blocks_text(m.blocks)
    ]
    assert filtered, "no summary filtered to team-b in the thread"
    # The metrics pasted in the thread, narrowed to team-b: its totals, quota and pods.
    text = blocks_text(filtered[0].blocks)
    assert "namespace team-b: *45 cores* (16.4% of the cluster's allocation)" in text
    assert "quota use *75.0%* (memory 12.0 GiB / 16.0 GiB)" in text
    pods = text[text.index("*Its pods (2)*") :]
    pods = pods[: pods.index("```", pods.index("```") + 3)]
    assert "notebook-0" in pods and "embed-svc-0" in pods and "train-full-0" not in pods

    # The filter sticks: workloads after it are team-b's, until `all`.
    bot.sender.mention("workloads", thread_ts=root)
    bot.api.wait_for("chat.update", 3)
    workloads = [m for m in bot.api.messages.values() if "workload allocations" in m.text]
    assert workloads and "of namespace team-b" in workloads[0].text
    assert "notebook-0" in blocks_text(workloads[0].blocks)
    assert "train-full-0" not in blocks_text(workloads[0].blocks)

    bot.sender.mention("all", thread_ts=root)
    # Mentions are answered concurrently: `csv` asked before `all` was answered could read the
    # thread while it still holds the filter.
    bot.api.wait_for("chat.update", 4)
    bot.sender.mention("csv", thread_ts=root)
    bot.api.wait_for(
        "files.completeUploadExternal", where=lambda c: "CSV" in json.dumps(c.json_param("files"))
    )
    csv_file = next(f for f in bot.api.uploaded_files() if f.filename.endswith(".csv"))
    assert csv_file.thread_ts == root
    assert csv_file.content is not None and b"train-full-0" in csv_file.content


def test_follow_up_without_metrics_explains_what_to_paste(bot: RunningBot) -> None:
    _, ts = bot.sender.mention("gpus")
    text = blocks_text(answer_in(bot.api, CHANNEL, ts).blocks)
    assert "I did not find HAMi metrics" in text or "none I remember" in text
    assert "/metrics" in text


def thread_reply(api: SlackWebApi, thread_ts: str | None, words: str) -> str:
    """The text of the bot's final answer in ``thread_ts`` (None: at the channel's top level)
    that contains ``words``."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        for message in list(api.messages.values()):
            text = blocks_text(message.blocks)
            if message.thread_ts == thread_ts and message.updates and words in text:
                return text
        time.sleep(0.02)
    raise AssertionError(f"no answer with {words!r} in thread {thread_ts}")


def test_words_that_are_not_a_follow_up_in_a_thread_with_metrics_are_not_called_no_metrics(
    bot: RunningBot,
) -> None:
    _, root = bot.sender.mention(pasted(read_fixture("scheduler-small.prom")))
    answer_in(bot.api, CHANNEL, root)
    bot.sender.mention("hello", thread_ts=root)
    text = thread_reply(bot.api, root, "Not a follow-up I know")
    assert "I did not understand “hello” as a follow-up" in text
    assert re.search(
        r"This thread has metrics pasted here, given \d{4}-\d\d-\d\d "
        r"\d\d:\d\d:\d\d UTC \(\d+ s ago\)",
        text,
    )
    assert "none I remember" not in text and "did not find HAMi metrics" not in text
    for follow_up in (
        "`ns team-a`",
        "`node gpu-node-1`",
        "`gpus`",
        "`workloads`",
        "`csv`",
        "`chart`",
        "`summary`",
        "`help`",
    ):
        assert follow_up in text
    assert "`usage`" not in text and "`refresh`" not in text  # not for pasted metrics

    sentence = (
        "could you tell me which team is using most of the GPUs on the second node "
        "this morning, and whether <that> is expected?"
    )
    bot.sender.mention(sentence, thread_ts=root)
    text = thread_reply(bot.api, root, "I did not understand “could you")
    assert "is expected?”" not in text and "…”" in text  # shown back cut, without markup
    assert "<that>" not in text

    # The thread's metrics still answer a follow-up afterwards.
    bot.sender.mention("ns team-b", thread_ts=root)
    thread_reply(bot.api, root, "filter `namespace=team-b`")


def test_words_in_a_cluster_summary_thread_name_the_cluster_and_its_follow_ups(
    bot: RunningBot,
) -> None:
    bot.sender.command("demo", response_url=bot.api.response_url("demo"))
    summary = answer_in(bot.api, CHANNEL, None)
    bot.sender.mention("thanks!", thread_ts=summary.ts)
    text = thread_reply(bot.api, summary.ts, "Not a follow-up I know")
    assert "I did not understand “thanks!” as a follow-up" in text
    assert "This thread has the live summary of cluster *demo*" in text
    assert "`refresh`" in text and "`ns team-a`" in text
    assert "`usage`" not in text  # demo's registry entry does not allow nvidia-smi
    assert "none I remember" not in text


def test_words_in_a_thread_without_metrics_say_there_are_none(bot: RunningBot) -> None:
    _, ts = bot.sender.mention("hello")
    text = blocks_text(answer_in(bot.api, CHANNEL, ts).blocks)
    assert "I did not find HAMi metrics in that message, and this thread has none I remember" in (
        text
    )


def test_bad_pastes_are_answered_with_their_messages(bot: RunningBot) -> None:
    dcgm = (
        "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n"
        "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"
        'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-1",Hostname="n1"} 42\n'
    )
    _, ts = bot.sender.mention(pasted(dcgm))
    text = blocks_text(answer_in(bot.api, CHANNEL, ts).blocks)
    assert ":warning:" in text and "DCGM" in text
    assert "Traceback" not in text


def test_direct_message_answers_at_top_level_and_follow_ups_work(bot: RunningBot) -> None:
    bot.sender.direct_message(read_fixture("scheduler-small.prom"), channel="D0ALICE1")
    first = answer_in(bot.api, "D0ALICE1", None)
    assert "275 / 600 cores" in blocks_text(first.blocks)
    bot.sender.direct_message("gpus", channel="D0ALICE1")
    bot.api.wait_for("chat.update", 2)
    tables = [
        m for m in bot.api.messages.values() if m.channel == "D0ALICE1" and "All 6 GPUs" in m.text
    ]
    assert tables, "no GPU table in the DM"
    assert tables[0].thread_ts is None
    table = blocks_text(tables[0].blocks)
    assert table.count("gpu-node-1") == 3 and table.count("gpu-node-2") == 3


def test_other_bots_are_ignored_unless_they_bring_metrics(bot: RunningBot) -> None:
    response, _ = bot.sender.mention("hello there", bot_id="B0OTHER")
    assert response.status == 200
    time.sleep(0.5)
    assert bot.api.calls_to("chat.postMessage") == []
    _, ts = bot.sender.mention(pasted(read_fixture("scheduler-small.prom")), bot_id="B0OTHER")
    assert "275 / 600 cores" in blocks_text(answer_in(bot.api, CHANNEL, ts).blocks)


def test_message_shortcut_summarises_into_the_message_thread(bot: RunningBot) -> None:
    message_ts = "1710000500.000100"
    response = bot.sender.interaction(
        {
            "type": "message_action",
            "callback_id": "summarize_metrics",
            "user": {"id": USER},
            "channel": {"id": CHANNEL},
            "message_ts": message_ts,
            "message": {
                "type": "message",
                "user": "U0BOB",
                "ts": message_ts,
                "text": pasted(read_fixture("scheduler-small.prom")),
            },
            "response_url": bot.api.response_url("shortcut"),
        }
    )
    assert response.status == 200 and response.elapsed_seconds < ACK_LIMIT_SECONDS
    answer = answer_in(bot.api, CHANNEL, message_ts)
    assert "275 / 600 cores" in blocks_text(answer.blocks)


def test_message_shortcut_on_a_message_without_metrics_tells_only_the_user(
    bot: RunningBot,
) -> None:
    bot.sender.interaction(
        {
            "type": "message_action",
            "callback_id": "summarize_metrics",
            "user": {"id": USER},
            "channel": {"id": CHANNEL},
            "message_ts": "1.2",
            "message": {"type": "message", "user": "U0BOB", "ts": "1.2", "text": "lunch?"},
            "response_url": bot.api.response_url("shortcut2"),
        }
    )
    post = bot.api.wait_for("response_url")[0]
    assert post.params["response_type"] == "ephemeral"
    assert "no HAMi metrics" in blocks_text(post.params["blocks"])
    assert bot.api.calls_to("chat.postMessage") == []


# -- buttons --------------------------------------------------------------------------------


def test_buttons_refresh_in_place_and_send_tables(bot: RunningBot) -> None:
    _, ts = bot.sender.mention(pasted(read_fixture("scheduler-small.prom")))
    answer = answer_in(bot.api, CHANNEL, ts)

    def press_under_answer(action_id: str, action_ts: str) -> None:
        press(
            bot.sender.interaction,
            answer,
            action_id,
            user=USER,
            channel=CHANNEL,
            response_url=bot.api.response_url("buttons"),
            action_ts=action_ts,
            thread_ts=ts,
        )

    press_under_answer("summary_refresh", "9.1")
    bot.api.wait_for("chat.update", 3, where=lambda c: c.params.get("ts") == answer.ts)
    refreshed = bot.api.message(CHANNEL, answer.ts)
    assert "275 / 600 cores" in blocks_text(refreshed.blocks)

    press_under_answer("summary_gpus", "9.2")
    gpus = bot.api.wait_for(
        "chat.update", where=lambda c: "All 6 GPUs" in str(c.params.get("text"))
    )[0]
    # The table fits a code block that does not wrap; every GPU is in it.
    lines = [line for block in code_blocks(gpus.json_param("blocks")) for line in block]
    assert max(map(len, lines)) <= 72
    assert all(f"gpu-node-{n}/{i} " in "\n".join(lines) for n in (1, 2) for i in range(3))


# -- delivery guarantees --------------------------------------------------------------------


def test_a_retried_event_is_answered_once(bot: RunningBot) -> None:
    _, ts = bot.sender.mention(
        pasted(read_fixture("scheduler-small.prom")), event_id="Ev0RETRY01", ts="1710000900.000001"
    )
    retry, _ = bot.sender.mention(
        pasted(read_fixture("scheduler-small.prom")), event_id="Ev0RETRY01", ts="1710000900.000001"
    )
    assert retry.status == 200
    answer_in(bot.api, CHANNEL, ts)
    bot.api.wait_for("files.completeUploadExternal")
    time.sleep(0.5)
    assert len(bot.api.calls_to("chat.postMessage")) == 1
    # Slack's own retry header path: same event id, X-Slack-Retry-Num set.
    again = bot.sender.event(
        {
            "type": "app_mention",
            "user": USER,
            "channel": CHANNEL,
            "text": f"<@{BOT_USER_ID}> gpus",
            "ts": "1710000900.000001",
        },
        event_id="Ev0RETRY01",
        retry_num=1,
    )
    assert again.status == 200
    time.sleep(0.3)
    assert len(bot.api.calls_to("chat.postMessage")) == 1


def test_rate_limited_web_api_call_is_retried_after_retry_after(bot: RunningBot) -> None:
    bot.api.rate_limit_once("chat.update", retry_after_seconds=1)
    _, ts = bot.sender.mention(pasted(read_fixture("scheduler-small.prom")))
    answer = answer_in(bot.api, CHANNEL, ts)
    updates = [c for c in bot.api.calls if c.method == "chat.update"]
    assert [c.status for c in updates[:2]] == [429, 200]
    assert updates[1].at - updates[0].at >= 0.9
    assert "275 / 600 cores" in blocks_text(answer.blocks)


def test_requests_with_bad_signatures_are_refused(bot: RunningBot) -> None:
    body = json.dumps(
        {
            "type": "event_callback",
            "event_id": "Ev0BAD",
            "event": {
                "type": "app_mention",
                "user": USER,
                "channel": CHANNEL,
                "text": "hi",
                "ts": "1.1",
            },
        }
    )
    unsigned = bot.sender.post(body, "application/json", signed=False)
    wrong = bot.sender.post(body, "application/json", signature="v0=" + "0" * 64)
    stale_stamp = int(time.time()) - 6 * 60
    stale = bot.sender.post(body, "application/json", timestamp=stale_stamp)
    assert (unsigned.status, wrong.status, stale.status) == (401, 401, 401)
    time.sleep(0.3)
    assert [c.method for c in bot.api.calls if c.method != "auth.test"] == []


def test_a_large_reply_stays_one_screen_and_its_csv_button_brings_every_table(
    bot: RunningBot,
) -> None:
    from core.simulate import simulate_exposition

    text = simulate_exposition(120, 8)
    file = bot.api.add_private_file("big-cluster.prom", text.encode())
    _, ts = bot.sender.mention("", files=[file])
    answer = answer_in(bot.api, CHANNEL, ts)
    assert len(answer.blocks) <= 50
    for block in answer.blocks:
        if block["type"] == "section" and "text" in block:
            assert len(block["text"]["text"]) <= 3000
    assert rendered_lines(answer.blocks) <= 45
    text_shown = blocks_text(answer.blocks)
    assert "more: CSV button" in text_shown and "the GPUs, Workloads and CSV buttons" in text_shown
    bot.api.wait_for("files.completeUploadExternal")
    # The first reply brings only its chart; the buttons bring the tables.
    assert [f.filename for f in bot.api.uploaded_files()] == ["hami-allocation.png"]
    press(
        bot.sender.interaction,
        answer,
        "summary_csv",
        user=USER,
        channel=CHANNEL,
        response_url=bot.api.response_url("csv"),
        action_ts="9.3",
        thread_ts=ts,
    )
    bot.api.wait_for("files.completeUploadExternal", 2)
    names = {f.filename for f in bot.api.uploaded_files()}
    assert {"hami-allocation.png", "hami-summary-tables.txt", "hami-summary.csv"} <= names
    tables = next(f for f in bot.api.uploaded_files() if f.filename == "hami-summary-tables.txt")
    assert tables.content is not None
    # Every node is in the tables file, none silently cut.
    nodes = set(re.findall(r'node="([^"]+)"', text))
    assert len(nodes) == 120
    assert all(node.encode() in tables.content for node in nodes)


def test_own_messages_are_never_answered(bot: RunningBot) -> None:
    metrics = pasted(read_fixture("scheduler-small.prom"))
    response, _ = bot.sender.mention(metrics, user=BOT_USER_ID)
    assert response.status == 200
    bot.sender.event(
        {
            "type": "message",
            "channel_type": "im",
            "channel": "D0ALICE1",
            "bot_id": BOT_ID,
            "text": metrics,
            "ts": "1710000950.000001",
        }
    )
    time.sleep(0.5)
    assert bot.api.calls_to("chat.postMessage") == []


def test_internal_errors_get_an_apology_with_an_id_and_a_log_entry(
    slack_api: SlackWebApi,
    metrics_server: Any,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def collector_with_a_bug(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("unexpected state in the collector")

    registry = load_registry(write_registry(tmp_path, metrics_server.url))
    running, server = start_bot(slack_api, registry, collect=collector_with_a_bug)
    try:
        running.sender.command("demo", response_url=slack_api.response_url("bug"))
        post = slack_api.wait_for("response_url")[0]
    finally:
        stop_bot(running, server)
    text = blocks_text(post.params["blocks"])
    assert post.params["response_type"] == "ephemeral"
    error_id = re.search(r"error id `([0-9a-f]{8})`", text)
    assert error_id, text
    assert "unexpected state" not in text and "Traceback" not in text
    logged = [r for r in caplog.records if error_id.group(1) in r.getMessage()]
    assert logged and logged[0].exc_info is not None
    assert "channel C0TEAM01" in logged[0].getMessage()


def test_follow_ups_in_a_cluster_summary_thread_ask_the_cluster_again(
    bot: RunningBot, metrics_server: Any
) -> None:
    bot.sender.command("demo", response_url=bot.api.response_url("demo"))
    summary = answer_in(bot.api, CHANNEL, None)
    bot.sender.mention("ns team-a", thread_ts=summary.ts)
    answer = answer_in(bot.api, CHANNEL, summary.ts)
    text = blocks_text(answer.blocks)
    assert "cluster *demo*" in text and "filter `namespace=team-a`" in text
    assert metrics_server.scrapes == 1  # answered from the scrape cache


def test_live_scrapes_over_the_limit_get_a_polite_refusal(
    slack_api: SlackWebApi, metrics_server: Any, tmp_path: Path
) -> None:
    registry = load_registry(write_registry(tmp_path, metrics_server.url))
    running, server = start_bot(slack_api, registry, {"HAMI_SUMMARY_LIVE_PER_MINUTE": "1"})
    try:
        running.sender.command("demo fresh", response_url=slack_api.response_url("one"))
        slack_api.wait_for("chat.update")
        running.sender.command("demo fresh", response_url=slack_api.response_url("two"))
        refusal = slack_api.wait_for("response_url")[0]
    finally:
        stop_bot(running, server)
    text = blocks_text(refusal.params["blocks"])
    assert refusal.params["response_type"] == "ephemeral"
    assert "limit of 1 summaries of live clusters or pasted metrics per minute" in text
    assert "try again in" in text
    assert metrics_server.scrapes == 1


def test_files_over_the_size_limit_are_refused_before_download(
    slack_api: SlackWebApi, metrics_server: Any, tmp_path: Path
) -> None:
    registry = load_registry(write_registry(tmp_path, metrics_server.url))
    running, server = start_bot(slack_api, registry, {"HAMI_SUMMARY_MAX_FILE_BYTES": "4096"})
    try:
        metrics = read_fixture("scheduler-small.prom").encode()
        file = slack_api.add_private_file("huge.prom", metrics)
        _, ts = running.sender.mention("", files=[file])
        text = blocks_text(answer_in(slack_api, CHANNEL, ts).blocks)
    finally:
        stop_bot(running, server)
    assert "huge.prom: it is 12.0 KiB, over my limit of 4.0 KiB" in text
    assert slack_api.calls_to("download") == []


# -- what the summary says about itself -------------------------------------------------------

SCRAPED = re.compile(r"scraped (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC \((\d+) s ago\)")


def test_header_has_the_scrape_time_of_a_cluster_and_says_a_paste_has_none(
    bot: RunningBot,
) -> None:
    bot.sender.command("demo", response_url=bot.api.response_url("demo"))
    cluster = blocks_text(answer_in(bot.api, CHANNEL, None).blocks)
    found = SCRAPED.search(cluster)
    assert found, cluster
    stamp = datetime.strptime(found.group(1), "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
    assert abs((datetime.now(UTC) - stamp).total_seconds()) < 60
    assert "Source: cluster *demo* · scraped " in cluster

    _, root = bot.sender.mention(pasted(read_fixture("scheduler-small.prom")))
    paste = blocks_text(answer_in(bot.api, CHANNEL, root).blocks)
    assert (
        "Source: pasted metrics · time of scrape unknown (pasted or exported text) · "
        "current metric names"
    ) in paste
    assert "scraped" not in paste
    # A follow-up answered later also says when the metrics were given.
    bot.sender.mention("ns team-b", thread_ts=root)
    follow_up = thread_reply(bot.api, root, "filter `namespace=team-b`")
    assert re.search(
        r"time of scrape unknown \(pasted or exported text\); given "
        r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(\d+ s ago\)",
        follow_up,
    )


def test_filtered_answers_say_which_sections_cover_the_whole_cluster(bot: RunningBot) -> None:
    bot.sender.command("demo", response_url=bot.api.response_url("whole"))
    whole = answer_in(bot.api, CHANNEL, None)
    text = blocks_text(whole.blocks)
    assert "Whole cluster" not in text and "*Needs attention*" in text

    bot.sender.command("demo ns=team-a", response_url=bot.api.response_url("team-a"))
    bot.api.wait_for("chat.update", 2)
    filtered = thread_reply(bot.api, None, "filter `namespace=team-a`")
    assert filtered.startswith("HAMi GPU allocation: demo, namespace team-a")
    # The namespace first, then the cluster, labelled as the whole cluster.
    assert filtered.index("*Its pods") < filtered.index("*Whole cluster (demo)*")
    cluster = filtered[filtered.index("*Whole cluster (demo)*") :]
    assert "cores *45.8%* allocated (275 / 600 cores)" in cluster
    pods = filtered[filtered.index("*Its pods") :]
    pods = pods[: pods.index("```", pods.index("```") + 3)]
    assert "train-full-0" in pods and "embed-svc-0" not in pods

    bot.sender.mention("node gpu-node-2", thread_ts=whole.ts)
    by_node = thread_reply(bot.api, whole.ts, "filter `node=gpu-node-2`")
    assert by_node.startswith("HAMi GPU allocation: demo, node gpu-node-2")
    every_gpu = by_node[by_node.index("*Every GPU of the node (3)*") :]
    assert "gpu-node-2/0" in every_gpu and "gpu-node-1/0" not in every_gpu


def test_capacity_outlook_counts_every_model_and_shape(bot: RunningBot) -> None:
    from core.simulate import simulate_exposition

    metrics = simulate_exposition(50, 8, seed=7)
    file = bot.api.add_private_file("fifty-nodes.prom", metrics.encode())
    _, ts = bot.sender.mention("", files=[file])
    text = blocks_text(answer_in(bot.api, CHANNEL, ts).blocks)
    outlook = text[text.index("*Capacity outlook by GPU model*") :]
    summary = summarize_text(metrics, SourceInfo("paste", "x"))
    assert len(summary.models) >= 3
    for model in summary.models:
        placements = [shape.placements for shape in model.capacity[:6]]
        cells = [short_type(model.model), *(f"{p:,}" for p in placements)]
        assert re.search(r"\s+".join(map(re.escape, cells)), outlook), model.model
    assert "where: `fit 4xH100` in this thread" in outlook
    # The outlook ends the first page; what needs attention comes before it.
    assert text.index("*Needs attention*") < text.index("*Capacity outlook by GPU model*")
