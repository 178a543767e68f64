"""A small cluster's first reply names every node in full, through signed requests, a live
scrape of a local scheduler and the local Slack Web API.

Node names of 20 characters (``node-000.gpu.example``) make the GPU table too wide for the code
block's 72 characters, so the table shortens them; the reply then says them whole after it.
A cluster with too many GPUs to list has no GPU table: the models table names the nodes.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.simulate import simulate_exposition
from tests.slack.conftest import MetricsServer
from tests.slack.test_http_e2e import first_reply_of_live_scrape
from tests.support.slack_api import SlackWebApi


def _long_names(text: str) -> tuple[str, list[str]]:
    """The exposition with each simulated node renamed to a 20-character name."""
    nodes = sorted(set(re.findall(r'node="([^"]+)"', text)))
    renamed = {node: f"node-{i:03d}.gpu.example" for i, node in enumerate(nodes)}
    for old, new in renamed.items():
        text = text.replace(f'"{old}"', f'"{new}"')
    return text, list(renamed.values())


def _first_reply_sections(slack_api: SlackWebApi, tmp_path: Path, metrics: str) -> list[str]:
    answer = first_reply_of_live_scrape(slack_api, tmp_path, MetricsServer(metrics))
    return [b["text"]["text"] for b in answer.blocks if b["type"] == "section" and "text" in b]


@pytest.mark.parametrize(
    ("gpus_per_node", "section_title"), [(4, "*Every GPU*"), (8, "*By GPU model*")]
)
def test_a_three_node_clusters_first_reply_names_every_node_in_full(
    slack_api: SlackWebApi, tmp_path: Path, gpus_per_node: int, section_title: str
) -> None:
    metrics, nodes = _long_names(simulate_exposition(3, gpus_per_node, seed=1))
    assert len(nodes) == 3 and all(len(node) == 20 for node in nodes)
    sections = _first_reply_sections(slack_api, tmp_path, metrics)
    section = next(text for text in sections if text.startswith(section_title))
    listed = ", ".join(f"`{node}`" for node in nodes)
    assert section.endswith(f"\nNodes: {listed}.")
    if gpus_per_node == 4:
        # The table itself stays within the code block's width, its names shortened.
        table = section.split("```")[1]
        assert max(len(line) for line in table.split("\n")) <= 72
        assert "…" in table


def test_names_that_fit_are_not_said_twice(slack_api: SlackWebApi, tmp_path: Path) -> None:
    sections = _first_reply_sections(slack_api, tmp_path, simulate_exposition(3, 4, seed=1))
    every_gpu = next(text for text in sections if text.startswith("*Every GPU*"))
    assert "Nodes:" not in every_gpu
    for node in ("gpu-node-01", "gpu-node-02", "gpu-node-03"):
        assert f"{node}/0 " in every_gpu  # in full, in the table
