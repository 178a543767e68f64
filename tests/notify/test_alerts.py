"""Alerts with two replicas on one real Redis: fired once, nothing while firing, resolved once
in the thread, a silence pressed in Slack holding on the other replica, states on /metrics,
and nothing for a person who may not query the cluster."""

from __future__ import annotations

import time
import urllib.request
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from bot.config import NotifySettings
from bot.notify.records import AlertPost, ClusterAlerts
from bot.ops.endpoints import Readiness, ops_routes
from bot.web.server import BotHttpServer
from core.simulate import render_exposition, simulate_cluster
from tests.core.history_support import free_whole_per_model
from tests.notify.conftest import (
    ALICE,
    MALLORY,
    OPS,
    TEAM,
    Clock,
    Notified,
    both_at_once,
    replicas_on_their_own_fallbacks,
    start_notified,
    stop_notified,
    top_level_posts,
)
from tests.slack.conftest import MetricsServer
from tests.slack.test_http_e2e import blocks_text
from tests.support.redis_server import RedisServerProcess
from tests.support.slack_api import SlackWebApi

INTERVAL = 60.0
SETTINGS = NotifySettings(alert_interval_seconds=INTERVAL, lease_seconds=5, tick_seconds=1)
CLUSTER = simulate_cluster(4, 4, seed=3)
BUSY = render_exposition(CLUSTER)
IDLE = render_exposition(replace(CLUSTER, allocations=()))
FREE_WHEN_BUSY = sum(free_whole_per_model(CLUSTER).values())


@pytest.fixture
def alerting(
    slack_api: SlackWebApi,
    exporter: MetricsServer,
    redis_url: str,
    redis_key_prefix: str,
    tmp_path: Path,
) -> Iterator[Notified]:
    assert FREE_WHEN_BUSY < 16  # the simulated cluster holds some GPUs
    exporter.text = IDLE
    declared = (
        "    alerts:\n"
        f"      - name: few-free\n"
        f"        channel: {OPS}\n"
        f"        free_whole_gpus_below: {FREE_WHEN_BUSY + 1}\n"
    )
    running, server = start_notified(
        slack_api,
        exporter,
        redis_url,
        redis_key_prefix,
        tmp_path,
        declared,
        Clock(time.time()),
        SETTINGS,
    )
    yield running
    stop_notified(running, server)


def evaluate_on_both(n: Notified) -> list[str]:
    """One interval later, both replicas tick at once; the clusters evaluated, by whoever."""
    n.clock.now += INTERVAL
    results = both_at_once(n.a.loop.alerts.tick, n.b.loop.alerts.tick)
    return [name for evaluated in results for name in evaluated]


def press(n: Notified, action_id: str, ts: str, *, user: str, channel: str = OPS) -> Any:
    message = n.api.message(OPS, ts)
    value = next(
        e["value"]
        for b in message.blocks
        if b["type"] == "actions"
        for e in b["elements"]
        if e["action_id"] == action_id
    )
    url = n.api.response_url(f"press-{user}-{action_id}")
    response = n.sender.interaction(
        {
            "type": "block_actions",
            "user": {"id": user},
            "channel": {"id": channel},
            "container": {
                "type": "message",
                "message_ts": ts,
                "channel_id": channel,
                "is_ephemeral": False,
            },
            "message": {"ts": ts, "text": message.text, "blocks": message.blocks},
            "response_url": url,
            "actions": [
                {
                    "type": "button",
                    "action_id": action_id,
                    "value": value,
                    "action_ts": f"{time.time():.6f}",
                }
            ],
        }
    )
    assert response.status == 200
    return url


def test_fires_once_stays_quiet_resolves_once_in_the_thread(alerting: Notified) -> None:
    n = alerting
    assert evaluate_on_both(n) == ["demo"]  # one replica evaluated, the other did not
    assert n.posts() == []  # all GPUs free: nothing to say

    n.exporter.text = BUSY
    assert evaluate_on_both(n) == ["demo"]
    [firing] = n.posts()
    text = blocks_text(firing.json_param("blocks"))
    assert "Alert firing: demo / few-free" in text
    assert f"{FREE_WHEN_BUSY} free whole GPU(s) left, below {FREE_WHEN_BUSY + 1}" in text
    assert {"Silence 1 h", "Silence 1 day", "Open summary"} <= set(text.split("\n"))
    [ts] = n.top_level_ts()

    for _ in range(3):  # still firing: nothing more, on either replica
        assert evaluate_on_both(n) == ["demo"]
    assert len(n.posts()) == 1 and n.posts(thread_ts=ts) == []
    # Between intervals no replica evaluates at all.
    assert both_at_once(n.a.loop.alerts.tick, n.b.loop.alerts.tick) == [[], []]

    n.exporter.text = IDLE
    evaluate_on_both(n)
    [resolved] = n.posts(thread_ts=ts)
    assert "Resolved: demo / few-free" in blocks_text(resolved.json_param("blocks"))
    for _ in range(2):
        evaluate_on_both(n)
    assert len(n.posts()) == 1 and len(n.posts(thread_ts=ts)) == 1


