"""Request counts, acknowledgement and reply latencies of the real bot.

The bot is the one ``serve`` assembles (every real listener, ``/hami-summary`` included),
behind the real HTTP endpoint; requests are signed as Slack signs them, and the bot calls the
local Slack Web API. Each test stops the server and drains the answers before it reads the
metrics, so every reply that will ever be observed has been.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from bot.clusters.registry import load_registry
from bot.ops.logging import RedactingFilter
from bot.ops.metrics import OpsMetrics
from bot.web.server import BotHttpServer
from tests.conftest import read_fixture
from tests.slack.conftest import (
    CHANNEL,
    MetricsServer,
    RunningBot,
    start_bot,
    stop_bot,
    write_registry,
)
from tests.slack.test_http_e2e import answer_in
from tests.support.slack_api import SlackWebApi


class RecordsHandler(logging.Handler):
    """Keeps every record, with the request id the redacting filter gives it."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.addFilter(RedactingFilter())
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@dataclass
class ObservedBot:
    bot: RunningBot
    server: BotHttpServer
    metrics: OpsMetrics
    logs: RecordsHandler
    stopped: bool = field(default=False)

    def finish(self) -> None:
        """Stop taking requests and wait for every answer in progress."""
        if not self.stopped:
            self.stopped = True
            stop_bot(self.bot, self.server)

    def count(self, name: str, **labels: str) -> float:
        return self.metrics.value(name, labels)


@pytest.fixture
def observed(
    slack_api: SlackWebApi, metrics_server: MetricsServer, tmp_path: Path
) -> Iterator[ObservedBot]:
    metrics = OpsMetrics()
    registry = load_registry(write_registry(tmp_path, metrics_server.url))
    bot, server = start_bot(slack_api, registry, metrics=metrics)
    logs = RecordsHandler()
    root = logging.getLogger()
    level = root.level
    root.addHandler(logs)
    root.setLevel(logging.DEBUG)
    running = ObservedBot(bot, server, metrics, logs)
    yield running
    running.finish()
    root.removeHandler(logs)
    root.setLevel(level)


REQUESTS = "hami_summary_requests_total"
ACKS = "hami_summary_ack_latency_seconds_count"
ACK_SECONDS = "hami_summary_ack_latency_seconds_sum"
REPLIES = "hami_summary_reply_latency_seconds_count"
REPLY_SECONDS = "hami_summary_reply_latency_seconds_sum"


def test_a_cluster_summary_is_counted_once_and_its_reply_timed_once(
    observed: ObservedBot,
) -> None:
    bot = observed.bot
    response = bot.sender.command("demo", response_url=bot.api.response_url("demo"))
    assert response.status == 200 and response.body == b""
    answer = answer_in(bot.api, CHANNEL, None)
    assert "cluster *demo*" in str(answer.blocks)
    observed.finish()

    assert observed.count(REQUESTS, surface="command", outcome="ok") == 1
    assert observed.count(ACKS, surface="command") == 1
    # One reply for one command: the lazy listener that posted the summary, not one per
    # listener registered on the command.
    assert observed.count(REPLIES, surface="command") == 1
    # The reply ends after the scrape, summary and upload; the acknowledgement before them.
    ack_seconds = observed.count(ACK_SECONDS, surface="command")
    reply_seconds = observed.count(REPLY_SECONDS, surface="command")
    assert 0 < ack_seconds < reply_seconds

    records = observed.logs.records
    request_lines = [r for r in records if r.name == "hami_summary.requests"]
    assert len(request_lines) == 1
    line = request_lines[0]
    assert (line.__dict__["surface"], line.__dict__["outcome"], line.__dict__["status"]) == (
        "command",
        "ok",
        200,
    )
    # Everything logged while answering, on the reply threads, carries the request's id.
    reply_records = [r for r in records if r.threadName.startswith("hami-reply")]
    assert reply_records, "the answer logged nothing"
    assert {r.__dict__["request_id"] for r in reply_records} == {line.__dict__["request_id"]}


def test_a_command_answered_in_its_acknowledgement_has_one_reply(
    observed: ObservedBot,
) -> None:
    bot = observed.bot
    for word in ("help", "clusters"):
        response = bot.sender.command(word, response_url=bot.api.response_url(word))
        assert response.status == 200 and response.json()["response_type"] == "ephemeral"
    observed.finish()
    assert observed.count(REQUESTS, surface="command", outcome="ok") == 2
    assert observed.count(ACKS, surface="command") == 2
    assert observed.count(REPLIES, surface="command") == 2


def test_a_pasted_summary_in_a_mention_has_one_reply(observed: ObservedBot) -> None:
    bot = observed.bot
    response, ts = bot.sender.mention(read_fixture("scheduler-small.prom"))
    assert response.status == 200
    answer_in(bot.api, CHANNEL, ts)
    observed.finish()
    assert observed.count(REQUESTS, surface="event:app_mention", outcome="ok") == 1
    assert observed.count(REPLIES, surface="event:app_mention") == 1


def test_refused_and_unhandled_requests_are_counted_without_a_reply(
    observed: ObservedBot,
) -> None:
    bot = observed.bot
    body = "command=%2Fhami-summary&text=help&user_id=U1&channel_id=C1&trigger_id=t.1"
    wrong = bot.sender.post(body, "application/x-www-form-urlencoded", signature="v0=" + "0" * 64)
    assert wrong.status == 401
    other = bot.sender.post(
        "command=%2Fsomething-else&text=&user_id=U1&channel_id=C1&trigger_id=t.2",
        "application/x-www-form-urlencoded",
    )
    assert other.status == 404
    observed.finish()
    assert observed.count(REQUESTS, surface="command", outcome="unauthorized") == 1
    assert observed.count(REQUESTS, surface="command", outcome="unhandled") == 1
    assert observed.count(ACKS, surface="command") == 2
    assert observed.count(REPLIES, surface="command") == 0
    assert bot.api.calls_to("chat.postMessage") == []
