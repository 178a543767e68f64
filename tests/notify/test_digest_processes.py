"""Two real ``hami-summary serve`` processes on one Redis: the replica holding a digest's lease
is killed (SIGKILL) in the middle of collecting, and the other posts the digest, once."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.notify.conftest import OPS, utc_minute
from tests.replicas.conftest import BotProcess, bot_env
from tests.slack.test_http_e2e import blocks_text
from tests.store.collected import CountingExporter
from tests.support.redis_topologies import redis_client
from tests.support.slack_api import SlackWebApi, StoredMessage, running_slack_api


def holder_pid(token: bytes | None) -> int | None:
    """The process id in a lease's token (``host:pid:random``), or None."""
    if token is None:
        return None
    parts = token.decode("utf-8", "replace").rsplit(":", 2)
    return int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else None


pytestmark = pytest.mark.slow


@pytest.fixture
def slack_api() -> Iterator[SlackWebApi]:
    yield from running_slack_api()


def wait_until(what: str, check: object, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return
        time.sleep(0.05)
    raise AssertionError(f"waited {timeout} s for {what}")


def test_the_digest_is_posted_once_when_its_lease_holder_is_killed(
    slack_api: SlackWebApi, redis_url: str, redis_key_prefix: str, tmp_path: Path
) -> None:
    # The first scrape hangs: whoever holds the digest's lease is stuck collecting.
    exporter = CountingExporter(delay_seconds=60.0)
    exporter.start()
    registry = tmp_path / "clusters.yaml"
    registry.write_text(
        "clusters:\n"
        "  - name: demo\n"
        f"    metrics_url: {exporter.url}\n"
        '    allowed_users: ["*"]\n'
        "    timeout_seconds: 50\n"
        "    digests:\n"
        f"      - channel: {OPS}\n"
        f'        at: "{utc_minute(time.time())}"\n'
        "        weekdays: daily\n"
    )
    env = bot_env(slack_api, registry, redis_url, redis_key_prefix)
    env.update(
        {"HAMI_SUMMARY_NOTIFY_LEASE_SECONDS": "2", "HAMI_SUMMARY_NOTIFY_TICK_SECONDS": "0.3"}
    )
    replicas = [BotProcess(name, env, tmp_path) for name in ("replica-a", "replica-b")]
    client = redis_client(redis_url)
    try:
        wait_until("a scrape by the lease holder", lambda: exporter.scrapes >= 1, 60)
        exporter.delay_seconds = 0.0  # the next scrape answers at once
        leases = list(client.scan_iter(match=f"{redis_key_prefix}:*digest-lease*"))
        assert len(leases) == 1
        pid = holder_pid(client.get(leases[0]))
        holder = next(r for r in replicas if r.process.pid == pid)
        holder.process.send_signal(signal.SIGKILL)
        holder.process.wait(timeout=10)
        survivor = next(r for r in replicas if r is not holder)

        # The lease expires (2 s), the survivor takes it; its collection waits for the dead
        # holder's scrape lock (at most 30 s) and then collects by itself.
        wait_until("the digest", lambda: _top_level(slack_api), 90)
        time.sleep(3.0)  # time enough for a second post to show up
        [message] = _top_level(slack_api)
        assert "Digest* of *demo*" in blocks_text(message.blocks)
        assert "Late" not in blocks_text(message.blocks)
        assert "posted digest" in survivor.logs()
        assert survivor.process.poll() is None
    finally:
        client.close()
        for replica in replicas:
            replica.stop()
        exporter.stop()


def _top_level(api: SlackWebApi) -> list[StoredMessage]:
    with api._lock:
        return [
            m for (channel, _), m in api.messages.items() if channel == OPS and m.thread_ts is None
        ]
