"""The scheduler's outcome counters (HAMi after v2.10) in the posted reply, through signed
requests, a live scrape of a local scheduler and the local Slack Web API."""

from __future__ import annotations

import json
from pathlib import Path

from core.simulate import simulate_exposition
from tests.slack.conftest import MetricsServer
from tests.slack.test_http_e2e import first_reply_of_live_scrape
from tests.support.slack_api import SlackWebApi


def _first_reply_text(slack_api: SlackWebApi, tmp_path: Path, metrics: str) -> str:
    answer = first_reply_of_live_scrape(slack_api, tmp_path, MetricsServer(metrics))
    return json.dumps(answer.blocks, ensure_ascii=False)


def test_the_first_reply_says_what_the_scheduler_counted(
    slack_api: SlackWebApi, tmp_path: Path
) -> None:
    # 12 GPUs after 9 drift steps: 69 allocations, 19 + 9 + 3 failures, 3 bind rollbacks.
    metrics = simulate_exposition(3, 4, seed=1, t=9, outcomes=True)
    blocks = _first_reply_text(slack_api, tmp_path, metrics)
    assert (
        "since the scheduler started: 69 allocations, 31 failures (31.0% of attempts: "
        "no_fit 19 at filter, lookup 9 at filter, lock 3 at bind), 3 bind rollbacks"
    ) in blocks
    assert "*3 bind rollbacks* since the scheduler started" in blocks


def test_a_scheduler_without_counters_says_nothing_of_them(
    slack_api: SlackWebApi, tmp_path: Path
) -> None:
    blocks = _first_reply_text(slack_api, tmp_path, simulate_exposition(3, 4, seed=1, t=9))
    assert "since the scheduler started" not in blocks
