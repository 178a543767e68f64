"""Digests with two replicas on one real Redis: one post per slot, late within the hour only,
the changes since the previous digest, a slot left alone once it may have been sent, and
``/hami-summary digests`` showing only what the asker may query."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.config import NotifySettings
from bot.notify.loop import build_notify_loop
from bot.notify.records import SlotMark
from bot.store.redis_store import RedisStore
from bot.store.resilient import ResilientStore
from tests.notify.conftest import (
    ALICE,
    MALLORY,
    OPS,
    TEAM,
    Clock,
    Notified,
    both_at_once,
    registry_and_config,
    replicas_on_their_own_fallbacks,
    start_notified,
    stop_notified,
    top_level_posts,
    utc_minute,
)
from tests.slack.conftest import MetricsServer
from tests.slack.test_http_e2e import blocks_text
from tests.support.redis_server import RedisServerProcess, free_port
from tests.support.slack_api import SlackWebApi

SETTINGS = NotifySettings(alert_interval_seconds=60, lease_seconds=5, tick_seconds=1)


@pytest.fixture
def digest_at_now(
    slack_api: SlackWebApi,
    exporter: MetricsServer,
    redis_url: str,
    redis_key_prefix: str,
    tmp_path: Path,
) -> Iterator[Notified]:
    now = time.time()
    clock = Clock(now)
    declared = (
        "    digests:\n"
        f"      - channel: {OPS}\n"
        f'        at: "{utc_minute(now)}"\n'
        "        time_zone: UTC\n"
        "        weekdays: daily\n"
    )
    running, server = start_notified(
        slack_api, exporter, redis_url, redis_key_prefix, tmp_path, declared, clock, SETTINGS
    )
    yield running
    stop_notified(running, server)


def test_one_post_per_slot_across_two_replicas(digest_at_now: Notified) -> None:
    n = digest_at_now
    outcomes = both_at_once(n.a.loop.digests.tick, n.b.loop.digests.tick)
    kinds = sorted(o.outcome for result in outcomes for o in result)
    assert kinds[0] == "busy" or kinds[0] == "done"
    assert kinds[1] == "posted"
    posts = n.posts()
    assert len(posts) == 1
    top = posts[0]
    text = blocks_text(top.json_param("blocks"))
    assert "Digest* of *demo* (" in text and "daily" in text
    assert "HAMi GPU allocation: demo" in text  # the summary the bot answers with
    assert "Late" not in text
    # Its thread: what changed (nothing to compare yet) and the files.
    [ts] = n.top_level_ts()
    replies = n.posts(thread_ts=ts)
    assert len(replies) == 1
    assert "first digest of this declaration" in blocks_text(replies[0].json_param("blocks"))
    n.api.wait_for("files.completeUploadExternal")
    names = {f.filename for f in n.api.uploaded_files() if f.thread_ts == ts}
    assert {"hami-allocation.png", "hami-trend.png"} <= names

    # Every later tick of the slot, on either replica, posts nothing.
    for _ in range(3):
        assert [o.outcome for o in n.a.loop.digests.tick()] == ["done"]
        assert [o.outcome for o in n.b.loop.digests.tick()] == ["done"]
    assert len(n.posts()) == 1

    # The next day's slot: one more post, with the changes since this one.
    n.clock.now += 86_400
    both_at_once(n.a.loop.digests.tick, n.b.loop.digests.tick)
    posts = n.posts()
    assert len(posts) == 2
    second = n.top_level_ts()[1]
    changes = blocks_text(n.posts(thread_ts=second)[0].json_param("blocks"))
    assert "Changes in cluster demo since the previous digest" in changes
    assert "nothing changed" in changes.lower() or "namespaces" in changes.lower()


def test_a_late_digest_says_so_and_only_within_the_hour(digest_at_now: Notified) -> None:
    n = digest_at_now
    slot_time = n.clock.now - n.clock.now % 60
    # Both replicas were down at the time; one comes up 20 minutes later.
    n.clock.now = slot_time + 20 * 60
    outcomes = [o.outcome for o in n.b.loop.digests.tick()]
    assert outcomes == ["posted-late"]
    text = blocks_text(n.posts()[0].json_param("blocks"))
    assert ":warning: *Late*: due at" in text
    assert "posted at" in text and "when the bot could post it" in text
    assert n.posts()[0].params["text"].startswith("Digest of demo (late)")
    # The other replica comes up too: nothing more.
    assert [o.outcome for o in n.a.loop.digests.tick()] == ["done"]
    assert len(n.posts()) == 1


def test_no_digest_once_the_hour_is_over(digest_at_now: Notified) -> None:
    n = digest_at_now
    slot_time = n.clock.now - n.clock.now % 60
    n.clock.now = slot_time + 60 * 60
    assert n.a.loop.digests.tick() == []
    assert n.b.loop.digests.tick() == []
    assert n.posts() == []


def test_a_slot_that_may_have_been_sent_is_never_sent_again(digest_at_now: Notified) -> None:
    n = digest_at_now
    # A replica marked the slot and died before Slack's answer came: nobody knows whether the
    # message is there, so nobody posts it (never two).
    digest = n.registry.entries[0].digests[0]
    from core.notify.schedule import due_slot

    slot = due_slot(digest.schedule, n.clock.now)
    assert slot is not None
    n.records.mark_slot("demo", digest.name, slot.key, SlotMark("sending", n.clock.now, "x:1"))
    assert [o.outcome for o in n.a.loop.digests.tick()] == ["done"]
    assert n.posts() == []


def test_a_refused_post_is_tried_again_later_not_at_once(digest_at_now: Notified) -> None:
    n = digest_at_now
    n.api.channels_without_bot.add(OPS)
    assert [o.outcome for o in n.a.loop.digests.tick()] == ["failed"]
    assert [o.outcome for o in n.b.loop.digests.tick()] == ["done"]  # not every tick
    n.api.channels_without_bot.discard(OPS)  # the bot was invited
    n.clock.now += 301
    assert [o.outcome for o in n.b.loop.digests.tick()] == ["posted-late"]
    assert len(n.top_level_ts()) == 1  # the refused call left no message


def test_digests_list_shows_only_clusters_the_asker_may_query(
    slack_api: SlackWebApi,
    exporter: MetricsServer,
    redis_url: str,
    redis_key_prefix: str,
    tmp_path: Path,
) -> None:
    declared = (
        "    digests:\n"
        f"      - channel: {OPS}\n"
        '        at: "08:30"\n'
        "        time_zone: Europe/Berlin\n"
        "        weekdays: mon-fri\n"
    )
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
        seen = {}
        for user, channel in ((ALICE, OPS), (MALLORY, TEAM), (MALLORY, OPS)):
            url = n.api.response_url(f"digests-{user}-{channel}")
            response = n.sender.command("digests", response_url=url, user=user, channel=channel)
            assert response.status == 200
            name = url.rsplit("/", 1)[-1]
            n.api.wait_for("response_url", where=lambda c, name=name: c.path.endswith(name))
            seen[(user, channel)] = blocks_text(n.api.response_posts[name][-1]["blocks"])
        assert "*demo* to" in seen[(ALICE, OPS)]
        assert "08:30 Europe/Berlin, mon-fri. Next:" in seen[(ALICE, OPS)]
        assert "demo" in seen[(MALLORY, TEAM)]  # the team channel may query it
        assert "demo" not in seen[(MALLORY, OPS)]
        assert "None of the clusters you may query here has a digest" in seen[(MALLORY, OPS)]
        assert exporter.scrapes == 0  # listing collects nothing
    finally:
        stop_notified(n, server)


def test_a_cluster_that_cannot_be_collected_gets_a_digest_saying_why(
    digest_at_now: Notified,
) -> None:
    n = digest_at_now
    n.exporter.stop()
    assert [o.outcome for o in n.a.loop.digests.tick()] == ["posted"]
    text = blocks_text(n.posts()[0].json_param("blocks"))
    assert "Digest* of *demo*" in text
    assert 'Cannot reach the metrics URL of cluster "demo"' in text
    assert "HAMi GPU allocation" not in text
    assert n.posts(thread_ts=n.top_level_ts()[0]) == []


def test_no_digest_while_redis_is_degraded(
    slack_api: SlackWebApi, exporter: MetricsServer, tmp_path: Path
) -> None:
    now = time.time()
    declared = f'    digests:\n      - channel: {OPS}\n        at: "{utc_minute(now)}"\n'
    registry, config = registry_and_config(slack_api, exporter, tmp_path, declared)
    away = ResilientStore(
        RedisStore(f"redis://127.0.0.1:{free_port()}/0", "hs", timeout_seconds=0.2)
    )
    loop = build_notify_loop(
        config, away, registry, slack_api.bot_token, SETTINGS, clock=Clock(now)
    )
    loop.tick()
    assert slack_api.calls_to("chat.postMessage") == []
    assert exporter.scrapes == 0


@pytest.mark.slow
def test_a_replica_that_lost_redis_mid_slot_does_not_post_it_again_when_redis_is_back(
    slack_api: SlackWebApi,
    exporter: MetricsServer,
    private_redis: RedisServerProcess,
    tmp_path: Path,
) -> None:
    # Replica B finds Redis gone in the middle of its tick (as in a failover): it composes from
    # process memory and must not post. Redis comes back, replica A posts the slot, and B's
    # recovery must not undo A's record: B then leaves the slot alone.
    now = time.time()
    declared = f'    digests:\n      - channel: {OPS}\n        at: "{utc_minute(now)}"\n'
    a, b = replicas_on_their_own_fallbacks(
        slack_api, exporter, private_redis.url, tmp_path, declared, Clock(now), SETTINGS
    )
    private_redis.stop()
    assert [o.outcome for o in b.digests.tick()] == ["unreplicated"]
    private_redis.start()
    assert [o.outcome for o in a.digests.tick()] == ["posted"]
    time.sleep(0.3)  # past B's retry interval: its next call goes to Redis again
    b.tick()
    assert [o.outcome for o in b.digests.tick()] == ["done"]
    assert top_level_posts(slack_api) == [OPS]


def test_the_digests_list_says_when_it_was_last_posted(digest_at_now: Notified) -> None:
    n = digest_at_now
    n.a.loop.digests.tick()
    url = n.api.response_url("digests-after")
    assert n.sender.command("digests", response_url=url, user=ALICE, channel=OPS).status == 200
    n.api.wait_for("response_url", where=lambda c: c.path.endswith("digests-after"))
    text = blocks_text(n.api.response_posts["digests-after"][-1]["blocks"])
    assert "; last posted " in text and "(late)" not in text
