"""``changes`` between two drifted collections, asked through Slack, lists exactly the
differences this test computes from the simulator's ground truth.

Two sources of history, both real: a metrics-URL cluster whose snapshots the bot keeps in a
real Redis, and a Prometheus-sourced cluster whose past is read back with range queries from a
local server playing Prometheus's HTTP API (and which therefore keeps nothing in Redis).
"""

from __future__ import annotations

import csv
import html
import io
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.clusters.registry import load_registry
from bot.store.redis_store import RedisStore
from core.simulate import SimulatedCluster, drift_cluster, render_exposition, simulate_cluster
from core.views.changes_view import signed
from core.views.tables import short_type
from tests.core.history_support import free_whole_per_model, pods_of
from tests.kube.fake_http import http_server
from tests.kube.prometheus_timeline import Timeline, drifting_timeline
from tests.slack.conftest import CHANNEL, MetricsServer, RunningBot, start_bot, stop_bot
from tests.slack.test_changes_e2e import _message_with, _uploaded
from tests.slack.test_http_e2e import blocks_text
from tests.support.redis_topologies import redis_client
from tests.support.slack_api import SlackWebApi


def _namespaces(cluster: SimulatedCluster) -> dict[str, tuple[int, int, int]]:
    """namespace -> (cores, MiB, GPUs touched), from the allocations."""
    held: dict[str, tuple[int, int, set[str]]] = {}
    for a in cluster.allocations:
        cores, mem, gpus = held.get(a.namespace, (0, 0, set()))
        held[a.namespace] = (cores + a.cores, mem + a.mem_mib, gpus | {a.device_uuid})
    return {ns: (c, m, len(g)) for ns, (c, m, g) in held.items()}


def _expected(before: SimulatedCluster, after: SimulatedCluster) -> dict[str, object]:
    old, new = pods_of(before), pods_of(after)
    old_ns, new_ns = _namespaces(before), _namespaces(after)
    zero = (0, 0, 0)
    return {
        "started": sorted(new.keys() - old.keys()),
        "stopped": sorted(old.keys() - new.keys()),
        "namespaces": {
            ns: (old_ns.get(ns, zero), new_ns.get(ns, zero))
            for ns in old_ns.keys() | new_ns.keys()
            if old_ns.get(ns, zero) != new_ns.get(ns, zero)
        },
        "free": (free_whole_per_model(before), free_whole_per_model(after)),
    }


def _check_answer(bot: RunningBot, cluster: str, expected: dict[str, object]) -> str:
    # As Slack shows it: the entities the bot's encoding wrote (-&gt;) read as characters.
    answer = html.unescape(
        blocks_text(_message_with(bot, None, f"Changes in cluster {cluster}").blocks)
    )
    started, stopped = expected["started"], expected["stopped"]
    assert isinstance(started, list) and isinstance(stopped, list)
    assert started and stopped
    assert f"Started holding GPUs: {len(started)} pod(s)" in answer
    assert f"Stopped holding GPUs: {len(stopped)} pod(s)" in answer
    namespaces = expected["namespaces"]
    assert isinstance(namespaces, dict)
    assert f"Namespaces that grew or shrank: {len(namespaces)}" in answer
    shown = 0
    for ns, ((cores_then, _, gpus_then), (cores_now, _, gpus_now)) in namespaces.items():
        # Slack's 72 columns: each figure now and its change.
        row = re.search(
            rf"^  {re.escape(ns)} +(\S+) \(([^)]+)\) .* (\d+) \(([^)]+)\)$", answer, re.M
        )
        if row is not None:  # the largest five are shown; every one is counted above
            shown += 1
            assert row.groups() == (
                f"{cores_now:,}",
                signed(cores_now - cores_then),
                str(gpus_now),
                signed(gpus_now - gpus_then),
            )
    assert shown == min(5, len(namespaces))
    free_then, free_now = expected["free"]  # type: ignore[misc]
    for model in free_then.keys() | free_now.keys():
        then, now = free_then.get(model, 0), free_now.get(model, 0)
        assert re.search(rf"^  {re.escape(short_type(model))} +{then} -> {now}\b", answer, re.M)
    listing = _uploaded(bot, "hami-changes-pods.csv")
    assert listing.content is not None
    rows = list(csv.reader(io.StringIO(listing.content.decode())))[1:]
    assert sorted((ns, pod) for change, ns, pod, *_ in rows if change == "started") == started
    assert sorted((ns, pod) for change, ns, pod, *_ in rows if change == "stopped") == stopped
    assert _uploaded(bot, "hami-trend.png").content[:4] == b"\x89PNG"  # type: ignore[index]
    return answer


