"""``/hami-summary <cluster> gpu-hours`` through Slack: GPU-hours per namespace over the
history kept in Redis, equal to the hours this test counts from the simulator's own
allocations; the gap before the first snapshot is said; the CSV holds every namespace; a
Prometheus-sourced cluster answers from range queries with the same method."""

from __future__ import annotations

import dataclasses
import html
import math
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.clusters.registry import load_registry
from bot.store.history import SnapshotHistory
from bot.store.redis_store import RedisStore
from core.api import summarize_text
from core.history.snapshot import snapshot_of
from core.model import SourceInfo
from core.simulate import SimulatedCluster, drift_cluster, render_exposition, simulate_cluster
from tests.kube.fake_http import http_server
from tests.kube.prometheus_timeline import Timeline, drifting_timeline
from tests.slack.conftest import CHANNEL, MetricsServer, RunningBot, start_bot, stop_bot
from tests.slack.test_changes_e2e import _message_with, _uploaded
from tests.slack.test_http_e2e import answer_in, blocks_text, pasted
from tests.support.gpu_hours_csv import csv_rows, namespace_hours
from tests.support.monitor_text import monitor_exposition
from tests.support.slack_api import SlackWebApi

EVERY = 600.0


@pytest.fixture
def store(redis_url: str, redis_key_prefix: str) -> Iterator[RedisStore]:
    kv = RedisStore(redis_url, redis_key_prefix)
    yield kv
    kv.close()


@pytest.fixture
def timeline() -> Timeline:
    """Scrapes on the 10-minute grid a report over two hours reads at (a real Prometheus
    scrapes far more often than its lookback; this one every 10 minutes, on the points)."""
    return drifting_timeline(math.floor(time.time() / EVERY) * EVERY)


@pytest.fixture
def running(
    slack_api: SlackWebApi, store: RedisStore, timeline: Timeline, tmp_path: Path
) -> Iterator[RunningBot]:
    exporter = MetricsServer(render_exposition(simulate_cluster(8, 4, seed=6)))
    with http_server(timeline.state) as prometheus:
        registry = tmp_path / "clusters.yaml"
        registry.write_text(
            "clusters:\n"
            "  - name: demo\n"
            f"    metrics_url: {exporter.url}\n"
            f"    allowed_channels: [{CHANNEL}]\n"
            "  - name: prom\n"
            f"    prometheus_url: {prometheus}\n"
            "    prometheus_selector: 'cluster=\"prod\"'\n"
            f"    allowed_channels: [{CHANNEL}]\n"
        )
        bot, server = start_bot(slack_api, load_registry(registry), store=store)
        try:
            yield bot
        finally:
            stop_bot(bot, server)
            exporter.stop()


def _hours(points: list[tuple[float, SimulatedCluster]], since: float, until: float) -> dict:
    """GPU-hours per namespace: each cluster's allocation holds until the next point (the last
    until ``until``), counted inside [since, until]."""
    hours: dict[str, float] = defaultdict(float)
    ends = [t for t, _ in points[1:]] + [until]
    for (start, cluster), end in zip(points, ends, strict=True):
        seconds = max(0.0, min(end, until) - max(start, since))
        for a in cluster.allocations:
            hours[a.namespace] += a.cores / 100 * seconds / 3600
    return hours


def _csv_hours(bot: RunningBot, count: int = 1) -> dict[str, float]:
    """The namespaces' GPU-hours in the ``count``-th CSV uploaded."""
    _uploaded(bot, "hami-gpu-hours.csv")
    deadline = time.monotonic() + 20
    while len(csvs := _csv_files(bot)) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    listing = csvs[count - 1]
    assert listing.content is not None
    return namespace_hours(listing.content.decode())


def _csv_files(bot: RunningBot) -> list:
    return [f for f in bot.api.uploaded_files() if f.filename == "hami-gpu-hours.csv"]


def _keep_history(store: RedisStore) -> list[tuple[float, SimulatedCluster]]:
    """Six snapshots of a drifting cluster, ten minutes apart, the last one now."""
    now = time.time()
    clusters = [simulate_cluster(8, 4, seed=6)]
    for _ in range(5):
        clusters.append(drift_cluster(clusters[-1], steps=3))
    points = [(now - EVERY * (5 - n), c) for n, c in enumerate(clusters)]
    history = SnapshotHistory(store)
    for taken_at, cluster in points:
        summary = summarize_text(render_exposition(cluster), SourceInfo(kind="file", label="x"))
        assert history.record("demo", None, snapshot_of(summary, taken_at))
    return points


