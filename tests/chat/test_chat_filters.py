"""Filters in the terminal chat: the same conversation as Slack, one thread.

``ns X`` narrows the answer to the namespace and sticks for ``workloads``, ``gpus``, ``chart``
and ``fit`` until ``all`` or a new filter; a mistyped name gets the closest names and leaves
the filter as it was; the filtered chart gives the namespace its cluster chart's colour.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from bot.cli.chat import CHANNEL, THREAD, ChatSession
from bot.clusters.registry import empty_registry
from bot.conversation.service import Conversation
from bot.conversation.thread_filter import thread_filter
from bot.live import RegistryLiveSource
from bot.store.memory import MemoryStore
from bot.store.state import BotState
from core.api import summarize_text
from core.model import SourceInfo
from core.simulate import SimulatedCluster, render_exposition, simulate_cluster
from core.views.palette import assign_colours, namespace_ranking, preferred_colour
from tests.support.png_colours import namespace_colours


@pytest.fixture(scope="module")
def cluster() -> SimulatedCluster:
    return simulate_cluster(20, 8, seed=0)


def session(tmp_path: Path) -> tuple[ChatSession, io.StringIO, BotState]:
    store = MemoryStore()
    state = BotState(store)
    conversation = Conversation(state, RegistryLiveSource(empty_registry(), store))
    out = io.StringIO()
    return ChatSession(conversation, tmp_path, out), out, state


def answers(out: io.StringIO, lines: list[str], chat: ChatSession) -> list[str]:
    """What the chat prints for each line, one string each."""
    printed = []
    for line in lines:
        start = out.tell()
        chat.run([line + "\n"], prompt=False)
        printed.append(out.getvalue()[start:])
    return printed


def test_a_filter_sticks_in_the_chat_until_all(tmp_path: Path, cluster: SimulatedCluster) -> None:
    whole = summarize_text(render_exposition(cluster), SourceInfo("paste", "x"))
    colours = assign_colours(namespace_ranking(whole))
    namespace = next(ns for ns, colour in colours.items() if colour != preferred_colour(ns))
    mine = [a for a in cluster.allocations if a.namespace == namespace]
    chat, out, state = session(tmp_path)
    chat.load("cluster.prom", render_exposition(cluster))
    first, workloads, typo = answers(
        out, [f"ns {namespace}", "workloads", f"ns {namespace[:-1]}"], chat
    )
    # The mistyped name left the filter as it was.
    assert thread_filter(state, CHANNEL, THREAD).namespace == namespace
    chart, fit, everything, after = answers(out, ["chart", "fit 1", "all", "workloads"], chat)
    assert first.startswith(f"HAMi GPU allocation summary, namespace {namespace}\n")
    assert f"{len({a.pod for a in mine})} pods on" in first
    assert first.index("Its pods") < first.index("Whole cluster (cluster.prom)")
    assert f"All {len(mine)} workload allocations of namespace {namespace}" in workloads
    rows = [line for line in workloads.splitlines()[2:] if line and not line.startswith(" ")]
    assert rows and all(row.split()[0] == namespace for row in rows)
    assert f"Did you mean {namespace}" in typo
    png = Path(re.findall(r"saved to (\S+)", chart)[0])
    assert namespace_colours(png.read_bytes()) == {colours[namespace]}
    assert "the whole cluster (a namespace's pods may go on any node)" in fit
    assert everything.startswith("HAMi GPU allocation summary\n")
    assert f"All {len(cluster.allocations):,} workload allocations (" in after
    assert not thread_filter(state, CHANNEL, THREAD)
