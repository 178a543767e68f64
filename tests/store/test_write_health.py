"""Redis health from a real write probe: ``/readyz`` over HTTP says at once when a private
``redis-server`` stops or refuses writes (read-only replica, NOREPLICAS, OOM), with Redis's
reason, does not flap while it keeps refusing, and says ready again once it takes writes."""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, make_server

import pytest
import redis

from bot.ops.endpoints import Readiness, readyz_app
from bot.store.factory import redis_state
from bot.store.redis_store import RedisStore
from bot.store.resilient import ResilientStore
from tests.support.redis_server import RedisServerProcess, free_port

LOGGER = "hami_summary.store"
SERVING_FROM_MEMORY = (
    ": answering from process memory (no shared cache; single-flight and retry "
    "de-duplication within this replica only)"
)


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def _serving_readyz(readiness: Readiness) -> Iterator[str]:
    """The bot's ``/readyz`` app on a loopback port (any path answers with it)."""
    server = make_server("127.0.0.1", 0, readyz_app(readiness), handler_class=_QuietHandler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _readyz(base: str) -> tuple[int, dict[str, Any]]:
    try:
        with urllib.request.urlopen(f"{base}/readyz", timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def _redis_check(base: str) -> tuple[int, str, str]:
    status, body = _readyz(base)
    check = body["checks"]["redis"]
    return status, check["status"], check["detail"]


def _store_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage() for r in caplog.records if r.name == LOGGER and r.levelno >= logging.WARNING
    ]


@pytest.fixture
def served_store(private_redis: RedisServerProcess) -> Iterator[tuple[ResilientStore, str]]:
    # Probe on every readiness check, retry a degraded Redis every 0.2 s: the test need not
    # wait for the production intervals (1 s and 5 s).
    store = ResilientStore(
        RedisStore(private_redis.url, "t"),
        retry_interval_seconds=0.2,
        health_interval_seconds=0.0,
    )
    readiness = Readiness(redis_state=lambda: redis_state(store))
    readiness.slack_token_verified("T1")
    readiness.registry_loaded(0)
    try:
        with _serving_readyz(readiness) as base:
            yield store, base
    finally:
        store.close()


def _admin(server: RedisServerProcess) -> redis.Redis:
    return redis.Redis.from_url(server.url, socket_timeout=2)


def _fail_snapshots(admin: redis.Redis, server: RedisServerProcess) -> None:
    """MISCONF: with a save point set, a failed BGSAVE makes Redis refuse writes. It fails here
    because ``dump.rdb`` is a directory the snapshot cannot be renamed onto."""
    os.mkdir(os.path.join(server.directory, "dump.rdb"))
    admin.config_set("save", "3600 1")
    admin.bgsave()
    deadline = time.monotonic() + 10
    while admin.info("persistence")["rdb_last_bgsave_status"] != "err":
        assert time.monotonic() < deadline, "the snapshot did not fail"
        time.sleep(0.05)


def _allow_snapshots(admin: redis.Redis, server: RedisServerProcess) -> None:
    admin.config_set("save", "")
    os.rmdir(os.path.join(server.directory, "dump.rdb"))


def _stays_degraded(base: str, store: ResilientStore, expected_detail: str) -> None:
    """Checks spread over several retry intervals, with reads in between: never 'ok'."""
    for _ in range(6):
        assert store.get("some-key") is None  # reads still work, and must not count as health
        assert _redis_check(base) == (200, "degraded", expected_detail + SERVING_FROM_MEMORY)
        time.sleep(0.25)


@pytest.mark.slow
def test_readyz_says_degraded_on_the_first_check_after_redis_stops(
    private_redis: RedisServerProcess,
    served_store: tuple[ResilientStore, str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    _, base = served_store
    assert _redis_check(base)[:2] == (200, "ok")
    private_redis.stop()
    # No request in between: the readiness check's own write probe notices.
    status, state, detail = _redis_check(base)
    assert (status, state) == (200, "degraded")
    assert detail.startswith("Redis does not answer (write probe: Error 111 connecting to")
    private_redis.start()
    deadline = time.monotonic() + 10
    while _redis_check(base)[1] != "ok" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _readyz(base) == (200, _readyz(base)[1]) and _readyz(base)[1]["status"] == "ready"
    warnings = _store_warnings(caplog)
    assert len(warnings) == 2, warnings
    assert warnings[0].startswith(
        "Redis unavailable: Redis does not answer (write probe: Error 111"
    )
    assert warnings[1].startswith("Redis is back and takes writes")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("refuse", "allow", "expected_detail"),
    [
        (
            lambda r, _: r.config_set("min-replicas-to-write", 1),
            lambda r, _: r.config_set("min-replicas-to-write", 0),
            "Redis does not take writes (write probe: NOREPLICAS Not enough good replicas to "
            "write.)",
        ),
        (
            lambda r, _: r.replicaof("127.0.0.1", free_port()),
            lambda r, _: r.replicaof("NO", "ONE"),
            "Redis does not take writes (write probe: READONLY You can't write against a read "
            "only replica.)",
        ),
        (
            lambda r, _: r.config_set("maxmemory", 1),
            lambda r, _: r.config_set("maxmemory", 0),
            "Redis does not take writes (write probe: OOM command not allowed when used memory "
            "> 'maxmemory'.)",
        ),
        (
            _fail_snapshots,
            _allow_snapshots,
            "Redis does not take writes (write probe: MISCONF Redis is configured to save RDB "
            "snapshots, but it's currently unable to persist to disk. Commands that may modify "
            "the data set are disabled, because ...)",
        ),
    ],
    ids=["min-replicas", "read-only-replica", "out-of-memory", "failed-snapshot"],
)
def test_a_redis_that_refuses_writes_is_degraded_without_flapping(
    private_redis: RedisServerProcess,
    served_store: tuple[ResilientStore, str],
    caplog: pytest.LogCaptureFixture,
    refuse: Any,
    allow: Any,
    expected_detail: str,
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    store, base = served_store
    admin = _admin(private_redis)
    assert _redis_check(base)[:2] == (200, "ok")
    assert admin.ping()  # Redis answers PING throughout: only writes tell the truth
    refuse(admin, private_redis)
    try:
        _stays_degraded(base, store, expected_detail)
        # Writes made meanwhile land in memory, and are readable there.
        store.put("during", b"1", 60)
        assert store.get("during") == b"1"
    finally:
        allow(admin, private_redis)
    deadline = time.monotonic() + 10
    while _redis_check(base)[1] != "ok" and time.monotonic() < deadline:
        time.sleep(0.05)
    status, body = _readyz(base)
    assert status == 200 and body["status"] == "ready"
    # The write made while Redis refused writes reached Redis once it took them again.
    assert RedisStore(private_redis.url, "t").get("during") == b"1"
    warnings = _store_warnings(caplog)
    assert len(warnings) == 2, warnings  # one change each way, however many checks
    assert warnings[0].startswith(f"Redis unavailable: {expected_detail}")
    assert warnings[1].startswith("Redis is back and takes writes")


@pytest.mark.slow
def test_redis_required_makes_refused_writes_not_ready(
    private_redis: RedisServerProcess,
) -> None:
    store = ResilientStore(RedisStore(private_redis.url, "t"), health_interval_seconds=0.0)
    readiness = Readiness(redis_state=lambda: redis_state(store), redis_required=True)
    readiness.slack_token_verified("T1")
    readiness.registry_loaded(0)
    admin = _admin(private_redis)
    try:
        admin.config_set("min-replicas-to-write", 1)
        with _serving_readyz(readiness) as base:
            status, body = _readyz(base)
        assert status == 503 and body["status"] == "not-ready" and body["failing"] == ["redis"]
        assert body["checks"]["redis"]["detail"].startswith(
            "Redis does not take writes (write probe: NOREPLICAS"
        )
    finally:
        admin.config_set("min-replicas-to-write", 0)
