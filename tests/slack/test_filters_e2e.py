"""Filters in Slack end to end: signed requests in, the local Slack Web API out.

A registered cluster serves a simulated exposition (160 GPUs, several models and tenants).
``/hami-summary demo ns=X`` answers with the namespace's own rows; in its thread the filter
sticks for follow-ups (workloads, chart, gpus, fit) and the buttons carry it, until a new
filter or ``all``; a mistyped name gets the closest three names and leaves the filter as it
was. The chart of a filtered answer gives each namespace the colour the cluster's chart gives
it (checked in the uploaded PNG's pixels).
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bot.clusters.registry import load_registry
from core.api import summarize_text
from core.model import SourceInfo
from core.simulate import SimulatedCluster, render_exposition, simulate_cluster
from core.views.palette import assign_colours, namespace_ranking, preferred_colour
from tests.slack.conftest import (
    CHANNEL,
    USER,
    MetricsServer,
    RunningBot,
    start_bot,
    stop_bot,
    write_registry,
)
from tests.slack.test_http_e2e import answer_in, blocks_text
from tests.support.block_measure import code_blocks
from tests.support.png_colours import namespace_colours
from tests.support.slack_api import SlackWebApi, StoredFile, StoredMessage
from tests.support.slack_press import press as press_button


@pytest.fixture(scope="module")
def cluster() -> SimulatedCluster:
    return simulate_cluster(20, 8, seed=0)


@pytest.fixture
def demo(slack_api: SlackWebApi, cluster: SimulatedCluster, tmp_path: Path) -> Iterator[RunningBot]:
    server = MetricsServer(render_exposition(cluster))
    running, http = start_bot(slack_api, load_registry(write_registry(tmp_path, server.url)))
    yield running
    stop_bot(running, http)
    server.stop()


def cluster_colours(cluster: SimulatedCluster) -> dict[str, str]:
    """Each namespace's colour in the cluster's chart, from the whole summary's ranking."""
    whole = summarize_text(render_exposition(cluster), SourceInfo("paste", "x"))
    return assign_colours(namespace_ranking(whole))


def moved_namespace(cluster: SimulatedCluster) -> str:
    """A namespace whose colour in the cluster's chart is not its name's own (a larger one
    took that): its filtered chart shows the cluster's colour only if given the ranking."""
    colours = cluster_colours(cluster)
    return next(ns for ns, colour in colours.items() if colour != preferred_colour(ns))


def answer_where(
    api: SlackWebApi,
    thread_ts: str,
    accept: Callable[[StoredMessage], bool],
    *,
    seen: set[str],
    timeout: float = 30.0,
) -> StoredMessage:
    """The bot's next final answer in ``thread_ts`` (one not in ``seen``) that ``accept``s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for message in list(api.messages.values()):
            if (
                message.thread_ts == thread_ts
                and message.updates
                and message.ts not in seen
                and accept(message)
            ):
                seen.add(message.ts)
                return message
        time.sleep(0.02)
    shown = [blocks_text(m.blocks)[:120] for m in api.messages.values()]
    raise AssertionError(f"no new answer in thread {thread_ts}; messages: {shown}")


def saying(words: str) -> Callable[[StoredMessage], bool]:
    return lambda message: words in blocks_text(message.blocks)


def table_rows(api: SlackWebApi, message: StoredMessage, filename: str) -> list[str]:
    """The rows of a table answer: its code block, or the file it sent when too long."""
    blocks = code_blocks(message.blocks)
    if blocks:
        return [line for block in blocks for line in block]
    file = uploaded(api, filename, message.thread_ts)
    assert file.content is not None
    return file.content.decode("utf-8").splitlines()


def uploaded(
    api: SlackWebApi, filename: str, thread_ts: str | None, count: int = 1, timeout: float = 30.0
) -> StoredFile:
    """The ``count``-th file of that name uploaded in the thread (None: at the top level)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        files = [
            f for f in api.uploaded_files() if f.filename == filename and f.thread_ts == thread_ts
        ]
        if len(files) >= count:
            return files[count - 1]
        time.sleep(0.02)
    raise AssertionError(f"no {filename} uploaded in thread {thread_ts}")