def test_gpu_hours_of_the_history_kept_in_redis(running: RunningBot, store: RedisStore) -> None:
    points = _keep_history(store)
    running.sender.command("demo gpu-hours since=1h", response_url=running.api.response_url("h"))
    answer = html.unescape(blocks_text(_message_with(running, None, "GPU-hours").blocks))
    asked = time.time()
    assert "GPU-hours by namespace, cluster demo" in answer
    flat = " ".join(answer.split())  # Slack's 72 columns wrap the long lines
    assert "covered 50 min by 6 snapshots" in flat, answer
    assert "Not counted: 10 min in 1 gap with no snapshot within 15 min of the next" in flat
    expected = _hours(points, asked - 3600, asked)
    got = _csv_hours(running)
    assert got.keys() == {ns for ns, h in expected.items() if h > 0}
    for namespace, hours in got.items():
        # The ask's own moment is known to within the reply's time: a second of the last
        # snapshot's allocation at most.
        assert hours == pytest.approx(expected[namespace], abs=0.01), namespace
    top = max(got, key=got.__getitem__)
    assert top in answer


def test_gpu_hours_of_a_prometheus_cluster_come_from_range_queries(
    running: RunningBot, timeline: Timeline
) -> None:
    running.sender.command("prom gpu-hours since=2h", response_url=running.api.response_url("p"))
    answer = html.unescape(blocks_text(_message_with(running, None, "GPU-hours").blocks))
    asked = time.time()
    assert "GPU-hours by namespace, cluster prom" in answer
    assert "Not counted" not in answer  # a state at every step
    points = sorted(timeline.truth.items())
    expected = _hours(points, asked - 7200, asked)
    got = _csv_hours(running)
    assert got.keys() == {ns for ns, h in expected.items() if h > 0}
    for namespace, hours in got.items():
        assert hours == pytest.approx(expected[namespace], abs=0.01), namespace
    # Range queries on the 10-minute grid (24 h or less reads at the history's spacing).
    steps = {step for query, _, _, step in timeline.state.range_queries if query}
    assert steps == {600.0}


def test_the_prometheus_route_counts_what_the_snapshot_route_counts_of_the_same_history(
    running: RunningBot, store: RedisStore, timeline: Timeline
) -> None:
    history = SnapshotHistory(store)
    for taken_at, cluster in sorted(timeline.truth.items()):
        summary = summarize_text(render_exposition(cluster), SourceInfo(kind="file", label="x"))
        assert history.record("demo", None, snapshot_of(summary, taken_at))
    by_route = {}
    for count, cluster in enumerate(("demo", "prom"), start=1):
        running.sender.command(
            f"{cluster} gpu-hours since=2h", response_url=running.api.response_url(cluster)
        )
        _message_with(running, None, f"GPU-hours by namespace, cluster {cluster}")
        by_route[cluster] = _csv_hours(running, count)
    assert by_route["demo"].keys() == by_route["prom"].keys()
    for namespace, hours in by_route["prom"].items():
        # The two asks are moments apart: the last state counts a few seconds longer.
        assert hours == pytest.approx(by_route["demo"][namespace], abs=0.01), namespace


def test_gpu_hours_without_history_says_so(running: RunningBot) -> None:
    running.sender.command("demo gpu-hours", response_url=running.api.response_url("none"))
    answer = blocks_text(_message_with(running, None, "No history to count yet").blocks)
    assert "fewer than two snapshots of cluster demo" in answer


def test_gpu_hours_as_a_follow_up_in_a_cluster_thread(
    running: RunningBot, store: RedisStore
) -> None:
    points = _keep_history(store)
    running.sender.command("demo", response_url=running.api.response_url("summary"))
    root = answer_in(running.api, CHANNEL, None).ts
    running.sender.mention("gpu-hours since=30m", thread_ts=root)
    answer = html.unescape(blocks_text(_message_with(running, root, "GPU-hours").blocks))
    asked = time.time()
    assert "covered 30 min by" in " ".join(answer.split()), answer
    expected = _hours(points, asked - 1800, asked)
    for namespace, hours in _csv_hours(running).items():
        assert hours == pytest.approx(expected[namespace], abs=0.01), namespace


def test_gpu_hours_in_a_thread_of_pasted_metrics_says_where_history_is(
    running: RunningBot,
) -> None:
    _, root = running.sender.mention(pasted(render_exposition(simulate_cluster(3, 2, seed=1))))
    answer_in(running.api, CHANNEL, root)
    running.sender.mention("gpu-hours", thread_ts=root)
    answer = blocks_text(_message_with(running, root, "No history in a thread").blocks)
    assert "hami-summary gpu-hours DIR" in answer


def test_prices_in_the_settings_file_put_costs_beside_the_hours(
    slack_api: SlackWebApi, store: RedisStore, tmp_path: Path
) -> None:
    settings = tmp_path / "settings.yaml"
    settings.write_text("prices:\n  currency: EUR\n  per_gpu_hour:\n    '*': 2.0\n")
    registry = tmp_path / "clusters.yaml"
    registry.write_text(
        "clusters:\n  - name: demo\n    metrics_url: http://127.0.0.1:9/metrics\n"
        f"    allowed_channels: [{CHANNEL}]\n"
    )
    bot, server = start_bot(
        slack_api,
        load_registry(registry),
        {"HAMI_SUMMARY_SETTINGS": str(settings)},
        store=store,
    )
    try:
        _keep_history(store)
        bot.sender.command("demo gpu-hours since=1h", response_url=bot.api.response_url("c"))
        answer = html.unescape(blocks_text(_message_with(bot, None, "GPU-hours").blocks))
        listing = _uploaded(bot, "hami-gpu-hours.csv")
    finally:
        stop_bot(bot, server)
    flat = " ".join(answer.split())
    assert "cost: in EUR, at the settings file's price per GPU-hour" in flat, answer
    assert listing.content is not None
    rows = csv_rows(listing.content.decode())
    namespaces = [row for row in rows if row["scope"] == "namespace"]
    assert namespaces
    for row in namespaces:
        assert float(row["cost"]) == pytest.approx(2.0 * float(row["gpu_hours"]), abs=1e-3)
        assert row["currency"] == "EUR"
    models = {row["model"] for row in rows if row["scope"] == "model"}
    assert len(models) > 1