@pytest.fixture
def store(redis_url: str, redis_key_prefix: str) -> Iterator[RedisStore]:
    kv = RedisStore(redis_url, redis_key_prefix)
    yield kv
    kv.close()


@pytest.fixture
def timeline() -> Timeline:
    return drifting_timeline(time.time() - 30)


@pytest.fixture
def running(
    slack_api: SlackWebApi, store: RedisStore, timeline: Timeline, tmp_path: Path
) -> Iterator[tuple[RunningBot, MetricsServer]]:
    exporter = MetricsServer(render_exposition(simulate_cluster(8, 4, seed=6)))
    settings = tmp_path / "settings.yaml"
    settings.write_text("history:\n  min_spacing_minutes: 0.01\n")
    with http_server(timeline.state) as prometheus:
        registry = tmp_path / "clusters.yaml"
        registry.write_text(
            "clusters:\n"
            "  - name: demo\n"
            f"    metrics_url: {exporter.url}\n"
            f"    allowed_channels: [{CHANNEL}]\n"
            "    cache_ttl_seconds: 0\n"
            "  - name: prom\n"
            f"    prometheus_url: {prometheus}\n"
            "    prometheus_selector: 'cluster=\"prod\"'\n"
            f"    allowed_channels: [{CHANNEL}]\n"
        )
        bot, server = start_bot(
            slack_api,
            load_registry(registry),
            {"HAMI_SUMMARY_SETTINGS": str(settings)},
            store=store,
        )
        try:
            yield bot, exporter
        finally:
            stop_bot(bot, server)
            exporter.stop()


def test_changes_of_two_drifted_collections_kept_in_redis(
    running: tuple[RunningBot, MetricsServer], redis_url: str, redis_key_prefix: str
) -> None:
    bot, exporter = running
    before = simulate_cluster(8, 4, seed=6)
    after = drift_cluster(before, steps=30)
    exporter.text = render_exposition(before)
    bot.sender.command("demo", response_url=bot.api.response_url("first"))
    _message_with(bot, None, "HAMi GPU allocation: demo")
    time.sleep(1.0)  # more than the 0.6 s spacing of this test's history settings
    exporter.text = render_exposition(after)
    bot.sender.command("demo changes since=1h", response_url=bot.api.response_url("changes"))
    answer = _check_answer(bot, "demo", _expected(before, after))
    assert "the oldest snapshot kept, you asked for 60 min" in answer
    client = redis_client(redis_url)
    try:  # both collections were kept, as compressed snapshots with a TTL
        keys = list(client.scan_iter(match=f"{redis_key_prefix}:history:demo:*"))
        assert len(keys) == 2 and all(client.ttl(key) > 0 for key in keys)
    finally:
        client.close()


def test_changes_of_a_prometheus_cluster_come_from_range_queries(
    running: tuple[RunningBot, MetricsServer],
    timeline: Timeline,
    redis_url: str,
    redis_key_prefix: str,
) -> None:
    bot, _ = running
    bot.sender.command("prom changes since=2h", response_url=bot.api.response_url("prom"))
    asked_at = time.time()
    _, now = timeline.at_or_before(asked_at)
    _, then = timeline.at_or_before(asked_at - 7200)
    _check_answer(bot, "prom", _expected(then, now))
    range_queries = timeline.state.range_queries
    assert range_queries and all('cluster="prod"' in q for q, *_ in range_queries)
    client = redis_client(redis_url)
    try:
        assert list(client.scan_iter(match=f"{redis_key_prefix}:*history*prom*")) == []
    finally:
        client.close()