def press(bot: RunningBot, message: StoredMessage, action_id: str, action_ts: str) -> None:
    press_button(
        bot.sender.interaction,
        message,
        action_id,
        user=USER,
        channel=CHANNEL,
        response_url=bot.api.response_url(action_ts),
        action_ts=action_ts,
    )


def names_as(cell: str, name: str) -> bool:
    """Whether a table cell shows ``name``, whole or shortened in the middle (``ml-t…ing``)."""
    head, cut, tail = cell.partition("…")
    return cell == name or (bool(cut) and name.startswith(head) and name.endswith(tail))


def only_namespace(rows: list[str], namespace: str) -> bool:
    """Every row of a workloads table (its header first) is of ``namespace``."""
    cells = [row.split()[0] for row in rows[1:] if row.strip() and not row.startswith(" ")]
    return bool(cells) and all(names_as(cell, namespace) for cell in cells)


def test_a_namespace_filter_sticks_through_the_thread_and_its_buttons(
    demo: RunningBot, cluster: SimulatedCluster
) -> None:
    api = demo.api
    namespace = moved_namespace(cluster)
    mine = [a for a in cluster.allocations if a.namespace == namespace]
    demo.sender.command(f"demo ns={namespace}", response_url=api.response_url("ns"))
    root = answer_in(api, CHANNEL, None)
    text = blocks_text(root.blocks)
    assert text.startswith(f"HAMi GPU allocation: demo, namespace {namespace}")
    pods, gpus = len({a.pod for a in mine}), len({a.device_uuid for a in mine})
    assert f"*{pods} pods* on {gpus} GPUs" in text
    buttons = next(b for b in root.blocks if b["type"] == "actions")["elements"]
    assert all(json.loads(b["value"])["ns"] == namespace for b in buttons)
    seen = {root.ts}

    # A follow-up without a filter keeps the thread's.
    demo.sender.mention("workloads", thread_ts=root.ts)
    workloads = answer_where(api, root.ts, saying("workload allocations"), seen=seen)
    assert f"All {len(mine)} workload allocations of namespace {namespace}" in workloads.text
    assert only_namespace(table_rows(api, workloads, "hami-workloads.txt"), namespace)

    # The chart of the filter: its namespace in the cluster chart's colour, no other.
    demo.sender.mention("chart", thread_ts=root.ts)
    answer_where(api, root.ts, saying(f"Chart of namespace {namespace}"), seen=seen)
    chart = uploaded(api, "hami-allocation.png", root.ts)
    assert chart.title is not None and chart.title.startswith(f"Chart of namespace {namespace}")
    assert chart.content is not None
    assert namespace_colours(chart.content) == {cluster_colours(cluster)[namespace]}

    # A mistyped name: the closest names, and the filter stays.
    typo = namespace[:-1]
    demo.sender.mention(f"ns {typo}", thread_ts=root.ts)
    problem = answer_where(api, root.ts, saying("Did you mean"), seen=seen)
    assert f"No namespace named '{typo}'" in blocks_text(problem.blocks)
    assert f"Did you mean {namespace}" in blocks_text(problem.blocks)

    # The GPUs button under the filtered answer carries the filter: its share of each GPU.
    press(demo, root, "summary_gpus", "9.1")
    gpus = answer_where(api, root.ts, saying("GPUs of namespace"), seen=seen)
    used = {a.device_uuid for a in mine}
    assert f"All {len(used)} GPUs of namespace {namespace} and their shares" in gpus.text

    # A new filter replaces the old one; `fit` then places on that node only.
    node = max({a.node for a in mine}, key=lambda n: sum(a.node == n for a in cluster.allocations))
    demo.sender.mention(f"node {node}", thread_ts=root.ts)
    by_node = answer_where(api, root.ts, saying(f"node {node}"), seen=seen)
    assert blocks_text(by_node.blocks).startswith(f"HAMi GPU allocation: demo, node {node}")
    demo.sender.mention("workloads", thread_ts=root.ts)
    on_node = answer_where(api, root.ts, saying("workload allocations"), seen=seen)
    here = [a for a in cluster.allocations if a.node == node]
    assert f"All {len(here)} workload allocations of node {node}" in on_node.text
    demo.sender.mention("fit 1", thread_ts=root.ts)
    fit = answer_where(api, root.ts, saying(f"node {node}."), seen=seen)
    assert f"From Demo cluster, node {node}." in blocks_text(fit.blocks)

    # Refresh of the first answer keeps its own filter, and does not change the thread's.
    updates = api.message(CHANNEL, root.ts).updates
    press(demo, root, "summary_refresh", "9.2")
    # The note while it works, then the refreshed answer in its place.
    api.wait_for("chat.update", updates + 2, where=lambda c: c.params.get("ts") == root.ts)
    assert blocks_text(api.message(CHANNEL, root.ts).blocks).startswith(
        f"HAMi GPU allocation: demo, namespace {namespace}"
    )
    demo.sender.mention("gpus", thread_ts=root.ts)
    node_gpus = answer_where(api, root.ts, saying("GPUs of node"), seen=seen)
    assert f"All {sum(d.node == node for d in cluster.devices)} GPUs of node {node}" in (
        node_gpus.text
    )

    # `all`: the whole cluster again, for every follow-up after it.
    demo.sender.mention("all", thread_ts=root.ts)
    whole = answer_where(api, root.ts, saying("HAMi GPU allocation: demo\n"), seen=seen)
    assert "filter `" not in blocks_text(whole.blocks)
    demo.sender.mention("workloads", thread_ts=root.ts)
    every = answer_where(api, root.ts, saying("workload allocations"), seen=seen)
    assert f"All {len(cluster.allocations):,} workload allocations (" in every.text