def test_a_week_of_history_is_counted_past_the_recent_snapshots(
    running: RunningBot, store: RedisStore
) -> None:
    """Seven days of snapshots every hour: the full history keeps 48 and one a day, the
    usage records keep every one, so the week is counted without a gap."""
    now = time.time()
    states = [simulate_cluster(8, 4, seed=6)]
    for _ in range(3):
        states.append(drift_cluster(states[-1], steps=3))
    snapshots = [
        snapshot_of(summarize_text(render_exposition(c), SourceInfo(kind="file", label="x")), 0)
        for c in states
    ]
    history = SnapshotHistory(store)
    points = []
    for step in range(7 * 24, -1, -1):
        taken_at = now - step * 3600
        index = (step // 6) % len(states)  # a change every six hours
        assert history.record(
            "demo", None, dataclasses.replace(snapshots[index], taken_at=taken_at)
        )
        points.append((taken_at, states[index]))
    assert len(history.times("demo")) < 60
    running.sender.command("demo gpu-hours since=7d", response_url=running.api.response_url("w"))
    answer = html.unescape(blocks_text(_message_with(running, None, "GPU-hours").blocks))
    asked = time.time()
    flat = " ".join(answer.split())
    assert "(7.0 days); covered 7.0 days by 168 snapshots" in flat, answer
    assert "Not counted" not in flat
    expected = _hours(points, asked - 7 * 86_400, asked)
    got = _csv_hours(running)
    assert got.keys() == {ns for ns, h in expected.items() if h > 0}
    for namespace, hours in got.items():
        assert hours == pytest.approx(expected[namespace], abs=0.05), namespace


def test_gpu_hours_of_a_cluster_not_allowed_here_show_nothing_of_it(
    running: RunningBot, store: RedisStore
) -> None:
    _keep_history(store)  # kept, yet not for this channel
    response = running.sender.command(
        "demo gpu-hours since=1h",
        response_url=running.api.response_url("elsewhere"),
        channel="C0ELSEWHERE",
    )
    assert response.status == 200
    text = blocks_text(response.json()["blocks"])
    assert "'demo' is not a cluster you may query here" in text
    assert "GPU-hours" not in text
    time.sleep(0.5)  # an answer in the background would have uploaded its CSV by now
    assert _csv_files(running) == []


def test_idle_allocated_hours_appear_once_snapshots_carry_runtime_data(
    running: RunningBot, store: RedisStore
) -> None:
    # The history of a cluster sampled with its vGPU monitors: every second pod idle.
    now = time.time()
    cluster = simulate_cluster(8, 4, seed=6)
    pods = sorted({(a.namespace, a.pod) for a in cluster.allocations})
    idle = set(pods[::2])
    history = SnapshotHistory(store)
    for n in range(6):
        summary = summarize_text(
            render_exposition(cluster),
            SourceInfo(kind="file", label="x"),
            monitor_texts=[monitor_exposition(cluster, idle)],
        )
        assert history.record("demo", None, snapshot_of(summary, now - EVERY * (5 - n)))
    running.sender.command("demo gpu-hours since=1h", response_url=running.api.response_url("i"))
    answer = html.unescape(blocks_text(_message_with(running, None, "GPU-hours").blocks))
    header = next(line for line in answer.splitlines() if line.startswith("namespace"))
    assert "idle" in header.split()
    flat = " ".join(answer.split())
    assert "idle: of a namespace's GPU-hours while runtime data was kept (50 min of the" in flat
    rows = [r for r in csv_rows(_csv_files_text(running)) if r["scope"] == "namespace"]
    idle_cores: dict[str, float] = defaultdict(float)
    for a in cluster.allocations:
        if (a.namespace, a.pod) in idle:
            idle_cores[a.namespace] += a.cores
    for row in rows:
        # The same allocation for 50 minutes of runtime data, until the ask: 5/6 h and a little.
        hours = idle_cores[row["namespace"]] / 100 * 3000 / 3600
        assert float(row["idle_gpu_hours"]) == pytest.approx(hours, rel=0.01), row["namespace"]


def _csv_files_text(bot: RunningBot) -> str:
    _uploaded(bot, "hami-gpu-hours.csv")
    [listing] = _csv_files(bot)
    assert listing.content is not None
    text: str = listing.content.decode()
    return text
