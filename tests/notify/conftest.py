"""Two in-process replicas of the notifier sharing one real Redis, a local Slack Web API, a
HAMi exporter whose text a test can change, and an injectable clock.

Each replica has its own Redis connection and its own ``NotifyLoop`` (as ``serve`` builds it);
a Slack bot on a loopback port (the same assembly as ``serve``, on the same Redis) takes the
signed requests: ``/hami-summary digests`` and the alert buttons.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import pytest

from bot.clusters.registry import ClusterRegistry, load_registry
from bot.config import BotConfig, NotifySettings, load_config
from bot.notify.loop import NotifyLoop, build_notify_loop
from bot.notify.records import NotifyRecords
from bot.slack.app import drain
from bot.slack.assembly import SlackBot, assemble_bot
from bot.store.redis_store import RedisStore
from bot.store.resilient import ResilientStore
from bot.web.server import BotHttpServer
from bot.web.slack_endpoint import SLACK_EVENTS_PATH, SlackEndpoint
from tests.conftest import read_fixture
from tests.slack.conftest import SIGNING_SECRET, MetricsServer, SlackSender
from tests.support.slack_api import SlackWebApi, running_slack_api

OPS = "C0GPUOPS1"  # where digests and alerts go; not an allowed channel of the cluster
TEAM = "C0TEAM001"  # allowed to query the cluster
ALICE = "U0ALICE01"  # allowed by name
MALLORY = "U0MALLORY"  # allowed nowhere
T = TypeVar("T")


class Clock:
    """The notifier's clock, moved by the test (started at the real time by the test)."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def utc_minute(moment: float) -> str:
    """``HH:MM`` of ``moment`` in UTC: a digest declared at it is due at once."""
    return datetime.fromtimestamp(moment, UTC).strftime("%H:%M")


def write_registry(directory: Path, metrics_url: str, notify_yaml: str) -> Path:
    path = directory / "clusters.yaml"
    path.write_text(
        "clusters:\n"
        "  - name: demo\n"
        f"    metrics_url: {metrics_url}\n"
        f"    allowed_channels: [{TEAM}]\n"
        f"    allowed_users: [{ALICE}]\n"
        "    cache_ttl_seconds: 0\n" + notify_yaml
    )
    return path


@dataclass
class Replica:
    store: RedisStore
    loop: NotifyLoop


@dataclass
class Notified:
    api: SlackWebApi
    exporter: MetricsServer
    clock: Clock
    registry: ClusterRegistry
    a: Replica
    b: Replica
    records: NotifyRecords
    bot: SlackBot
    sender: SlackSender

    def top_level_ts(self, channel: str = OPS) -> list[str]:
        """The ts of the bot's top-level messages in ``channel``, oldest first."""
        with self.api._lock:
            found = [
                ts
                for (where, ts), m in self.api.messages.items()
                if where == channel and m.thread_ts is None
            ]
        return sorted(found)

    def posts(self, channel: str = OPS, thread_ts: str | None = None) -> list[Any]:
        """What the bot posted in ``channel`` (top level, or in one thread)."""
        return [
            c
            for c in self.api.calls_to("chat.postMessage")
            if c.params.get("channel") == channel and c.params.get("thread_ts") == thread_ts
        ]


def both_at_once(a: Callable[[], T], b: Callable[[], T]) -> list[T]:
    """Run ``a`` and ``b`` in two threads released together (two replicas ticking at once)."""
    barrier = threading.Barrier(2)
    results: list[T] = []
    lock = threading.Lock()

    def run(work: Callable[[], T]) -> None:
        barrier.wait()
        result = work()
        with lock:
            results.append(result)

    threads = [threading.Thread(target=run, args=(w,)) for w in (a, b)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


@pytest.fixture
def slack_api() -> Iterator[SlackWebApi]:
    yield from running_slack_api()


@pytest.fixture
def exporter() -> Iterator[MetricsServer]:
    server = MetricsServer(read_fixture("scheduler-small.prom"))
    yield server
    server.stop()


def registry_and_config(
    api: SlackWebApi, exporter: MetricsServer, tmp_path: Path, notify_yaml: str
) -> tuple[ClusterRegistry, BotConfig]:
    """The cluster ``demo`` on ``exporter`` with ``notify_yaml``, and a bot configured for the
    local Slack Web API."""
    registry = load_registry(write_registry(tmp_path, exporter.url, notify_yaml))
    config = load_config(
        {
            "SLACK_BOT_TOKEN": api.bot_token,
            "SLACK_SIGNING_SECRET": SIGNING_SECRET,
            "SLACK_API_URL": api.base_url,
        }
    )
    return registry, config


def start_notified(
    api: SlackWebApi,
    exporter: MetricsServer,
    redis_url: str,
    prefix: str,
    tmp_path: Path,
    notify_yaml: str,
    clock: Clock,
    settings: NotifySettings,
) -> tuple[Notified, BotHttpServer]:
    registry, config = registry_and_config(api, exporter, tmp_path, notify_yaml)

    def replica() -> Replica:
        # A loaded test machine can stall a process for 100 ms and more; the tests here assert
        # one tick's outcome, which is not about timeouts (a write a replica did not acknowledge
        # in time is posted at the next tick), so the store waits longer than the default.
        store = RedisStore(redis_url, prefix, timeout_seconds=1.0)
        return Replica(
            store, build_notify_loop(config, store, registry, api.bot_token, settings, clock=clock)
        )

    bot_store = RedisStore(redis_url, prefix)
    bot = assemble_bot(config, store=bot_store, registry=registry, notices=NotifyRecords(bot_store))
    server = BotHttpServer(
        {SLACK_EVENTS_PATH: SlackEndpoint(bot.app)}, host="127.0.0.1", port=0
    ).start()
    sender = SlackSender(f"http://127.0.0.1:{server.port}/slack/events")
    running = Notified(
        api, exporter, clock, registry, replica(), replica(), NotifyRecords(bot_store), bot, sender
    )
    return running, server


def replicas_on_their_own_fallbacks(
    api: SlackWebApi,
    exporter: MetricsServer,
    redis_url: str,
    tmp_path: Path,
    notify_yaml: str,
    clock: Clock,
    settings: NotifySettings,
) -> tuple[NotifyLoop, NotifyLoop]:
    """Two notifier replicas as ``serve`` builds them on a Redis: each falls back to its own
    process memory while Redis is away (``ResilientStore``), and goes back to Redis 0.2 s on."""
    registry, config = registry_and_config(api, exporter, tmp_path, notify_yaml)

    def replica() -> NotifyLoop:
        store = ResilientStore(RedisStore(redis_url, "hs"), retry_interval_seconds=0.2)
        return build_notify_loop(config, store, registry, api.bot_token, settings, clock=clock)

    return replica(), replica()


def top_level_posts(api: SlackWebApi) -> list[str]:
    """The channels of every message posted outside a thread, in order."""
    posts = api.calls_to("chat.postMessage")
    return [str(c.params.get("channel")) for c in posts if "thread_ts" not in c.params]


def stop_notified(running: Notified, server: BotHttpServer) -> None:
    server.stop()
    assert drain(running.bot.app, timeout_seconds=60)
    running.bot.user_groups.stop()
