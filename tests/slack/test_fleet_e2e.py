"""``/hami-summary fleet`` end to end: signed slash commands in, one message out through the
local Slack Web API, state in a real Redis.

One cluster answers, one fails (HTTP 500), one is slower than the fleet's wait: the slow one
does not hold up the others and is named as still collecting, the failure has its own line,
and clusters the asker may not query are never named. The figures of the answering cluster are
computed here from the simulator's ground truth.
"""

from __future__ import annotations

import html
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.clusters.registry import load_registry
from bot.conversation.alerts import FiringAlert
from bot.store.redis_store import RedisStore
from core.simulate import SimulatedCluster, render_exposition, simulate_cluster
from core.views.tables import short_type
from tests.core.history_support import inconsistent_uuids
from tests.kube.fake_http import HttpState, http_server
from tests.slack.conftest import (
    CHANNEL,
    USER,
    MetricsServer,
    RunningBot,
    start_bot,
    stop_bot,
    write_kubeconfig,
)
from tests.slack.test_http_e2e import blocks_text
from tests.support.slack_api import SlackWebApi, StoredMessage

WAIT_SECONDS = 3.0
BOB = "U0BOB0002"


def expected_figures(cluster: SimulatedCluster) -> str:
    """What the fleet line must say of ``cluster``, from its devices and allocations."""
    devices, allocations = cluster.devices, cluster.allocations
    cores = sum(a.cores for a in allocations) / sum(d.core_limit for d in devices)
    mem = sum(a.mem_mib for a in allocations) / sum(d.mem_limit_mib for d in devices)
    totals = cluster.device_totals()
    free = ", ".join(
        f"{short_type(model)} "
        f"{sum(1 for d in of_model if totals[d.uuid].shared_count == 0)} of {len(of_model)}"
        for model in sorted({d.device_type for d in devices})
        for of_model in [[d for d in devices if d.device_type == model]]
    )
    bad = len(inconsistent_uuids(cluster))
    return (
        f"{len(cluster.devices)} GPUs on {len(cluster.nodes)} nodes · cores {cores * 100:.1f}% · "
        f"memory {mem * 100:.1f}% · free whole GPUs: {free}"
        + (f" · {bad} inconsistent GPU{'s' if bad != 1 else ''}" if bad else "")
    )


GOOD = simulate_cluster(4, 2, seed=5)


def _alerts(cluster: str) -> tuple[FiringAlert, ...]:
    if cluster in ("good", "hidden"):
        return (FiringAlert("free-l4", "0 of 4 L4 GPUs free, below 1"),)
    return ()


@pytest.fixture
def fleet(
    slack_api: SlackWebApi, redis_url: str, redis_key_prefix: str, tmp_path: Path
) -> Iterator[tuple[RunningBot, MetricsServer, MetricsServer]]:
    good = MetricsServer(render_exposition(GOOD))
    slow = MetricsServer(render_exposition(simulate_cluster(2, 2, seed=1)), held=True)
    store = RedisStore(redis_url, redis_key_prefix)
    with http_server(HttpState(metrics_body=b"oops", metrics_status=500)) as broken:
        registry = tmp_path / "clusters.yaml"
        registry.write_text(
            "clusters:\n"
            "  - name: good\n"
            "    display_name: Good cluster\n"
            f"    metrics_url: {good.url}\n"
            f"    allowed_channels: [{CHANNEL}]\n"
            "  - name: broken\n"
            f"    metrics_url: {broken}/metrics\n"
            f"    allowed_channels: [{CHANNEL}]\n"
            "  - name: slow\n"
            f"    metrics_url: {slow.url}\n"
            f"    allowed_channels: [{CHANNEL}]\n"
            "  - name: alice-lab\n"
            f"    metrics_url: {good.url}\n"
            f"    allowed_users: [{USER}]\n"
            "  - name: hidden\n"
            f"    metrics_url: {good.url}\n"
            "    allowed_channels: [C0OTHER99]\n"
            "  - name: prod\n"
            "    kubeconfig: prod.kubeconfig\n"
            "    contexts: [prod-admin, prod-readonly]\n"
            f"    allowed_channels: [{CHANNEL}]\n"
        )
        write_kubeconfig(tmp_path / "prod.kubeconfig", ["prod-admin", "prod-readonly"])
        env = {
            "HAMI_SUMMARY_FLEET_WAIT_SECONDS": str(WAIT_SECONDS),
            # The whole fleet counts as one request against this limit.
            "HAMI_SUMMARY_LIVE_PER_MINUTE": "1",
        }
        bot, server = start_bot(
            slack_api, load_registry(registry), env, store=store, firing_alerts=_alerts
        )
        try:
            yield bot, good, slow
        finally:
            stop_bot(bot, server)
            good.stop()
            slow.stop()
            store.close()


