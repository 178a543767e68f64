"""Summary history on a real Redis: bounded, with TTLs, one writer per moment, never fatal."""

from __future__ import annotations

import dataclasses
import random
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from bot.clusters.registry import load_registry
from bot.conversation.clusters import LiveRequest
from bot.live import RegistryLiveSource
from bot.store.history import SnapshotHistory
from bot.store.memory import MemoryStore
from bot.store.redis_store import RedisStore
from core.history.gpu_hours import usage_report
from core.history.retention import horizon_seconds, kept_times
from core.history.snapshot import Snapshot
from core.settings import History
from core.simulate import simulate_cluster
from tests.core.history_support import snapshot_at
from tests.store.collected import CountingExporter, counting_exporter
from tests.support.redis_server import free_port
from tests.support.redis_topologies import redis_client

START = 1_767_225_600.0  # 2026-01-01 00:00 UTC


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def kv(redis_url: str, redis_key_prefix: str) -> Iterator[RedisStore]:
    store = RedisStore(redis_url, redis_key_prefix)
    yield store
    store.close()


@pytest.fixture
def client(redis_url: str) -> Iterator[redis.Redis]:
    connection = redis_client(redis_url)
    yield connection
    connection.close()


def _history_keys(client: redis.Redis, prefix: str) -> list[bytes]:
    return sorted(client.scan_iter(match=f"{prefix}:history:*", count=1000))


@pytest.fixture(scope="module")
def states() -> list[Snapshot]:
    """A few distinct cluster states to record over and over at different times."""
    return [snapshot_at(simulate_cluster(4, 2, seed=9, t=step), 0.0) for step in (0, 3, 6)]


