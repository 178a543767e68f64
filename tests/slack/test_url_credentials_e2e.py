"""A password or token in a registered URL never reaches Slack: not in the summary's "Read
from" note, not in a collection error, not in the admin report (signed requests in, the local
Slack Web API recording every call out)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.clusters.registry import load_registry
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
from tests.support.slack_api import SlackWebApi

SECRETS = ("s3cret-pw", "tok123", "kpw", "ktok")


def with_credentials(url: str) -> str:
    """``url`` with basic auth and a token in its query (the stand-in scheduler ignores both)."""
    return url.replace("http://", "http://admin:s3cret-pw@") + "?token=tok123&job=hami"


def everything_sent(bot: RunningBot) -> str:
    return json.dumps([c.params for c in bot.api.calls], ensure_ascii=False)


@pytest.fixture
def bot_with_credentials(
    slack_api: SlackWebApi, metrics_server: MetricsServer, tmp_path: Path
) -> Iterator[RunningBot]:
    kube_dir = tmp_path / "kube"
    kube_dir.mkdir()
    (kube_dir / "lab.kubeconfig").write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "lab",
                "clusters": [
                    {
                        "name": "gpu",
                        "cluster": {"server": "https://kubeuser:kpw@127.0.0.1:9/?token=ktok"},
                    }
                ],
                "users": [{"name": "viewer", "user": {"token": "kube-token-not-a-secret"}}],
                "contexts": [{"name": "lab", "context": {"cluster": "gpu", "user": "viewer"}}],
            }
        )
    )
    registry_file = write_registry(tmp_path, with_credentials(metrics_server.url))
    registry_file.write_text(
        registry_file.read_text()
        + "  - name: down\n"
        + f"    metrics_url: {with_credentials('http://127.0.0.1:9/metrics')}\n"
        + f"    allowed_channels: [{CHANNEL}]\n"
    )
    running, server = start_bot(
        slack_api,
        load_registry(registry_file),
        {"HAMI_SUMMARY_ADMINS": USER, "KUBECONFIG_DIR": str(kube_dir)},
    )
    yield running
    stop_bot(running, server)


def test_read_from_note_shows_the_url_without_credentials(
    bot_with_credentials: RunningBot, metrics_server: MetricsServer
) -> None:
    bot = bot_with_credentials
    bot.sender.command("demo", response_url=bot.api.response_url("demo"))
    answer = answer_in(bot.api, CHANNEL, None)
    shown_url = metrics_server.url + "?token=***&amp;job=hami"  # & escaped for Slack
    assert f"Read from {shown_url}." in blocks_text(answer.blocks)
    assert metrics_server.scrapes == 1
    sent = everything_sent(bot)
    for secret in SECRETS:
        assert secret not in sent


def test_collection_errors_show_the_url_without_credentials(
    bot_with_credentials: RunningBot,
) -> None:
    bot = bot_with_credentials
    bot.sender.command("down", response_url=bot.api.response_url("down"))
    problem = bot.api.wait_for(
        "response_url", where=lambda c: "127.0.0.1:9" in json.dumps(c.params), timeout=30
    )[-1]
    assert "http://127.0.0.1:9/metrics?token=***&amp;job=hami" in blocks_text(
        problem.params["blocks"]
    )
    sent = everything_sent(bot)
    for secret in SECRETS:
        assert secret not in sent


def test_admin_report_shows_urls_without_credentials(bot_with_credentials: RunningBot) -> None:
    bot = bot_with_credentials
    body = bot.sender.command("admin", response_url=bot.api.response_url("a")).json()
    text = blocks_text(body["blocks"])
    assert "(https://127.0.0.1:9/?token=***)" in text
    assert "metrics URL http://127.0.0.1:9/metrics?token=***&amp;job=hami" in text
    for secret in SECRETS:
        assert secret not in json.dumps(body)