def _fleet_message(bot: RunningBot, user: str, after: int) -> tuple[StoredMessage, str]:
    """The fleet answer for ``user`` (the ``after``-th message of the channel onwards)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        messages = [m for m in list(bot.api.messages.values()) if m.channel == CHANNEL][after:]
        for message in messages:
            text = html.unescape(blocks_text(message.blocks))
            if text.startswith("Fleet: "):
                return message, text
        time.sleep(0.05)
    raise AssertionError("no fleet message")


def _line(text: str, name: str) -> str:
    return next(line for line in text.splitlines() if f"*{name}*" in line)


def test_a_slow_and_a_failing_cluster_each_get_their_own_line(
    fleet: tuple[RunningBot, MetricsServer, MetricsServer],
) -> None:
    bot, good, slow = fleet
    response = bot.sender.command("fleet", response_url=bot.api.response_url("fleet"))
    assert response.status == 200 and response.body == b""  # answered in the channel
    _, text = _fleet_message(bot, USER, 0)
    # The slow cluster did not hold the others: the answer came before its scrape ended.
    assert slow.scrapes == 1 and slow.served == 0
    assert text.startswith("Fleet: 5 clusters you may query here")
    # Several contexts: never one picked by the bot, so not collected; the line says how.
    assert _line(text, "prod") == (
        ":grey_question: *prod*: several contexts (`prod-admin`, `prod-readonly`); not "
        "collected here: ask `/hami-summary prod context=NAME`"
    )
    assert _line(text, "good") == (
        f":rotating_light: *good* (Good cluster): {expected_figures(GOOD)} · scraped 0 s ago"
        " · 1 alert firing: free-l4 (0 of 4 L4 GPUs free, below 1)"
    )
    assert _line(text, "broken").startswith(
        ':warning: *broken*: could not collect: cluster "broken": the metrics URL '
    )
    assert "answered HTTP 500" in _line(text, "broken")
    assert _line(text, "slow") == (
        f":hourglass_flowing_sand: *slow*: no answer within {WAIT_SECONDS:g} s; still "
        "collecting, ask again in a minute for its figures"
    )
    assert _line(text, "alice-lab").startswith("• *alice-lab*: ")  # opened to her alone
    assert "hidden" not in text  # not even its name, nor its alert
    assert f"at most {WAIT_SECONDS:g} s in all" in text

    # The slow cluster kept collecting; its result is in the shared cache for the next ask.
    slow.release()
    deadline = time.monotonic() + 20
    while slow.served == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    # Stored in the cache by now, or still under its single-flight lock: the next ask joins it.
    bot.sender.command("fleet", user=BOB, response_url=bot.api.response_url("bob"))
    _, again = _fleet_message(bot, BOB, 1)
    assert _line(again, "slow").startswith("• *slow*: 4 GPUs on 2 nodes · ")
    assert "alice-lab" not in again  # Bob may not query it
    assert again.startswith("Fleet: 4 clusters you may query here")
    # One scrape per cluster however often asked (good and alice-lab share the one exporter).
    assert good.scrapes == 2 and slow.scrapes == 1


def test_a_person_without_clusters_is_told_so_at_once(
    fleet: tuple[RunningBot, MetricsServer, MetricsServer],
) -> None:
    bot, good, _ = fleet
    response = bot.sender.command(
        "fleet", user=BOB, channel="C0EMPTY01", response_url=bot.api.response_url("none")
    )
    body = response.json()
    assert body["response_type"] == "ephemeral"
    assert "None of the registered clusters may be queried by you" in blocks_text(body["blocks"])
    assert good.scrapes == 0
    bad = bot.sender.command("fleet now", response_url=bot.api.response_url("bad"))
    assert "'fleet' takes no arguments (got 'now')" in blocks_text(bad.json()["blocks"])