def test_a_node_chart_gives_each_namespace_its_cluster_colour(
    demo: RunningBot, cluster: SimulatedCluster
) -> None:
    api = demo.api
    colours = cluster_colours(cluster)
    on: dict[str, set[str]] = defaultdict(set)
    for a in cluster.allocations:
        on[a.node].add(a.namespace)
    # The node with the most of the cluster's named namespaces on it.
    node = max(on, key=lambda n: (len(on[n] & set(colours)), n))
    demo.sender.command(f"demo node={node}", response_url=api.response_url("node"))
    root = answer_in(api, CHANNEL, None)
    assert blocks_text(root.blocks).startswith(f"HAMi GPU allocation: demo, node {node}")
    chart = uploaded(api, "hami-allocation.png", root.ts)
    assert chart.content is not None
    shown = namespace_colours(chart.content)
    # Each namespace there that the cluster's chart names (cores or memory), in its colour.
    expected = {colours[ns] for ns in on[node] if ns in colours}
    assert len(expected) >= 2
    assert shown == expected


def test_a_pasted_thread_keeps_its_filter_and_a_new_paste_starts_without_one(
    demo: RunningBot, cluster: SimulatedCluster
) -> None:
    api = demo.api
    text = render_exposition(cluster)
    file = api.add_private_file("cluster.prom", text.encode())
    _, root = demo.sender.mention("", files=[file])
    first = answer_in(api, CHANNEL, root)
    seen = {first.ts}
    namespace = moved_namespace(cluster)
    demo.sender.mention(f"ns {namespace}", thread_ts=root)
    answer_where(api, root, saying(f"filter `namespace={namespace}`"), seen=seen)
    demo.sender.mention("workloads", thread_ts=root)
    workloads = answer_where(api, root, saying("workload allocations"), seen=seen)
    assert f"of namespace {namespace}" in workloads.text

    again = api.add_private_file("cluster-again.prom", text.encode())
    demo.sender.mention("", files=[again], thread_ts=root)
    answer_where(api, root, saying("Since the previous paste"), seen=seen)
    demo.sender.mention("workloads", thread_ts=root)
    every = answer_where(api, root, saying("workload allocations"), seen=seen)
    assert f"All {len(cluster.allocations):,} workload allocations (" in every.text
