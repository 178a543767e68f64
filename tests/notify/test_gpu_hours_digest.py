"""A GPU-hours digest: posted once per slot across two replicas with the CSV in its thread,
over the history the notifier itself keeps collecting for it (once per spacing, whichever
replica looks first)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.config import NotifySettings
from bot.store.history import SnapshotHistory
from core.api import summarize_text
from core.history.snapshot import snapshot_of
from core.model import SourceInfo
from core.simulate import render_exposition, simulate_cluster
from tests.notify.conftest import (
    OPS,
    Clock,
    Notified,
    both_at_once,
    start_notified,
    stop_notified,
    utc_minute,
)
from tests.slack.conftest import MetricsServer
from tests.slack.test_http_e2e import blocks_text
from tests.support.gpu_hours_csv import namespace_hours
from tests.support.slack_api import SlackWebApi

SETTINGS = NotifySettings(alert_interval_seconds=60, lease_seconds=5, tick_seconds=1)


@pytest.fixture
def weekly(
    slack_api: SlackWebApi,
    exporter: MetricsServer,
    redis_url: str,
    redis_key_prefix: str,
    tmp_path: Path,
) -> Iterator[Notified]:
    now = time.time()
    declared = (
        "    digests:\n"
        f"      - channel: {OPS}\n"
        f'        at: "{utc_minute(now)}"\n'
        "        weekdays: daily\n"
        "        report: gpu-hours\n"
        "        since: 2h\n"
    )
    running, server = start_notified(
        slack_api, exporter, redis_url, redis_key_prefix, tmp_path, declared, Clock(now), SETTINGS
    )
    yield running
    stop_notified(running, server)


def test_the_sampler_collects_once_per_spacing_across_replicas(weekly: Notified) -> None:
    n = weekly
    samplers = (n.a.loop.sampler, n.b.loop.sampler)
    assert samplers[0] is not None and samplers[1] is not None
    collected = both_at_once(samplers[0].tick, samplers[1].tick)
    history = SnapshotHistory(n.a.store)
    assert len(history.times("demo")) == 1
    assert sum(len(c) for c in collected) >= 1
    # At most one scrape each (this registry caches nothing); one snapshot, under the lock.
    assert 1 <= n.exporter.scrapes <= 2
    assert samplers[0].tick() == [] and samplers[1].tick() == []  # not due again yet
    assert len(history.times("demo")) == 1


def test_a_gpu_hours_digest_reports_the_kept_hours_once(weekly: Notified) -> None:
    n = weekly
    history = SnapshotHistory(n.a.store)
    cluster = simulate_cluster(6, 4, seed=2)
    summary = summarize_text(render_exposition(cluster), SourceInfo(kind="file", label="x"))
    now = time.time()
    for minutes in (90, 80, 70, 60):
        assert history.record("demo", None, snapshot_of(summary, now - minutes * 60))
    outcomes = both_at_once(n.a.loop.digests.tick, n.b.loop.digests.tick)
    assert sorted(o.outcome for result in outcomes for o in result)[1] == "posted"
    [post] = n.posts()
    text = " ".join(blocks_text(post.json_param("blocks")).split())
    assert "GPU-hours digest* of *demo* (GPU-hours of the last 2 h, " in text, text
    assert "GPU-hours by namespace, cluster demo" in text
    # 30 minutes counted: 90 to 60 minutes ago (the hour since is longer than the gap limit).
    [ts] = n.top_level_ts()
    n.api.wait_for("files.completeUploadExternal")
    [csv_file] = [f for f in n.api.uploaded_files() if f.filename == "hami-gpu-hours.csv"]
    assert csv_file.thread_ts == ts and csv_file.content is not None
    got = namespace_hours(csv_file.content.decode())
    expected: dict[str, float] = {}
    for a in cluster.allocations:
        expected[a.namespace] = expected.get(a.namespace, 0.0) + a.cores / 100 * 30 / 60
    assert got.keys() == {ns for ns, h in expected.items() if h > 0}
    for namespace, hours in got.items():
        assert hours == pytest.approx(expected[namespace], abs=1e-3), namespace
    for _ in range(2):  # later ticks of the slot post nothing
        n.a.loop.digests.tick()
        n.b.loop.digests.tick()
    assert len(n.posts()) == 1