@pytest.mark.slow
def test_sixteen_days_of_collections_stay_within_bounds(
    kv: RedisStore, client: redis.Redis, redis_key_prefix: str, states: list[Snapshot]
) -> None:
    policy = History()
    clock = Clock(START)
    history = SnapshotHistory(kv, policy=policy, clock=clock)
    rng = random.Random(2)
    recorded: list[float] = []
    for step in range(16 * 24 * 4):  # every 15 minutes or so for 16 days
        clock.now += rng.uniform(300, 1500)
        snapshot = dataclasses.replace(states[step % len(states)], taken_at=clock.now)
        if history.wants("gpu-prod", "ctx-a", clock.now):
            assert history.record("gpu-prod", "ctx-a", snapshot)
            recorded.append(clock.now)
        times = history.times("gpu-prod", "ctx-a")
        assert len(times) <= policy.recent_snapshots + policy.daily_days
        if step % 97 == 0:
            assert len(_history_keys(client, redis_key_prefix)) == len(times)
    times = history.times("gpu-prod", "ctx-a")
    # Exactly what the pure policy keeps of everything recorded, and nothing else in Redis.
    assert times == kept_times(recorded, clock.now, policy)
    keys = _history_keys(client, redis_key_prefix)
    assert len(keys) == len(times) == policy.recent_snapshots + policy.daily_days - 1
    for key in keys:
        ttl_ms = client.pttl(key)
        assert 0 < ttl_ms <= horizon_seconds(policy) * 1000
    assert client.pttl(f"{redis_key_prefix}:{history.index_key('gpu-prod', 'ctx-a')}") > 0
    oldest = history.snapshots("gpu-prod", "ctx-a")[0]
    assert oldest.taken_at == min(times)
    assert oldest.pods in [state.pods for state in states]
    # Every recorded time stays for GPU-hours, in one key per day with the usage TTL.
    usage = history.usage_snapshots("gpu-prod", "ctx-a", START, clock.now)
    assert [u.taken_at for u in usage] == recorded
    usage_keys = list(client.scan_iter(match=f"{redis_key_prefix}:usage:*", count=1000))
    assert len(usage_keys) == len({int(t // 86_400) for t in recorded})
    for key in usage_keys:
        assert 0 < client.pttl(key) <= (policy.usage_days + 1) * 86_400 * 1000


def test_at_or_before_picks_the_right_snapshot_and_skips_unreadable_ones(
    kv: RedisStore, states: list[Snapshot]
) -> None:
    clock = Clock(START)
    history = SnapshotHistory(kv, policy=History(min_spacing_minutes=10), clock=clock)
    for hours, state in zip((0, 1, 2), states, strict=True):
        clock.now = START + hours * 3600
        assert history.record("c1", None, dataclasses.replace(state, taken_at=clock.now))
    assert history.times("c1") == [START + 7200, START + 3600, START]
    found = history.at_or_before("c1", None, START + 3600 + 5)
    assert found is not None and found.taken_at == START + 3600
    assert found.pods == states[1].pods
    kv.put(history.snapshot_key("c1", None, START + 3600), b"not a snapshot", 60)
    found = history.at_or_before("c1", None, START + 3600 + 5)
    assert found is not None and found.taken_at == START
    # Before the history begins: the oldest kept one, which the caller labels as such.
    earliest = history.at_or_before("c1", None, START - 86_400)
    assert earliest is not None and earliest.taken_at == START
    assert history.at_or_before("unknown", None, START) is None
    assert [s.taken_at for s in history.snapshots("c1")] == [START, START + 7200]


def test_two_replicas_finishing_together_write_one_snapshot(
    redis_url: str, redis_key_prefix: str, client: redis.Redis, states: list[Snapshot]
) -> None:
    replicas = [RedisStore(redis_url, redis_key_prefix) for _ in range(2)]
    try:
        histories = [SnapshotHistory(store, clock=Clock(START)) for store in replicas]
        barrier = threading.Barrier(2)
        results: list[bool] = []

        def record(history: SnapshotHistory, taken_at: float) -> None:
            barrier.wait()
            results.append(
                history.record("c2", None, dataclasses.replace(states[0], taken_at=taken_at))
            )

        threads = [
            threading.Thread(target=record, args=(h, START + i)) for i, h in enumerate(histories)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(results) == [False, True]
        assert len(histories[0].times("c2")) == 1
        assert len(_history_keys(client, redis_key_prefix)) == 1
    finally:
        for store in replicas:
            store.close()


def _registry(tmp_path: Path, url: str) -> Path:
    path = tmp_path / "clusters.yaml"
    path.write_text(f"clusters:\n  - name: gpu-prod\n    metrics_url: {url}\n")
    return path


@pytest.fixture
def exporter() -> Iterator[CountingExporter]:
    with counting_exporter() as running:
        yield running


def test_a_live_answer_records_history_once_per_spacing(
    kv: RedisStore, exporter: CountingExporter, tmp_path: Path
) -> None:
    registry = load_registry(_registry(tmp_path, exporter.url))
    source = RegistryLiveSource(registry, kv)
    request = LiveRequest("gpu-prod", None, user=None, channel=None, namespace="team-a")
    result = source.summarize(request)
    assert result.summary.filters  # the answer is filtered, the snapshot is not
    times = source.history.times("gpu-prod")
    assert len(times) == 1
    snapshot = source.history.load("gpu-prod", None, times[0])
    assert snapshot is not None and snapshot.cluster == "gpu-prod"
    assert snapshot.totals.gpus == 6 and len(snapshot.namespaces) > 1
    source.summarize(LiveRequest("gpu-prod", None, user=None, channel=None, fresh=True))
    assert exporter.scrapes == 2
    assert source.history.times("gpu-prod") == times  # ten minutes have not passed


def test_history_failing_never_costs_the_answer(
    exporter: CountingExporter, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    registry = load_registry(_registry(tmp_path, exporter.url))
    unreachable = RedisStore(f"redis://127.0.0.1:{free_port()}/0", "nowhere")
    try:
        source = RegistryLiveSource(registry, MemoryStore(), history=SnapshotHistory(unreachable))
        result = source.summarize(LiveRequest("gpu-prod", None, user=None, channel=None))
    finally:
        unreachable.close()
    assert result.summary.cluster.gpus == 6
    assert (
        "could not record the history of cluster gpu-prod: Redis does not answer (GET: "
        in caplog.text
    )


def test_gpu_hours_over_two_days_count_every_recorded_snapshot(
    kv: RedisStore, states: list[Snapshot]
) -> None:
    clock = Clock(START)
    history = SnapshotHistory(kv, policy=History(), clock=clock)
    expected = 0.0
    for step in range(2 * 144):  # every 10 minutes for two days
        clock.now = START + step * 600
        state = states[step % len(states)]
        assert history.record("c1", None, dataclasses.replace(state, taken_at=clock.now))
        if step < 2 * 144 - 1:
            expected += state.totals.core_allocated / 100 * 600 / 3600
    until = clock.now
    kept = history.snapshots("c1")
    assert len(kept) < 60  # the full snapshots: 48 recent and one a day
    usage = history.usage_snapshots("c1", None, START, until, kept)
    assert len(usage) == 2 * 144
    report = usage_report(usage, since=START, until=until, max_gap_seconds=900)
    assert report.gaps == () and report.covered_seconds == until - START
    assert report.allocated_gpu_hours == pytest.approx(expected, rel=1e-9)
    # The one before the start holds into the period; the pods come from the recent part.
    later = history.usage_snapshots("c1", None, START + 900, until, kept)
    assert later[0].taken_at == START + 600
    biggest = report.namespaces[0].namespace
    with_pods = usage_report(
        usage,
        since=START,
        until=until,
        max_gap_seconds=900,
        namespace=biggest,
        pod_snapshots=kept,
    )
    assert with_pods.pods and with_pods.pods_covered_seconds == pytest.approx(47 * 600)
    # An unreadable day is skipped, not fatal.
    kv.put(history.usage_key("c1", None, int(START // 86_400)), b"junk", 60)
    assert len(history.usage_snapshots("c1", None, START, until, kept)) < 2 * 144
