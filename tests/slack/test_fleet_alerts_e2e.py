"""The fleet view shows the alerts the alert runner found firing: the runner evaluates the
registry's rules against a live cluster and records them in a real Redis; a signed
``/hami-summary fleet`` then names them on that cluster's line, and on no other."""

from __future__ import annotations

import html
import time
from pathlib import Path

from bot.clusters.registry import load_registry
from bot.live import RegistryLiveSource
from bot.notify.alerts import AlertRunner
from bot.notify.records import NotifyRecords
from bot.slack.app import build_web_client
from bot.store.redis_store import RedisStore
from bot.web.serving import firing_alerts_of
from core.simulate import render_exposition, simulate_cluster
from tests.slack.conftest import CHANNEL, MetricsServer, start_bot, stop_bot
from tests.slack.test_http_e2e import blocks_text
from tests.support.slack_api import SlackWebApi


def test_a_firing_alert_is_named_on_its_cluster_line(
    slack_api: SlackWebApi, redis_url: str, redis_key_prefix: str, tmp_path: Path
) -> None:
    cluster = simulate_cluster(4, 2, seed=5)
    free = sum(1 for t in cluster.device_totals().values() if t.shared_count == 0)
    exporter = MetricsServer(render_exposition(cluster))
    registry_file = tmp_path / "clusters.yaml"
    registry_file.write_text(
        "clusters:\n"
        "  - name: watched\n"
        f"    metrics_url: {exporter.url}\n"
        f"    allowed_channels: [{CHANNEL}]\n"
        "    alerts:\n"
        f"      - channel: {CHANNEL}\n"
        f"        free_whole_gpus_below: {free + 1}\n"
        "  - name: calm\n"
        f"    metrics_url: {exporter.url}\n"
        f"    allowed_channels: [{CHANNEL}]\n"
    )
    registry = load_registry(registry_file)
    store = RedisStore(redis_url, redis_key_prefix)
    # Wired as ``hami-summary serve`` wires it.
    bot, server = start_bot(
        slack_api, registry, store=store, firing_alerts=firing_alerts_of(store, registry)
    )
    try:
        runner = AlertRunner(
            registry,
            NotifyRecords(store),
            RegistryLiveSource(registry, store),
            build_web_client(slack_api.bot_token, slack_api.base_url),
            interval_seconds=60,
            lease_seconds=30,
        )
        assert runner.tick() == ["watched"]
        bot.sender.command("fleet", response_url=slack_api.response_url("fleet"))
        deadline = time.monotonic() + 20
        text = ""
        while time.monotonic() < deadline and not text.startswith("Fleet: "):
            messages = list(slack_api.messages.values())
            texts = [html.unescape(blocks_text(m.blocks)) for m in messages]
            text = next((t for t in texts if t.startswith("Fleet: ")), "")
            time.sleep(0.05)
        watched = next(line for line in text.splitlines() if "*watched*" in line)
        calm = next(line for line in text.splitlines() if "*calm*" in line)
        assert watched.startswith(":rotating_light: *watched*: ")
        assert watched.endswith(
            f" · 1 alert firing: free_whole_gpus_below ({free} free whole GPU(s) left, "
            f"below {free + 1})"
        )
        assert calm.startswith("• *calm*: ") and "firing" not in calm
    finally:
        stop_bot(bot, server)
        exporter.stop()
        store.close()