def test_alert_states_lost_after_a_post_do_not_make_it_posted_twice(alerting: Notified) -> None:
    # A failover loses the last write when the new master never got it: here the states
    # written after the firing message went out.
    n = alerting
    n.exporter.text = BUSY
    evaluate_on_both(n)
    [ts] = n.top_level_ts()
    n.records.keep_alerts("demo", ClusterAlerts())

    assert evaluate_on_both(n) == ["demo"]
    assert len(n.posts()) == 1
    record = n.records.alerts("demo").rules["few-free"]
    assert record.posted_firing and record.ts == ts  # taken back from the post record

    n.records.keep_alerts("demo", ClusterAlerts())  # and again after the resolution
    n.exporter.text = IDLE
    evaluate_on_both(n)
    assert len(n.posts(thread_ts=ts)) == 1
    evaluate_on_both(n)
    assert len(n.posts()) == 1 and len(n.posts(thread_ts=ts)) == 1
    assert not n.records.alerts("demo").rules["few-free"].posted_firing

    n.exporter.text = BUSY  # a new firing is a new message
    evaluate_on_both(n)
    assert len(n.top_level_ts()) == 2


def test_a_post_a_stopped_replica_began_is_not_sent_again(alerting: Notified) -> None:
    # What a replica leaves when it stops between its post record and Slack's answer: nobody
    # knows whether Slack has the message, so it is not sent (a second copy could be two).
    n = alerting
    n.records.mark_alert_post(
        "demo",
        "few-free",
        AlertPost(True, "sending", n.clock.now, "replica-gone", channel=OPS, fired_at=n.clock.now),
    )
    n.exporter.text = BUSY
    evaluate_on_both(n)
    assert n.posts() == []
    record = n.records.alerts("demo").rules["few-free"]
    assert record.posted_firing and record.ts is None
    # Its resolution still goes out (in the channel, the firing message's ts being unknown).
    n.exporter.text = IDLE
    evaluate_on_both(n)
    [resolved] = n.posts()
    assert "Resolved: demo / few-free" in blocks_text(resolved.json_param("blocks"))
    post = n.records.alert_post("demo", "few-free")
    assert post is not None and (post.firing, post.state) == (False, "posted")


def test_a_silence_pressed_in_slack_holds_on_every_replica(alerting: Notified) -> None:
    n = alerting
    n.exporter.text = BUSY
    evaluate_on_both(n)
    [ts] = n.top_level_ts()
    press(n, "alert_silence_1h", ts, user=ALICE)
    note = n.api.wait_for("chat.postMessage", 2)[-1]
    assert note.params.get("thread_ts") == ts
    assert "Silenced demo / few-free until" in note.params["text"]
    assert f"<@{ALICE}>" in note.params["text"]

    # Resolved and fired again within the hour: neither replica posts a word.
    n.exporter.text = IDLE
    evaluate_on_both(n)
    n.exporter.text = BUSY
    evaluate_on_both(n)
    n.exporter.text = IDLE
    evaluate_on_both(n)
    assert len(n.posts()) == 1 and len(n.posts(thread_ts=ts)) == 1  # the silence note only
    # After the hour, what differs from the last post (it fired; now it is resolved) is said.
    n.clock.now += 3600
    evaluate_on_both(n)
    replies = n.posts(thread_ts=ts)
    assert len(replies) == 2
    assert "Resolved: demo / few-free" in replies[-1].params["text"]


def test_alert_states_are_on_metrics(alerting: Notified) -> None:
    n = alerting
    n.exporter.text = BUSY
    evaluate_on_both(n)
    server = BotHttpServer(ops_routes(Readiness()), host="127.0.0.1", port=0).start()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/metrics") as response:
            text = response.read().decode()
    finally:
        server.stop()
    values = {
        (s.name, s.labels.get("cluster"), s.labels.get("rule")): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name.startswith("hami_summary_alert_")
    }
    assert values[("hami_summary_alert_firing", "demo", "few-free")] == 1
    assert values[("hami_summary_alert_silenced", "demo", "few-free")] == 0


