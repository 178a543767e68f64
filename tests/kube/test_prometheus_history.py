"""History of a Prometheus-sourced cluster, read back with range queries from a local HTTP
server that plays Prometheus's ``/api/v1/query`` and ``/api/v1/query_range``.

The expected states come from the simulator's ground truth of each scrape, never from the bot.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.clusters.errors import CollectionError
from bot.clusters.prometheus_history import PrometheusHistory, usage_step
from bot.clusters.registry import ClusterEntry, load_registry
from bot.conversation.clusters import LiveRequest
from bot.live import RegistryLiveSource
from bot.store.redis_store import RedisStore
from core.api import summarize_text
from core.history.gpu_hours import default_max_gap, usage_report
from core.history.snapshot import snapshot_of
from core.model import SourceInfo
from core.settings import History, Settings
from core.simulate import render_exposition
from tests.core.history_support import pods_of
from tests.kube.fake_http import http_server
from tests.kube.prometheus_timeline import Timeline, drifting_timeline
from tests.support.redis_topologies import redis_client


def _entry(url: str) -> ClusterEntry:
    return ClusterEntry(
        name="prod",
        display_name="Production",
        source_kind="prometheus",
        prometheus_url=url,
        prometheus_selector='cluster="prod"',
    )


def _pods(snapshot_pods: object) -> dict[tuple[str, str], tuple[int, int, int]]:
    return {
        (p.namespace, p.pod): (p.gpus, round(p.cores), round(p.mem_mib))
        for p in snapshot_pods  # type: ignore[attr-defined]
    }


@pytest.fixture
def timeline() -> Timeline:
    return drifting_timeline(time.time() - 30)


@pytest.fixture
def prometheus(timeline: Timeline) -> Iterator[str]:
    with http_server(timeline.state) as url:
        yield url


def test_the_state_of_two_hours_ago_is_the_scrape_of_then(
    timeline: Timeline, prometheus: str
) -> None:
    moment = time.time() - 7200
    snapshot = PrometheusHistory(_entry(prometheus)).at_or_before(moment)
    scraped_at, truth = timeline.at_or_before(moment)
    assert snapshot.taken_at == pytest.approx(moment, abs=0.01)
    assert snapshot.cluster == "prod"
    assert _pods(snapshot.pods) == pods_of(truth)  # nothing of cluster "other" either
    assert moment - scraped_at < 600
    query, start, end, _ = timeline.state.range_queries[0]
    assert query.endswith(',cluster="prod"}') and start == end == pytest.approx(moment, abs=0.01)


def test_before_the_retention_the_oldest_state_is_used(timeline: Timeline, prometheus: str) -> None:
    oldest = min(timeline.truth)
    moment = oldest - 3 * 86_400
    snapshot = PrometheusHistory(_entry(prometheus)).at_or_before(moment)
    # Found by a one-series count over the span, then fetched at its first time with data.
    assert any(q.startswith("count(") for q, *_ in timeline.state.range_queries)
    # The search samples the span: it lands on one of the first scrapes Prometheus holds,
    # never on a later one (scrapes are 600 s apart; a sample is seen 300 s after it).
    assert oldest <= snapshot.taken_at < oldest + 900
    assert _pods(snapshot.pods) == pods_of(timeline.at_or_before(snapshot.taken_at)[1])


def test_no_data_at_all_says_so_and_what_to_do(prometheus: str) -> None:
    entry = ClusterEntry(
        name="lab",
        display_name="lab",
        source_kind="prometheus",
        prometheus_url=prometheus,
        prometheus_selector='cluster="lab"',
    )
    with pytest.raises(CollectionError) as caught:
        PrometheusHistory(entry).at_or_before(time.time() - 3600)
    message = caught.value.message
    assert message.startswith(
        f'Prometheus at {prometheus} has no HAMi scheduler series matching {{cluster="lab"}} '
        "between "
    )
    assert "ask for a shorter span (since=1h)" in message


def test_the_trend_holds_the_recent_and_daily_tiers_within_the_sample_budget(
    timeline: Timeline, prometheus: str
) -> None:
    settings = Settings(history=History(recent_snapshots=12, min_spacing_minutes=10.0))
    history = PrometheusHistory(_entry(prometheus), settings=settings)
    snapshots = history.snapshots()
    times = [s.taken_at for s in snapshots]
    assert times == sorted(times) and len(times) == 12  # the recent tier (daily: no data)
    assert all(b - a == pytest.approx(600.0) for a, b in itertools.pairwise(times))
    for snapshot in snapshots:
        _, truth = timeline.at_or_before(snapshot.taken_at)
        assert _pods(snapshot.pods) == pods_of(truth)
    # A large cluster asks for fewer points over the same window.
    timeline.state.range_queries.clear()
    history.snapshots(series_hint=200_000)
    points = [
        round((end - start) / step) + 1 for _, start, end, step in timeline.state.range_queries
    ]
    assert max(points) == 5  # 1,000,000 samples / 200,000 series


@pytest.fixture
def kv(redis_url: str, redis_key_prefix: str) -> Iterator[RedisStore]:
    store = RedisStore(redis_url, redis_key_prefix)
    yield store
    store.close()


def test_a_prometheus_cluster_keeps_no_history_of_its_own(
    timeline: Timeline,
    prometheus: str,
    kv: RedisStore,
    redis_url: str,
    redis_key_prefix: str,
    tmp_path: Path,
) -> None:
    registry = tmp_path / "clusters.yaml"
    registry.write_text(
        "clusters:\n  - name: prod\n"
        f"    prometheus_url: {prometheus}\n"
        "    prometheus_selector: 'cluster=\"prod\"'\n"
    )
    source = RegistryLiveSource(load_registry(registry), kv)
    request = LiveRequest("prod", None, user=None, channel=None)
    now = source.summarize(request)
    assert now.summary.cluster.pods == len(pods_of(timeline.at_or_before(time.time())[1]))
    before = source.snapshot_before(request, time.time() - 3600)
    assert before is not None
    assert _pods(before.pods) == pods_of(timeline.at_or_before(time.time() - 3600)[1])
    client = redis_client(redis_url)
    try:
        assert list(client.scan_iter(match=f"{redis_key_prefix}:*history*")) == []
    finally:
        client.close()


def test_a_usage_report_reads_a_step_chosen_from_its_span() -> None:
    spacing = 600.0  # the stored history's
    assert usage_step(7200, spacing) == 600  # short spans: the history's own spacing
    assert usage_step(86_400, spacing) == 600  # 145 points
    assert usage_step(7 * 86_400, spacing) == 3600  # 169 points
    assert usage_step(30 * 86_400, spacing) == 14_400  # 181 points
    assert usage_step(7200, 60.0) == 60


def _aligned_timeline() -> Timeline:
    return drifting_timeline(math.floor(time.time() / 600) * 600)


def test_prometheus_usage_equals_the_snapshot_route_over_the_same_states() -> None:
    timeline = _aligned_timeline()
    newest = max(timeline.truth)
    since, until = newest - 7200 - 120, newest + 200  # neither end on a scrape
    with http_server(timeline.state) as url:
        states, step = PrometheusHistory(_entry(url)).usage_snapshots(since, until)
    assert step == 600
    # The first point at or before the start, then every step: the scrapes of then.
    assert [s.taken_at for s in states] == [newest - 600 * n for n in range(13, -1, -1)]
    kept = [
        snapshot_of(summarize_text(render_exposition(c), SourceInfo(kind="file", label="x")), t)
        for t, c in sorted(timeline.truth.items())
    ]
    from_prometheus = usage_report(states, since=since, until=until, max_gap_seconds=900)
    from_kept = usage_report(kept, since=since, until=until, max_gap_seconds=default_max_gap(kept))
    assert from_prometheus.gaps == from_kept.gaps == ()
    assert from_prometheus.namespaces == from_kept.namespaces
    assert from_prometheus.capacity_gpu_hours == from_kept.capacity_gpu_hours


def test_a_large_cluster_is_read_in_queries_within_the_sample_budget() -> None:
    timeline = _aligned_timeline()
    newest = max(timeline.truth)
    with http_server(timeline.state) as url:
        history = PrometheusHistory(_entry(url))
        states, _ = history.usage_snapshots(newest - 6 * 3600, newest)
        assert len(states) == 37
        unsized = [round((e - s) / step) + 1 for _, s, e, step in timeline.state.range_queries]
        # One point first; its size (a few hundred series) then allows the rest in one query.
        assert unsized == [1, 36]
        timeline.state.range_queries.clear()
        states, _ = history.usage_snapshots(newest - 6 * 3600, newest, series_hint=200_000)
        points = [round((e - s) / step) + 1 for _, s, e, step in timeline.state.range_queries]
        assert len(states) == 37 and max(points) == 5 and sum(points) == 37
