"""Names from metrics never act as Slack markup: every message, block, file title and fallback
the bot sends carries them escaped (``&lt;!channel&gt;``), end to end through signed requests
and the local Slack Web API."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.conftest import read_fixture
from tests.slack.conftest import (
    CHANNEL,
    USER,
    MetricsServer,
    RunningBot,
)
from tests.slack.test_http_e2e import answer_in, blocks_text, first_reply_of_live_scrape, pasted
from tests.support.slack_api import ApiCall, SlackWebApi
from tests.support.slack_press import press as press_button

# Label values an attacker (or anyone naming a pod) controls, and the raw markup each would be.
HOSTILE = {
    "gpu-node-1": "<!channel>",
    "gpu-node-2": "<!here>&co",
    "train-full-0": "<@U123>",
    "team-a": "<https://evil|click>",
    "team-b": "ops<b>z",
    "NVIDIA A100-PCIE-40GB": "A100 <!everyone>",
}
RAW_MARKUP = ("<!channel>", "<!here>", "<@U123>", "<https://evil", "<!everyone>")
# Slack links (<url|text>) in metrics are unwrapped to their text when they are read, so the
# link never reaches a view; the other names do, escaped.
ESCAPED = (
    "&lt;!channel&gt;",
    "&lt;!here&gt;&amp;co",
    "&lt;@U123&gt;",
    "A100 &lt;!everyone&gt;",
    "ops&lt;b&gt;z",
)
SENDING_METHODS = (
    "chat.postMessage",
    "chat.update",
    "chat.postEphemeral",
    "files.completeUploadExternal",
    "response_url",
)


def hostile_metrics() -> str:
    text = read_fixture("scheduler-small.prom")
    for name, value in HOSTILE.items():
        text = text.replace(f'"{name}"', f'"{value}"')
    return text


def slack_escaped(text: str) -> str:
    """Text as Slack delivers what a person typed: &, < and > as entities."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def sent(bot: RunningBot) -> list[ApiCall]:
    return [c for c in bot.api.calls if c.method in SENDING_METHODS]


def assert_no_raw_markup(calls: list[ApiCall]) -> str:
    """Every string the bot sent, checked for raw markup from the metrics; returns them all."""
    everything = json.dumps([c.params for c in calls], ensure_ascii=False)
    for raw in RAW_MARKUP:
        assert raw not in everything, f"{raw} reached Slack unescaped"
    # The only raw "<" markup left is our own mention of the person who asked.
    assert set(re.findall(r"<[@!#][^>]*>", everything)) <= {f"<@{USER}>"}
    return everything


def press(bot: RunningBot, answer: Any, thread_ts: str, action_id: str) -> None:
    press_button(
        bot.sender.interaction,
        answer,
        action_id,
        user=USER,
        channel=CHANNEL,
        response_url=bot.api.response_url("buttons"),
        action_ts="9.1",
        thread_ts=thread_ts,
    )


def test_pasted_names_with_slack_markup_are_escaped_everywhere(bot: RunningBot) -> None:
    _, ts = bot.sender.mention(slack_escaped(pasted(hostile_metrics())))
    answer = answer_in(bot.api, CHANNEL, ts)
    shown = blocks_text(answer.blocks)
    assert "&lt;!channel&gt;" in shown and "&lt;!here&gt;&amp;co" in shown  # Nodes, GPUs
    assert "275 / 600 cores" in shown  # the summary itself is intact
    bot.api.wait_for("files.completeUploadExternal")

    press(bot, answer, ts, "summary_workloads")
    bot.api.wait_for("chat.update", where=lambda c: "&lt;@U123&gt;" in json.dumps(c.params))
    press(bot, answer, ts, "summary_gpus")
    bot.api.wait_for("chat.update", where=lambda c: "All 6 GPUs" in str(c.params.get("text")))

    everything = assert_no_raw_markup(sent(bot))
    for escaped in ESCAPED:
        assert escaped in everything
    # Our own mention of the person who pressed the button still works.
    working = [c.params["text"] for c in bot.api.calls_to("chat.postMessage")]
    assert f"Working on it: workloads for <@{USER}>…" in working


