"""``changes`` replies in Slack keep their code blocks within 72 characters, like the first
reply, whatever the cluster size and however long the names; the terminal keeps 100."""

from __future__ import annotations

import dataclasses

import pytest

from bot.conversation.changes import paste_changes
from bot.conversation.formatting import table_text
from bot.conversation.replies import ChangesSection, TableReply
from bot.slack.messages import slack_message
from core.api import summarize_text
from core.history.changes import compare
from core.history.snapshot import snapshot_of
from core.model import SourceInfo, Summary
from core.simulate import SimulatedCluster, drift_cluster, render_exposition, simulate_cluster
from core.views.changes_view import render_text
from tests.slack.conftest import CHANNEL, RunningBot
from tests.slack.test_http_e2e import answer_in, pasted, thread_reply
from tests.support.block_measure import code_blocks

CODE_BLOCK_WIDTH = 72


def _renamed(cluster: SimulatedCluster, suffix: str) -> SimulatedCluster:
    """The cluster with very long namespace and pod names (as some operators write them)."""
    allocations = tuple(
        dataclasses.replace(a, namespace=a.namespace + suffix, pod=a.pod + suffix)
        for a in cluster.allocations
    )
    return dataclasses.replace(cluster, allocations=allocations)


def _summary(cluster: SimulatedCluster) -> Summary:
    return summarize_text(render_exposition(cluster), SourceInfo("paste", "x"))


@pytest.mark.parametrize("nodes", [20, 200])
@pytest.mark.parametrize("suffix", ["", "-with-a-long-team-and-project-name"])
def test_changes_lay_out_in_72_columns(nodes: int, suffix: str) -> None:
    cluster = simulate_cluster(nodes, 8, seed=2)
    before = _summary(_renamed(cluster, suffix))
    after = _summary(_renamed(drift_cluster(cluster, steps=40), suffix))
    changes = compare(snapshot_of(before, 1_700_000_000.0), snapshot_of(after, 1_700_003_600.0))
    assert changes.namespaces and changes.pods_started and changes.pods_stopped
    narrow = render_text(changes, width=CODE_BLOCK_WIDTH).splitlines()
    assert max(map(len, narrow)) <= CODE_BLOCK_WIDTH
    heading = next(i for i, line in enumerate(narrow) if line.startswith("Namespaces that"))
    assert narrow[heading + 1].split() == [
        "namespace",
        "cores",
        "now",
        "memory",
        "now",
        "GPUs",
        "now",
    ]
    # The terminal's layout is unchanged: 100 columns, then -> now.
    wide = render_text(changes).splitlines()
    assert max(map(len, wide)) <= 100
    reply = paste_changes(snapshot_of(before, 1.0), snapshot_of(after, 3601.0))
    assert reply.screen_width is not None
    screen = table_text(reply.sections, reply.screen_width)
    assert max(map(len, screen.splitlines())) <= CODE_BLOCK_WIDTH


def test_the_changes_reply_in_slack_is_72_characters_wide(bot: RunningBot) -> None:
    first = _renamed(simulate_cluster(20, 8, seed=2), "-with-a-long-team-and-project-name")
    second = _renamed(
        drift_cluster(simulate_cluster(20, 8, seed=2), steps=40),
        "-with-a-long-team-and-project-name",
    )
    _, root = bot.sender.mention(pasted(render_exposition(first)))
    answer_in(bot.api, CHANNEL, root)
    bot.sender.mention(pasted(render_exposition(second)), thread_ts=root)
    thread_reply(bot.api, root, "Since the previous paste")
    bot.sender.mention("changes", thread_ts=root)
    thread_reply(bot.api, root, "Changes since the previous paste")
    message = next(
        m
        for m in bot.api.messages.values()
        if m.thread_ts == root and "Changes since the previous paste" in m.text
    )
    lines = [line for block in code_blocks(message.blocks) for line in block]
    assert lines and max(map(len, lines)) <= CODE_BLOCK_WIDTH
    assert any(line.startswith("Namespaces that grew or shrank") for line in lines)


def test_changes_too_long_for_a_message_are_sent_whole_as_a_file() -> None:
    """A digest's changes have no row count and no code-block width: when the 100-column text
    does not fit a message, the file holds that text and the message counts its lines."""
    suffix = "-&lt;team&gt;" * 9  # every ``&`` takes five characters once escaped for Slack
    cluster = simulate_cluster(60, 8, seed=2)
    before = _summary(_renamed(cluster, suffix))
    after = _summary(_renamed(drift_cluster(cluster, steps=40), suffix))
    changes = compare(snapshot_of(before, 1_700_000_000.0), snapshot_of(after, 1_700_003_600.0))
    reply = TableReply("Changes", (ChangesSection(changes),), "changes.txt", None, 100)
    message = slack_message(reply)
    text = render_text(changes)
    assert [a.filename for a in message.attachments] == ["changes.txt"]
    assert message.attachments[0].render().decode() == text
    # Counted as the text splits into lines, its final newline included.
    lines = len(text.split("\n"))
    assert f"{lines:,} rows are too many for a message" in message.blocks[0]["text"]["text"]
    assert code_blocks(message.blocks) == []
