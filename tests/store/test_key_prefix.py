"""Every key the bot writes to Redis carries ``REDIS_KEY_PREFIX`` once, followed by the name of
the part that owns it. A live summary (scrape cache, rate limits, history) and the bot state on
a real Redis, from the settings as ``serve`` reads them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.clusters.registry import load_registry
from bot.config import redis_settings
from bot.conversation.clusters import LiveRequest
from bot.live import RegistryLiveSource
from bot.store.factory import store_from_config
from bot.store.state import BotState
from tests.conftest import read_fixture
from tests.slack.conftest import MetricsServer
from tests.support.redis_topologies import redis_client


@pytest.fixture
def scheduler() -> Iterator[MetricsServer]:
    server = MetricsServer(read_fixture("scheduler-small.prom"))
    yield server
    server.stop()


def test_the_prefix_is_applied_once(
    redis_url: str, redis_key_prefix: str, scheduler: MetricsServer, tmp_path: Path
) -> None:
    registry_file = tmp_path / "clusters.yaml"
    registry_file.write_text(
        "clusters:\n"
        "  - name: demo\n"
        f"    metrics_url: {scheduler.url}\n"
        "    allowed_channels: [C0TEAM01]\n"
    )
    store = store_from_config(
        redis_settings({"REDIS_URL": redis_url, "REDIS_KEY_PREFIX": redis_key_prefix + ":"})
    )
    live = RegistryLiveSource(load_registry(registry_file), store)
    result = live.summarize(LiveRequest("demo", None, user="U0ALICE1", channel="C0TEAM01"))
    assert result.summary is not None
    assert BotState(store).first_sighting("event:Ev1")

    client = redis_client(redis_url)
    try:
        keys = sorted(k.decode() for k in client.scan_iter(match=f"{redis_key_prefix}:*"))
    finally:
        client.close()
    owners = {key.removeprefix(f"{redis_key_prefix}:").split(":")[0] for key in keys}
    # "health": the resilient store's write probe.
    expected = {
        "scrape",
        "scrape-meta",
        "rate",
        "history",
        "history-index",
        "usage",
        "bot",
        "health",
    }
    assert owners == expected
    assert not [key for key in keys if "hami-summary:" in key.removeprefix(redis_key_prefix)]
    assert f"{redis_key_prefix}:rate:user:U0ALICE1" in {k.rsplit(":", 1)[0] for k in keys}
