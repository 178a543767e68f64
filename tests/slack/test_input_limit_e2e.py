"""A live scrape larger than the operator's input limit: the scheduler's page stops streaming
at the limit, and the requester is told the limit and how the operator raises it."""

from __future__ import annotations

from pathlib import Path

from bot.clusters.registry import load_registry
from tests.slack.conftest import MetricsServer, start_bot, stop_bot, write_registry
from tests.slack.test_http_e2e import blocks_text
from tests.support.slack_api import SlackWebApi


def test_a_scrape_over_the_limit_is_refused_with_the_limit_named(
    slack_api: SlackWebApi, metrics_server: MetricsServer, tmp_path: Path
) -> None:
    registry = load_registry(write_registry(tmp_path, metrics_server.url))
    # 8 KiB: the 12 KiB scheduler page of the test cluster is over it.
    running, server = start_bot(slack_api, registry, {"HAMI_SUMMARY_MAX_INPUT_MIB": "0.0078125"})
    try:
        running.sender.command("demo fresh", response_url=slack_api.response_url("demo"))
        posted = slack_api.wait_for("response_url")[-1]
    finally:
        stop_bot(running, server)
    text = blocks_text(posted.params["blocks"])
    assert posted.params["response_type"] == "ephemeral"
    assert "answered with more than 8.0 KiB. The input limit is 8.0 KiB" in text, text
    assert "HAMI_SUMMARY_MAX_INPUT_MIB" in text
    assert "Traceback" not in text
    assert metrics_server.scrapes == 1  # one refused scrape, not retried