def test_buttons_do_nothing_for_someone_who_may_not_query_the_cluster(alerting: Notified) -> None:
    n = alerting
    n.exporter.text = BUSY
    evaluate_on_both(n)
    [ts] = n.top_level_ts()
    scrapes = n.exporter.scrapes
    for action in ("alert_silence_1h", "alert_silence_1d", "alert_summary"):
        url = press(n, action, ts, user=MALLORY)
        refusal = n.api.wait_for(
            "response_url", where=lambda c, u=url: c.path.endswith(u.rsplit("/", 1)[-1])
        )[-1]
        words = blocks_text(refusal.params["blocks"])
        assert "buttons are not for you" in words
        assert "demo" not in words and "few-free" not in words
    time.sleep(0.5)  # time enough for anything else to be posted
    assert n.posts(thread_ts=ts) == []
    assert n.records.active_silence("demo", "few-free", n.clock.now) is None
    assert n.exporter.scrapes == scrapes  # nothing collected for them


def test_open_summary_posts_the_summary_in_the_alert_thread(alerting: Notified) -> None:
    n = alerting
    n.exporter.text = BUSY
    evaluate_on_both(n)
    [ts] = n.top_level_ts()
    press(n, "alert_summary", ts, user=ALICE)
    n.api.wait_for("chat.update", where=lambda c: c.params.get("channel") == OPS)
    [answer] = [m for m in n.api.messages.values() if m.thread_ts == ts]
    assert "HAMi GPU allocation: demo" in blocks_text(answer.blocks)


def test_a_button_pressed_in_another_channel_is_refused(alerting: Notified) -> None:
    n = alerting
    n.exporter.text = BUSY
    evaluate_on_both(n)
    [ts] = n.top_level_ts()
    # Alice may query from TEAM, but this alert's rule posts to OPS.
    url = press(n, "alert_silence_1d", ts, user=ALICE, channel=TEAM)
    refusal = n.api.wait_for(
        "response_url", where=lambda c: c.path.endswith(url.rsplit("/", 1)[-1])
    )[-1]
    assert "belongs to an alert of another channel" in blocks_text(refusal.params["blocks"])
    assert n.records.active_silence("demo", "few-free", n.clock.now) is None


def test_a_failing_scrape_fires_only_after_its_duration(
    slack_api: SlackWebApi,
    exporter: MetricsServer,
    redis_url: str,
    redis_key_prefix: str,
    tmp_path: Path,
) -> None:
    declared = f"    alerts:\n      - channel: {OPS}\n        scrape_failing_for: 2m\n"
    n, server = start_notified(
        slack_api,
        exporter,
        redis_url,
        redis_key_prefix,
        tmp_path,
        declared,
        Clock(time.time()),
        SETTINGS,
    )
    try:
        evaluate_on_both(n)
        exporter.stop()
        evaluate_on_both(n)  # failing since now
        evaluate_on_both(n)  # for 1 min
        assert n.posts() == []
        evaluate_on_both(n)  # for 2 min
        [firing] = n.posts()
        assert "Alert firing: demo / scrape_failing" in firing.params["text"]
        assert "Cannot reach the metrics URL" in firing.params["text"]
    finally:
        stop_notified(n, server)


@pytest.mark.slow
def test_a_replica_that_lost_redis_mid_evaluation_does_not_post_the_alert_again(
    slack_api: SlackWebApi,
    exporter: MetricsServer,
    private_redis: RedisServerProcess,
    tmp_path: Path,
) -> None:
    # Replica B finds Redis gone in the middle of an evaluation (as in a failover): the rule
    # fires, and B must not post from process memory. Redis comes back, replica A posts the
    # firing message, and B's recovery (copying what it kept in memory to Redis) must not
    # undo A's post record: B then posts nothing.
    exporter.text = BUSY
    clock = Clock(time.time())
    declared = (
        "    alerts:\n"
        f"      - name: few-free\n"
        f"        channel: {OPS}\n"
        f"        free_whole_gpus_below: {FREE_WHEN_BUSY + 1}\n"
    )
    a, b = replicas_on_their_own_fallbacks(
        slack_api, exporter, private_redis.url, tmp_path, declared, clock, SETTINGS
    )
    private_redis.stop()
    assert b.alerts.tick() == ["demo"]
    assert top_level_posts(slack_api) == []
    private_redis.start()
    assert a.alerts.tick() == ["demo"]
    assert top_level_posts(slack_api) == [OPS]
    time.sleep(0.3)  # past B's retry interval: its next call goes to Redis again
    b.tick()
    clock.now += INTERVAL
    assert b.alerts.tick() == ["demo"]
    assert top_level_posts(slack_api) == [OPS]
