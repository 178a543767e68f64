"""ResilientStore: Redis stopped and restarted under it (a private redis-server, never 6379)."""

from __future__ import annotations

import logging
import socket
import time

import pytest

from bot.config import ConfigError, redis_settings
from bot.ops.metrics import METRICS
from bot.store.factory import redis_state, store_from_config
from bot.store.memory import MemoryStore
from bot.store.redis_store import RedisStore
from bot.store.resilient import ResilientStore
from tests.support.redis_server import RedisServerProcess
from tests.support.redis_topologies import RedisClusterGroup

LOGGER = "hami_summary.store"


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage() for r in caplog.records if r.name == LOGGER and r.levelno >= logging.WARNING
    ]


def _unused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.mark.slow
def test_uses_redis_while_it_answers(private_redis: RedisServerProcess) -> None:
    store = ResilientStore(RedisStore(private_redis.url, "t"))
    store.put("k", b"v", 30)
    # The value is really in Redis: a second, independent client sees it.
    assert RedisStore(private_redis.url, "t").get("k") == b"v"
    assert store.redis_state() == "ok"


@pytest.mark.slow
def test_redis_stopped_mid_test_then_restarted(
    private_redis: RedisServerProcess, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    store = ResilientStore(RedisStore(private_redis.url, "t"), retry_interval_seconds=0.5)
    store.put("before", b"1", 60)
    errors_before = METRICS.value("hami_summary_redis_errors_total", {"operation": "SET"})

    private_redis.stop()
    # The store keeps answering, from memory, without waiting on Redis (see the error count).
    for n in range(50):
        store.put(f"during-{n}", b"x", 60)
        assert store.get(f"during-{n}") == b"x"
    assert store.put_if_absent("lock", b"a", 60) is True
    assert store.put_if_absent("lock", b"b", 60) is False
    assert store.incr("count", 60) == 1
    assert store.incr("count", 60) == 2
    assert store.redis_state() == "degraded"
    # One failed call flipped the state; later calls did not go to Redis at all.
    assert (
        METRICS.value("hami_summary_redis_errors_total", {"operation": "SET"}) == errors_before + 1
    )
    assert _warnings(caplog) and len(_warnings(caplog)) == 1, _warnings(caplog)
    assert _warnings(caplog)[0].startswith(
        "Redis unavailable: Redis does not answer (SET: Error 111 connecting"
    )

    private_redis.start()
    deadline = time.monotonic() + 5
    while store.redis_state() != "ok" and time.monotonic() < deadline:
        store.get("probe")
        time.sleep(0.1)
    assert store.redis_state() == "ok"
    warnings = _warnings(caplog)
    assert len(warnings) == 2 and "Redis is back and takes writes" in warnings[1], warnings
    # Writes go to Redis again.
    store.put("after", b"2", 60)
    assert RedisStore(private_redis.url, "t").get("after") == b"2"
    # A lock taken in memory while degraded does not linger once released.
    assert store.delete_if_equals("lock", b"a") is True


@pytest.mark.slow
def test_unavailable_at_start_then_appears(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    port = _unused_port()
    store = ResilientStore(
        RedisStore(f"redis://127.0.0.1:{port}/0", "t"), retry_interval_seconds=0.3
    )
    assert store.redis_state() == "degraded"
    store.put("k", b"v", 60)
    assert store.get("k") == b"v"
    assert len(_warnings(caplog)) == 1

    server = RedisServerProcess(port)
    server.start()
    try:
        time.sleep(0.35)
        store.put("k2", b"v2", 60)
        assert store.redis_state() == "ok"
        assert RedisStore(server.url, "t").get("k2") == b"v2"
    finally:
        server.close()


def test_probes_redis_at_most_once_per_interval() -> None:
    port = _unused_port()
    now = [100.0]
    pings: list[float] = []

    class CountingRedisStore(RedisStore):
        def probe_writes(self) -> None:
            pings.append(now[0])
            super().probe_writes()

    store = ResilientStore(
        CountingRedisStore(f"redis://127.0.0.1:{port}/0", "t"),
        retry_interval_seconds=5.0,
        clock=lambda: now[0],
    )
    for _ in range(100):
        store.get("k")
    now[0] += 4.5
    for _ in range(100):
        store.get("k")
    assert pings == [100.0]  # only the start-up check so far
    now[0] += 1.0
    for _ in range(100):
        store.get("k")
    assert pings == [100.0, 105.5]


@pytest.mark.slow
def test_factory_chooses_by_redis_url(private_redis: RedisServerProcess) -> None:
    memory = store_from_config(redis_settings({}))
    assert isinstance(memory, MemoryStore)
    assert redis_state(memory).state == "disabled"

    shared = store_from_config(
        redis_settings({"REDIS_URL": private_redis.url, "REDIS_KEY_PREFIX": "team-a"})
    )
    assert isinstance(shared, ResilientStore)
    assert redis_state(shared).state == "ok"
    shared.put("k", b"v", 30)
    assert RedisStore(private_redis.url, "team-a").get("k") == b"v"


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"REDIS_URL": "http://secret:pw@redis:6379"}, "must have one of the forms redis://"),
        ({"REDIS_URL": "redis+sentinel://:pw@s1:26379,s2"}, "name the master the sentinels"),
        ({"REDIS_URL": "redis+sentinel://:pw@s1/mymaster/x"}, "must be a number, got 'x'"),
        ({"REDIS_URL": "redis+cluster://:pw@n1:70000"}, "the port of n1 must be a number"),
        ({"REDIS_URL": "redis+cluster://:pw@n1,,n2"}, "a host in the list is empty"),
        ({"REDIS_URL": "redis+cluster://:pw@n1:7000/1"}, "a Redis Cluster has only database 0"),
        ({"REDIS_URL": "redis://127.0.0.1:1/0", "REDIS_TIMEOUT_MS": "fast"}, "REDIS_TIMEOUT_MS"),
        ({"REDIS_URL": "redis://127.0.0.1:1/0", "REDIS_RETRY_INTERVAL_S": "0"}, "positive"),
    ],
)
def test_factory_explains_bad_settings(env: dict[str, str], expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        store_from_config(redis_settings(env))
    assert expected in caught.value.message
    assert "pw" not in caught.value.message


@pytest.mark.slow
def test_a_redis_cluster_not_up_yet_starts_the_store_on_memory_and_is_used_once_up() -> None:
    # A replica started before its Redis Cluster answers (or while slots have no master): the
    # cluster client cannot be made yet, and the bot must start anyway, not exit.
    group = RedisClusterGroup()
    store = ResilientStore(RedisStore(group.url, "t"), retry_interval_seconds=0.2)
    try:
        health = store.health()
        assert health.state == "degraded"
        assert health.reason.startswith("Redis Cluster is not usable (connect: ")
        store.put("written-before", b"v", 60)
        assert store.get("written-before") == b"v"  # from process memory
        group.start()
        deadline = time.monotonic() + 20
        while store.check_health().state != "ok" and time.monotonic() < deadline:
            time.sleep(0.1)
        assert store.check_health().state == "ok"
        other = RedisStore(group.url, "t")
        assert other.get("written-before") == b"v"  # the outage's write, copied
        other.close()
    finally:
        store.close()
        group.close()
