"""``put_durably`` and ``replace_durably``: a write a Redis failover cannot lose, or a plain
"no"; a compare-and-set that leaves one of two writers (real processes: a Sentinel group whose
replica is stalled with SIGSTOP, a single Redis, a stopped one)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from bot.config import NotifySettings
from bot.store.memory import MemoryStore
from bot.store.redis_store import RedisStore
from bot.store.resilient import ResilientStore
from tests.conftest import read_fixture
from tests.notify.conftest import OPS, Clock, start_notified, stop_notified, utc_minute
from tests.notify.test_alerts import BUSY, FREE_WHEN_BUSY
from tests.slack.conftest import MetricsServer
from tests.support.redis_server import RedisServerProcess
from tests.support.redis_topologies import SentinelGroup
from tests.support.slack_api import SlackWebApi, running_slack_api

pytestmark = pytest.mark.slow


@pytest.fixture
def sentinel() -> Iterator[SentinelGroup]:
    group = SentinelGroup().start()
    yield group
    group.close()


def _on_the_replica(group: SentinelGroup, key: str) -> bytes | None:
    client = redis.Redis(port=group.replica.port, socket_timeout=2)
    try:
        value: bytes | None = client.get(key)
        return value
    finally:
        client.close()


def test_a_write_the_replica_acknowledged_is_durable(sentinel: SentinelGroup) -> None:
    store = RedisStore(sentinel.url, "durable")
    assert store.put_durably("k", b"v", 30) is True
    assert _on_the_replica(sentinel, "durable:k") == b"v"


def test_a_stalled_replica_makes_the_write_not_durable_but_written(
    sentinel: SentinelGroup,
) -> None:
    store = RedisStore(sentinel.url, "durable")
    sentinel.replica.pause()
    try:
        started = time.monotonic()
        assert store.put_durably("k", b"v", 30) is False
        assert time.monotonic() - started < 1.0  # WAIT gives up within the Redis timeout
        assert store.get("k") == b"v"
    finally:
        sentinel.replica.resume()


def test_without_a_replica_there_is_nothing_a_failover_could_lose(
    private_redis: RedisServerProcess,
) -> None:
    assert RedisStore(private_redis.url, "durable").put_durably("k", b"v", 30) is True
    assert MemoryStore().put_durably("k", b"v", 30) is True


def test_without_a_replica_the_write_does_not_wait(private_redis: RedisServerProcess) -> None:
    # A WAIT here would block for half the timeout (5 s) before answering 0.
    store = RedisStore(private_redis.url, "durable", timeout_seconds=10)
    started = time.monotonic()
    assert store.put_durably("k", b"v", 30) is True
    assert time.monotonic() - started < 2.5
    assert store.get("k") == b"v"


def test_a_store_answering_from_memory_is_not_durable(private_redis: RedisServerProcess) -> None:
    store = ResilientStore(RedisStore(private_redis.url, "durable"))
    private_redis.stop()
    assert store.put_durably("k", b"v", 30) is False
    assert store.get("k") == b"v"  # kept in memory, and journalled for Redis's return


def test_a_compare_and_set_writes_only_over_what_its_writer_read(
    sentinel: SentinelGroup, private_redis: RedisServerProcess
) -> None:
    for store in (
        RedisStore(sentinel.url, "cas"),
        RedisStore(private_redis.url, "cas"),
        MemoryStore(),
    ):
        assert store.replace_durably("slot", None, b"first", 30) == "kept"
        # A second writer that also read "absent" (a lease lost in a failover) loses.
        assert store.replace_durably("slot", None, b"second", 30) == "changed"
        assert store.replace_durably("slot", b"stale", b"second", 30) == "changed"
        assert store.get("slot") == b"first"
        assert store.replace_durably("slot", b"first", b"failed", 30) == "kept"
        assert store.get("slot") == b"failed"


def test_a_compare_and_set_the_replica_did_not_acknowledge_is_written_but_not_durable(
    sentinel: SentinelGroup,
) -> None:
    store = RedisStore(sentinel.url, "cas")
    sentinel.replica.pause()
    try:
        assert store.replace_durably("slot", None, b"mine", 30) == "unreplicated"
    finally:
        sentinel.replica.resume()
    assert store.get("slot") == b"mine"  # the caller takes it back (delete_if_equals)


def test_a_compare_and_set_from_memory_writes_nothing(private_redis: RedisServerProcess) -> None:
    # Kept only in this replica's memory, or copied to Redis after the outage, a ``sending``
    # could stand against another replica's: nothing is written, and the caller waits.
    store = ResilientStore(RedisStore(private_redis.url, "cas"), retry_interval_seconds=0.2)
    private_redis.stop()
    assert store.replace_durably("slot", None, b"mine", 30) == "unreplicated"
    assert store.get("slot") is None
    private_redis.start()
    time.sleep(0.3)
    assert store.get("slot") is None  # and nothing was journalled for Redis's return


@pytest.fixture
def slack_api() -> Iterator[SlackWebApi]:
    yield from running_slack_api()


def test_a_digest_waits_while_its_mark_cannot_be_replicated(
    slack_api: SlackWebApi, sentinel: SentinelGroup, tmp_path: Path
) -> None:
    exporter = MetricsServer(read_fixture("scheduler-small.prom"))
    now = time.time()
    declared = (
        "    digests:\n"
        f"      - channel: {OPS}\n"
        f'        at: "{utc_minute(now)}"\n'
        "        time_zone: UTC\n"
        "        weekdays: daily\n"
    )
    settings = NotifySettings(alert_interval_seconds=60, lease_seconds=5, tick_seconds=1)
    n, server = start_notified(
        slack_api,
        exporter,
        sentinel.url,
        "durable-digest",
        tmp_path,
        declared,
        Clock(now),
        settings,
    )
    try:
        sentinel.replica.pause()
        try:
            assert [o.outcome for o in n.a.loop.digests.tick()] == ["unreplicated"]
        finally:
            sentinel.replica.resume()
        assert n.posts() == []
        digest = n.registry.entries[0].digests[0]
        assert n.records.last_posted("demo", digest.name) is None
        # The replica is back: the next tick posts it, once.
        assert [o.outcome for o in n.b.loop.digests.tick()] == ["posted"]
        assert [o.outcome for o in n.a.loop.digests.tick()] == ["done"]
        assert len(n.posts()) == 1
    finally:
        stop_notified(n, server)
        exporter.stop()


def test_an_alert_waits_while_its_post_record_cannot_be_replicated(
    slack_api: SlackWebApi, sentinel: SentinelGroup, tmp_path: Path
) -> None:
    exporter = MetricsServer(BUSY)
    declared = (
        "    alerts:\n"
        "      - name: few-free\n"
        f"        channel: {OPS}\n"
        f"        free_whole_gpus_below: {FREE_WHEN_BUSY + 1}\n"
    )
    settings = NotifySettings(alert_interval_seconds=60, lease_seconds=5, tick_seconds=1)
    clock = Clock(time.time())
    n, server = start_notified(
        slack_api, exporter, sentinel.url, "durable-alert", tmp_path, declared, clock, settings
    )
    try:
        sentinel.replica.pause()
        try:
            assert n.a.loop.alerts.tick() == ["demo"]
        finally:
            sentinel.replica.resume()
        assert n.posts() == []
        assert n.records.alert_post("demo", "few-free") is None  # taken back, nothing sent
        # The replica is back: the next evaluation posts it, once.
        clock.now += 60
        assert n.b.loop.alerts.tick() == ["demo"]
        clock.now += 60
        assert n.a.loop.alerts.tick() == ["demo"]
        assert len(n.posts()) == 1
    finally:
        stop_notified(n, server)
        exporter.stop()