def test_names_with_markup_in_an_attached_file_are_escaped(bot: RunningBot) -> None:
    file = bot.api.add_private_file("<!channel>.prom", hostile_metrics().encode("utf-8"))
    _, ts = bot.sender.mention("this one", files=[file])
    answer = answer_in(bot.api, CHANNEL, ts)
    assert "&lt;!channel&gt;.prom" in answer.text or "&lt;!channel&gt;" in answer.text
    bot.api.wait_for("files.completeUploadExternal")
    assert "ops&lt;b&gt;z" in blocks_text(answer.blocks)  # Namespaces
    titles = [
        f["title"]
        for c in bot.api.calls_to("files.completeUploadExternal")
        for f in c.json_param("files")
    ]
    assert titles and all("<" not in title for title in titles)
    everything = assert_no_raw_markup(sent(bot))
    for escaped in ("&lt;!channel&gt;", "&lt;!here&gt;&amp;co", "ops&lt;b&gt;z"):
        assert escaped in everything


def test_markers_in_label_values_cannot_forge_a_mention(bot: RunningBot) -> None:
    # The private-use characters our own mentions are built with, typed into a node name.
    forged = read_fixture("scheduler-small.prom").replace(
        '"gpu-node-1"', '"\ue000@U0EVIL01\ue001 \ue000!channel\ue001"'
    )
    _, ts = bot.sender.mention(pasted(forged))
    answer = answer_in(bot.api, CHANNEL, ts)
    shown = blocks_text(answer.blocks)
    # Shown as text, the markers written out as escapes (a GPU column shortens the name).
    assert "\\ue000@U0E" in shown
    everything = json.dumps([c.params for c in sent(bot)], ensure_ascii=False)
    assert "<@U0EVIL01>" not in everything and "<!channel>" not in everything
    assert "\ue000" not in everything and "\ue001" not in everything


def test_line_breaks_and_fences_in_names_stay_inside_their_table_row(
    slack_api: SlackWebApi, tmp_path: Path
) -> None:
    # "\\n" is a newline once the exposition is read; ``` would close Slack's code block. A
    # live cluster, not a paste: reading a paste takes ``` out as the fences of a code block.
    scheduler = MetricsServer(
        read_fixture("scheduler-small.prom").replace('"gpu-node-1"', '"a```\\n*bold* <!here>"')
    )
    answer = first_reply_of_live_scrape(slack_api, tmp_path, scheduler)
    sections = [b["text"]["text"] for b in answer.blocks if b["type"] == "section" and "text" in b]
    every_gpu = next(text for text in sections if text.startswith("*Every GPU*"))
    _, rest = every_gpu.split("\n", 1)
    # The shortened name is also said whole after the table, as inline code that its own
    # backticks cannot close (and neither bold nor a mention).
    table, nodes = rest.rsplit("\n", 1)
    assert nodes == "Nodes: `a\u02cb\u02cb\u02cb\\n*bold* &lt;!here&gt;`, `gpu-node-2`."
    assert table.startswith("```") and table.endswith("```") and table.count("```") == 2
    rows = table.strip("`").split("\n")
    assert len(rows) == 7  # the header and one row per GPU
    hostile = [row for row in rows if row.startswith("a\u02cb\u02cb\u02cb\\n*bol")]
    assert len(hostile) == 3  # the node's three GPUs, one line each


def test_a_name_that_looks_like_a_chart_formula_is_drawn_as_written(bot: RunningBot) -> None:
    metrics = read_fixture("scheduler-small.prom").replace('"gpu-node-1"', '"gpu$\\\\frac{$x"')
    _, ts = bot.sender.mention(pasted(metrics))
    answer_in(bot.api, CHANNEL, ts)
    upload = bot.api.wait_for("files.completeUploadExternal")[0]
    assert [f["title"] for f in upload.json_param("files")] == [
        "Chart: who holds the GPUs (by GPU model and namespace) and where there is room"
    ]
    png = next(f.content for f in bot.api.uploaded_files())
    assert png is not None and png[:8] == b"\x89PNG\r\n\x1a\n"
    posted = [str(c.params.get("text")) for c in bot.api.calls_to("chat.postMessage")]
    assert not any("could not attach" in text for text in posted)
