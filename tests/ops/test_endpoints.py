"""/healthz, /readyz and /metrics over real HTTP, with Redis stopped under /readyz."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from bot.ops.endpoints import Readiness
from bot.ops.metrics import METRICS
from bot.store.factory import redis_state
from bot.store.redis_store import RedisStore
from bot.store.resilient import ResilientStore
from bot.web.server import BotHttpServer, start_ops_server
from tests.support.redis_server import RedisServerProcess


def _get(url: str, method: str = "GET") -> tuple[int, str, bytes]:
    request = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.headers["Content-Type"], response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["Content-Type"], error.read()


def _json(url: str) -> tuple[int, dict[str, Any]]:
    status, content_type, body = _get(url)
    assert content_type == "application/json"
    return status, json.loads(body)


@pytest.fixture
def served() -> Iterator[tuple[Readiness, str]]:
    readiness = Readiness()
    server = start_ops_server(readiness, host="127.0.0.1", port=0)
    yield readiness, f"http://127.0.0.1:{server.port}"
    server.stop()


def test_healthz_is_alive(served: tuple[Readiness, str]) -> None:
    _, base = served
    assert _json(f"{base}/healthz") == (200, {"status": "alive"})


def test_readyz_waits_for_the_token_and_the_registry(served: tuple[Readiness, str]) -> None:
    readiness, base = served
    status, body = _json(f"{base}/readyz")
    assert status == 503
    assert body["status"] == "not-ready"
    assert body["failing"] == ["slack", "registry"]
    assert body["checks"]["slack"]["status"] == "pending"
    assert body["checks"]["redis"]["status"] == "disabled"

    readiness.slack_token_verified("T0HAMI")
    readiness.registry_loaded(3, "/etc/hami-summary/clusters.yaml")
    status, body = _json(f"{base}/readyz")
    assert status == 200 and body["status"] == "ready"
    assert body["checks"]["registry"]["detail"] == (
        "3 cluster(s) registered from /etc/hami-summary/clusters.yaml"
    )

    readiness.slack_failed("auth.test failed: invalid_auth", retry_in_seconds=4)
    status, body = _json(f"{base}/readyz")
    assert status == 503 and body["failing"] == ["slack"]
    assert body["checks"]["slack"]["detail"] == "auth.test failed: invalid_auth; retrying in 4 s"
    assert body["reason"] == "slack: auth.test failed: invalid_auth; retrying in 4 s"


@pytest.mark.slow
def test_readyz_reports_redis_degraded_and_recovered(private_redis: RedisServerProcess) -> None:
    store = ResilientStore(RedisStore(private_redis.url, "t"), retry_interval_seconds=0.2)
    readiness = Readiness(redis_state=lambda: redis_state(store))
    readiness.slack_token_verified("T1")
    readiness.registry_loaded(0)
    strict = Readiness(redis_state=lambda: redis_state(store), redis_required=True)
    strict.slack_token_verified("T1")
    strict.registry_loaded(0)
    server = start_ops_server(readiness, host="127.0.0.1", port=0)
    strict_server = start_ops_server(strict, host="127.0.0.1", port=0)
    base = f"http://127.0.0.1:{server.port}"
    try:
        assert _json(f"{base}/readyz")[1]["checks"]["redis"]["status"] == "ok"
        private_redis.stop()
        store.get("anything")  # the first call after the outage notices it
        status, body = _json(f"{base}/readyz")
        # Still serving (from memory), so still in the Service, but saying why it is degraded.
        assert status == 200 and body["status"] == "degraded" and body["degraded"] == ["redis"]
        assert "process memory" in body["checks"]["redis"]["detail"]
        strict_status, strict_body = _json(f"http://127.0.0.1:{strict_server.port}/readyz")
        assert strict_status == 503 and strict_body["failing"] == ["redis"]

        private_redis.start()
        time.sleep(0.25)
        store.ping()  # a readiness probe alone lets the store notice recovery
        status, body = _json(f"{base}/readyz")
        assert status == 200 and body["status"] == "ready"
    finally:
        server.stop()
        strict_server.stop()


def test_metrics_exposition_parses(served: tuple[Readiness, str]) -> None:
    _, base = served
    METRICS.cache_requests.labels(result="hit").inc()
    status, content_type, body = _get(f"{base}/metrics")
    assert status == 200 and content_type.startswith("text/plain; version=0.0.4")
    families = {f.name: f for f in text_string_to_metric_families(body.decode())}
    for name in (
        "hami_summary_requests",
        "hami_summary_ack_latency_seconds",
        "hami_summary_reply_latency_seconds",
        "hami_summary_scrapes",
        "hami_summary_scrape_duration_seconds",
        "hami_summary_cache_requests",
        "hami_summary_redis_errors",
    ):
        assert name in families, name
    hits = [
        s for s in families["hami_summary_cache_requests"].samples if s.labels == {"result": "hit"}
    ]
    assert hits and hits[0].value >= 1
    # Beside the bot's own metrics, the process and Python runtime ones and the build info.
    assert {"process_cpu_seconds", "python_info", "hami_summary_build_info"} <= set(families)


def test_wrong_method_and_unknown_path(served: tuple[Readiness, str]) -> None:
    _, base = served
    status, _, body = _get(f"{base}/readyz", method="POST")
    assert status == 405 and b"use GET" in body
    status, _, body = _get(f"{base}/nope")
    assert status == 404 and b"/healthz, /metrics, /readyz" in body
    status, _, body = _get(f"{base}/healthz", method="HEAD")
    assert status == 200 and body == b""


def test_ops_server_serves_only_the_routes_it_is_given() -> None:
    server = BotHttpServer({}, host="127.0.0.1", port=0).start()
    try:
        assert server.port > 0
        assert _get(f"http://127.0.0.1:{server.port}/healthz")[0] == 404
    finally:
        server.stop()
