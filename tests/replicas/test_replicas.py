"""Replicas sharing one Redis: one answer per Slack delivery, one scrape per burst, and the bot
answering through a Redis outage."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import read_fixture
from tests.replicas.conftest import CHANNELS, BotProcess, Replicas, start_replicas
from tests.slack.conftest import SIGNING_SECRET
from tests.slack.test_http_e2e import answer_in, blocks_text, pasted
from tests.store.collected import CountingExporter
from tests.support.redis_server import RedisServerProcess
from tests.support.slack_api import BOT_USER_ID, SlackWebApi

ACK_LIMIT_SECONDS = 3.0
pytestmark = pytest.mark.slow


@pytest.fixture
def replicas(
    slack_api: SlackWebApi,
    exporter: CountingExporter,
    redis_url: str,
    redis_key_prefix: str,
    tmp_path: Path,
) -> Iterator[Replicas]:
    running = start_replicas(slack_api, exporter, redis_url, redis_key_prefix, tmp_path)
    yield running
    for replica in running.both:
        replica.stop()


def _working_posts(api: SlackWebApi, channel: str, thread_ts: str | None) -> int:
    return len(
        [
            c
            for c in api.calls_to("chat.postMessage")
            if c.params.get("channel") == channel and c.params.get("thread_ts") == thread_ts
        ]
    )


def test_retried_deliveries_are_answered_once_across_replicas(replicas: Replicas) -> None:
    api = replicas.api
    metrics = pasted(read_fixture("scheduler-small.prom"))
    channel = CHANNELS[0]
    ts = "1710001000.000001"
    first, _ = replicas.a.sender.mention(metrics, channel=channel, ts=ts, event_id="Ev0REPL01")
    # Slack retries on the other replica (behind the Service), and again on the first.
    event = {
        "type": "app_mention",
        "user": "U0BOB0001",
        "channel": channel,
        "text": f"<@{BOT_USER_ID}> {metrics}",
        "ts": ts,
        "event_ts": ts,
    }
    retry_b = replicas.b.sender.event(event, event_id="Ev0REPL01", retry_num=1)
    retry_a = replicas.a.sender.event(event, event_id="Ev0REPL01", retry_num=2)
    assert (first.status, retry_b.status, retry_a.status) == (200, 200, 200)
    answer = answer_in(api, channel, ts)
    assert "275 / 600 cores" in blocks_text(answer.blocks)
    api.wait_for("files.completeUploadExternal")
    time.sleep(1.0)  # time enough for a duplicate answer to show up
    assert _working_posts(api, channel, ts) == 1

    # A command delivered twice (same trigger) to the two replicas: answered by the first
    # (help comes back in the acknowledgement), only acknowledged by the second.
    response_url = api.response_url("dup-command")
    acks = [
        replica.sender.command(
            "help",
            response_url=response_url,
            channel=channel,
            user="U0CAROL01",
            trigger_id="trigger.dup.1",
        )
        for replica in replicas.both
    ]
    assert [a.status for a in acks] == [200, 200]
    assert b"/hami-summary" in acks[0].body
    assert acks[1].body == b""


def test_fifty_concurrent_commands_on_two_replicas_cause_one_scrape(
    replicas: Replicas,
) -> None:
    api = replicas.api
    acks: list[float] = []
    statuses: list[int] = []
    lock = threading.Lock()
    start = threading.Barrier(50)

    def ask(n: int) -> None:
        replica = replicas.both[n % 2]
        start.wait()
        response = replica.sender.command(
            "demo",
            response_url=api.response_url(f"burst-{n}"),
            channel=CHANNELS[n % len(CHANNELS)],
            user=f"U0BURST{n:03d}",
            trigger_id=f"trigger.burst.{n}",
        )
        with lock:
            acks.append(response.elapsed_seconds)
            statuses.append(response.status)

    threads = [threading.Thread(target=ask, args=(n,)) for n in range(50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert statuses == [200] * 50
    assert max(acks) < ACK_LIMIT_SECONDS, sorted(acks)[-5:]

    updates = api.wait_for(
        "chat.update", 50, timeout=180, where=lambda c: "demo" in str(c.params.get("blocks"))
    )
    assert replicas.exporter.scrapes == 1
    answers = {(str(c.params["channel"]), str(c.params["ts"])) for c in updates}
    assert len(answers) == 50  # fifty different working messages, each answered
    for channel, ts in answers:
        assert "275 / 600 cores" in blocks_text(api.message(channel, ts).blocks)
    # Both replicas served some of them, and only one of them scraped.
    scrapes = [r.metric("hami_summary_scrapes_total", {"cluster": "demo"}) for r in replicas.both]
    assert sorted(scrapes) == [0.0, 1.0]
    commands = [
        r.metric("hami_summary_requests_total", {"surface": "command", "outcome": "ok"})
        for r in replicas.both
    ]
    assert commands == [25.0, 25.0]
    # Structured logs (stderr is not a terminal): one JSON line per request with its request
    # id, and no credential anywhere.
    for replica in replicas.both:
        logs = replica.logs()
        assert api.bot_token not in logs and SIGNING_SECRET not in logs
        records = [json.loads(line) for line in logs.splitlines() if line.startswith("{")]
        requests = [r for r in records if r["logger"] == "hami_summary.requests"]
        assert len(requests) == 25
        assert len({r["request_id"] for r in requests}) == 25


def test_redis_stopped_mid_test_the_bot_answers_throughout_and_recovers(
    slack_api: SlackWebApi,
    exporter: CountingExporter,
    private_redis: RedisServerProcess,
    tmp_path: Path,
) -> None:
    running = start_replicas(slack_api, exporter, private_redis.url, "outage", tmp_path)
    api = slack_api
    a, b = running.both
    try:
        _command_answered(a, api, "U0OUT0001", CHANNELS[0], "before")
        assert exporter.scrapes == 1

        private_redis.stop()
        # Both replicas keep answering: pasted metrics, and live scrapes from their own cache.
        _, ts = a.sender.mention(
            pasted(read_fixture("scheduler-small.prom")), channel=CHANNELS[1], user="U0OUT0002"
        )
        assert "275 / 600 cores" in blocks_text(answer_in(api, CHANNELS[1], ts).blocks)
        _command_answered(b, api, "U0OUT0003", CHANNELS[2], "during")
        for replica in (a, b):
            status, body = replica.readyz()
            assert status == 200 and body["status"] == "degraded", body
            assert body["checks"]["redis"]["status"] == "degraded"
        # One warning per replica for the outage, not one per call.
        for replica in (a, b):
            assert replica.logs().count("Redis unavailable") == 1, replica.logs()[-3000:]

        private_redis.start()
        deadline = time.monotonic() + 15
        for replica in (a, b):
            while replica.readyz()[1]["status"] != "ready":
                assert time.monotonic() < deadline, replica.readyz()
                time.sleep(0.2)
            assert replica.logs().count("Redis is back") == 1
        # Shared again: a burst across both replicas scrapes once more, not twice.
        before = exporter.scrapes
        _command_answered(a, api, "U0OUT0004", CHANNELS[3], "after-a", fresh=True)
        _command_answered(b, api, "U0OUT0005", CHANNELS[4], "after-b")
        assert exporter.scrapes == before + 1
    finally:
        for replica in running.both:
            replica.stop()


def _command_answered(
    replica: BotProcess, api: SlackWebApi, user: str, channel: str, name: str, fresh: bool = False
) -> None:
    response = replica.sender.command(
        "demo fresh" if fresh else "demo",
        response_url=api.response_url(name),
        channel=channel,
        user=user,
        trigger_id=f"trigger.{name}",
    )
    assert response.status == 200 and response.elapsed_seconds < ACK_LIMIT_SECONDS
    answer = answer_in(api, channel, None)
    assert "275 / 600 cores" in blocks_text(answer.blocks)
