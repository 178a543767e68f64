"""Two ``hami-summary serve`` replicas on Redis with failover, all real processes: behind
Sentinel (a master, its replica, three sentinels), and a Redis Cluster of three masters with a
replica each. A master is killed (SIGKILL) in the middle of a run of slash commands and in the
middle of a digest slot. Every command is answered, the digest is posted once, the alert that
fired is posted once and its state survives on the promoted replica."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.store import codec
from tests.notify.conftest import OPS, utc_minute
from tests.notify.test_digest_processes import wait_until
from tests.replicas.conftest import CHANNELS, BotProcess, bot_env, write_registry
from tests.slack.test_http_e2e import answer_in, blocks_text
from tests.store.collected import CountingExporter
from tests.support.redis_topologies import RedisClusterGroup, SentinelGroup, redis_client
from tests.support.slack_api import SlackWebApi, StoredMessage

pytestmark = pytest.mark.slow

ACK_LIMIT_SECONDS = 3.0
ALERTS = "C0FAILALRT"
ALERT_STATES = "failover-notify:notify:alerts:demo"


@pytest.fixture(params=["sentinel", "cluster"])
def failing_over(request: pytest.FixtureRequest) -> Iterator[SentinelGroup | RedisClusterGroup]:
    group: SentinelGroup | RedisClusterGroup = (
        SentinelGroup()
        if request.param == "sentinel"
        else RedisClusterGroup(replicas_per_master=1, node_timeout_ms=1000)
    )
    group.start()
    yield group
    group.close()


def _a_scrape_key(url: str) -> str:
    """A key of the shared scrape cache: in a cluster, the master to kill is the one holding it."""
    client = redis_client(url)
    try:
        return next(client.scan_iter(match="failover:scrape:*")).decode()
    finally:
        client.close()


def _ready_on_the_new_master(replica: BotProcess) -> bool:
    status, body = replica.readyz()
    return status == 200 and body["status"] == "ready"


def _top_level(api: SlackWebApi, channel: str) -> list[StoredMessage]:
    with api._lock:
        return [m for (c, _), m in api.messages.items() if c == channel and m.thread_ts is None]


def test_slash_commands_are_answered_while_the_master_fails_over(
    slack_api: SlackWebApi, failing_over: SentinelGroup | RedisClusterGroup, tmp_path: Path
) -> None:
    exporter = CountingExporter()
    exporter.start()
    group = failing_over
    env = bot_env(slack_api, write_registry(tmp_path, exporter.url), group.url, "failover")
    replicas = [BotProcess(name, env, tmp_path) for name in ("replica-a", "replica-b")]
    try:
        for replica in replicas:
            replica.wait_until_serving()
        key = ""
        for number in range(24):
            if number == 6:
                key = _a_scrape_key(group.url)
                old_master = group.kill_master(key)
            replica = replicas[number % 2]
            channel = f"C0FAIL{number:04d}"
            response = replica.sender.command(
                "demo fresh" if number % 6 == 0 else "demo",
                response_url=slack_api.response_url(f"failover-{number}"),
                channel=channel,
                user=f"U0FAIL{number:04d}",
                trigger_id=f"trigger.failover.{number}",
            )
            assert response.status == 200, response
            assert response.elapsed_seconds < ACK_LIMIT_SECONDS, response.elapsed_seconds
            answer = answer_in(slack_api, channel, None)
            assert "275 / 600 cores" in blocks_text(answer.blocks), number
            time.sleep(0.25)  # the run spans the failover (about 2 s) and after it
        new_master = group.wait_for_failover(key, old_master)
        assert new_master != old_master
        for replica in replicas:
            wait_until(
                f"{replica.name} back on Redis", lambda r=replica: _ready_on_the_new_master(r), 20
            )
            assert replica.process.poll() is None
        # Shared again, on the promoted replica: a burst over both replicas scrapes once.
        before = exporter.scrapes
        for number, replica in enumerate(replicas):
            channel = CHANNELS[number]
            replica.sender.command(
                "demo fresh" if number == 0 else "demo",
                response_url=slack_api.response_url(f"after-{number}"),
                channel=channel,
                user=f"U0AFTER{number:03d}",
                trigger_id=f"trigger.after.{number}",
            )
            assert "275 / 600 cores" in blocks_text(answer_in(slack_api, channel, None).blocks)
        assert exporter.scrapes == before + 1
        assert _a_scrape_key(group.url)
    finally:
        for replica in replicas:
            replica.stop()
        exporter.stop()


def test_a_digest_slot_and_an_alert_survive_a_failover_posted_once(
    slack_api: SlackWebApi, failing_over: SentinelGroup | RedisClusterGroup, tmp_path: Path
) -> None:
    # The scrapes hang a while: the master dies while a replica holds the digest's lease.
    exporter = CountingExporter(delay_seconds=3.0)
    exporter.start()
    registry = tmp_path / "clusters.yaml"
    registry.write_text(
        "clusters:\n"
        "  - name: demo\n"
        f"    metrics_url: {exporter.url}\n"
        '    allowed_users: ["*"]\n'
        "    timeout_seconds: 30\n"
        "    digests:\n"
        f"      - channel: {OPS}\n"
        f'        at: "{utc_minute(time.time())}"\n'
        "        weekdays: daily\n"
        "    alerts:\n"
        f"      - channel: {ALERTS}\n"
        "        free_whole_gpus_below: 1000\n"
    )
    group = failing_over
    env = bot_env(slack_api, registry, group.url, "failover-notify")
    env.update(
        {
            "HAMI_SUMMARY_NOTIFY_LEASE_SECONDS": "3",
            "HAMI_SUMMARY_NOTIFY_TICK_SECONDS": "0.3",
            "HAMI_SUMMARY_ALERT_INTERVAL_SECONDS": "5",
        }
    )
    replicas = [BotProcess(name, env, tmp_path) for name in ("replica-a", "replica-b")]
    client = None
    try:
        wait_until("a scrape by a lease holder", lambda: exporter.scrapes >= 1, 60)
        # In a cluster, the master of the alert states (the digest's keys may be elsewhere).
        old_master = group.kill_master(ALERT_STATES)
        exporter.delay_seconds = 0.0
        group.wait_for_failover(ALERT_STATES, old_master)
        wait_until("the digest", lambda: _top_level(slack_api, OPS), 90)
        wait_until("the alert", lambda: _top_level(slack_api, ALERTS), 90)
        # Two more alert evaluations (every 5 s) and many digest ticks: nothing posted again.
        time.sleep(12.0)
        [digest] = _top_level(slack_api, OPS)
        assert "Digest* of *demo*" in blocks_text(digest.blocks)
        [alert] = _top_level(slack_api, ALERTS)
        assert "demo" in blocks_text(alert.blocks)
        client = redis_client(group.url)
        kept = codec.decode("alerts", client.get(ALERT_STATES))
        assert kept is not None, "the alert state is not on the promoted replica"
        assert all(rule["posted_firing"] for rule in kept["rules"].values()), kept
        for replica in replicas:
            assert replica.process.poll() is None, replica.logs()[-2000:]
    finally:
        if client is not None:
            client.close()
        for replica in replicas:
            replica.stop()
        exporter.stop()
