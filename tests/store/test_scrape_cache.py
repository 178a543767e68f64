"""ScrapeCache (cluster collections in the store's single-flight cache) on a real Redis: hits,
expiry, versions, single-flight, dead lock holders."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.clusters.collect import CollectedMetrics
from bot.clusters.errors import ClusterError, CollectionError
from bot.clusters.scrape_cache import ScrapeCache, ScrapeFailedError
from bot.ops.metrics import METRICS
from bot.store import codec
from bot.store.redis_store import RedisStore
from bot.store.resilient import ResilientStore
from tests.store.collected import CountingExporter, collect_from, collected, counting_exporter
from tests.support.redis_server import RedisServerProcess

REPO = Path(__file__).resolve().parents[2]
WAITED_OUT = "collecting without the lock"  # logged when a waiter gives up on another's lock


@pytest.fixture
def kv(redis_url: str, redis_key_prefix: str) -> Iterator[RedisStore]:
    store = RedisStore(redis_url, redis_key_prefix)
    yield store
    store.close()


@pytest.fixture
def exporter() -> Iterator[CountingExporter]:
    with counting_exporter() as running:
        yield running


def _cache(
    kv: RedisStore | ResilientStore,
    *,
    wait_seconds: float = 30.0,
    failure_ttl_seconds: float = 10.0,
) -> ScrapeCache:
    return ScrapeCache(
        kv,
        wait_seconds=wait_seconds,
        failure_ttl_seconds=failure_ttl_seconds,
    )


def test_hit_then_expiry(kv: RedisStore, exporter: CountingExporter) -> None:
    # Ages come from the cache's clock, stepped here: no sleeping, no race with a loaded machine.
    now = [1_000_000.0]
    cache = ScrapeCache(kv, clock=lambda: now[0])
    hits_before = METRICS.value("hami_summary_cache_requests_total", {"result": "hit"})

    first, first_age = cache.get_or_collect(
        "gpu-prod", "ctx-a", lambda: collect_from(exporter.url), 30
    )
    assert first_age == 0.0
    assert "# scrape 1" in first.text
    now[0] += 20
    second, second_age = cache.get_or_collect(
        "gpu-prod", "ctx-a", lambda: collect_from(exporter.url), 30
    )
    assert second == first  # the whole dataclass survived compression and the round trip
    assert second_age == 20
    assert exporter.scrapes == 1
    assert METRICS.value("hami_summary_cache_requests_total", {"result": "hit"}) == hits_before + 1

    now[0] += 11  # 31 s old: past the 30 s TTL
    third, third_age = cache.get_or_collect(
        "gpu-prod", "ctx-a", lambda: collect_from(exporter.url), 30
    )
    assert exporter.scrapes == 2
    assert "# scrape 2" in third.text and third_age == 0.0


def test_entries_are_compressed_versioned_and_expire(
    kv: RedisStore, exporter: CountingExporter
) -> None:
    cache = _cache(kv)
    metrics, _ = cache.get_or_collect("gpu-prod", "ctx-a", lambda: collect_from(exporter.url), 30)
    raw = kv.get(cache.entry_key("gpu-prod", "ctx-a"))
    assert raw is not None and raw.startswith(b"hs\x01")
    assert len(raw) < len(metrics.text) / 3  # zlib: metrics text compresses well
    remaining = kv.ttl_seconds(cache.entry_key("gpu-prod", "ctx-a"))
    assert remaining is not None and 25 < remaining <= 30
    # The lock was released.
    assert kv.get(cache.lock_key("gpu-prod", "ctx-a")) is None


def test_contexts_and_clusters_are_cached_apart(kv: RedisStore, exporter: CountingExporter) -> None:
    cache = _cache(kv)
    for cluster, context in [("a", "x"), ("a", "y"), ("a", None), ("b", "x"), ("a:x", None)]:
        cache.get_or_collect(cluster, context, lambda: collect_from(exporter.url), 30)
    assert exporter.scrapes == 5
    cache.get_or_collect("a", None, lambda: collect_from(exporter.url), 30)
    assert exporter.scrapes == 5


@pytest.mark.parametrize(
    "stored",
    [
        b"hs\x02\x06scrapez" + b"\x78\x9c" + b"from a future release",  # unknown version
        codec.encode("thread", {"stored_at": time.time(), "value": {}, "error": None}),
        b"pickle\x80\x04 or any other old format",
        codec.encode("scrape", {"stored_at": "yesterday", "value": {"x": 1}}),
    ],
    ids=["future-version", "other-kind", "foreign-bytes", "bad-fields"],
)
def test_unreadable_entries_are_a_miss(
    kv: RedisStore, exporter: CountingExporter, stored: bytes
) -> None:
    cache = _cache(kv)
    kv.put(cache.entry_key("gpu-prod", "ctx-a"), stored, 30)
    metrics, age = cache.get_or_collect("gpu-prod", "ctx-a", lambda: collect_from(exporter.url), 30)
    assert exporter.scrapes == 1 and age == 0.0
    assert "# scrape 1" in metrics.text


def test_fresh_bypasses_the_cache_but_single_flights(kv: RedisStore) -> None:
    with counting_exporter(delay_seconds=0.4) as slow:
        cache = _cache(kv)
        cache.get_or_collect("gpu-prod", "ctx-a", lambda: collect_from(slow.url), 60)
        assert slow.scrapes == 1

        results: list[tuple[CollectedMetrics, float]] = []

        def refresh() -> None:
            results.append(
                cache.get_or_collect(
                    "gpu-prod", "ctx-a", lambda: collect_from(slow.url), 60, fresh=True
                )
            )

        threads = [threading.Thread(target=refresh) for _ in range(10)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert slow.scrapes == 2  # ten Refresh clicks, one new scrape
        assert {m.text for m, _ in results} == {results[0][0].text}
        assert "# scrape 2" in results[0][0].text


def _start_burst(
    redis_url: str, prefix: str, exporter_url: str, threads: int, start_at: float
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.store.scrape_worker",
            "burst",
            redis_url,
            prefix,
            exporter_url,
            str(threads),
            str(start_at),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


@pytest.mark.slow
def test_fifty_requests_from_two_processes_cause_one_scrape(
    redis_url: str, redis_key_prefix: str
) -> None:
    with counting_exporter(delay_seconds=0.5) as slow:
        start_at = time.time() + 2.0  # both processes import and connect first
        workers = [
            _start_burst(redis_url, redis_key_prefix, slow.url, 25, start_at) for _ in range(2)
        ]
        answers = []
        errors = []
        for worker in workers:
            out, err = worker.communicate(timeout=60)
            assert worker.returncode == 0, err
            answers += [json.loads(line) for line in out.splitlines()]
            errors.append(err)
        assert len(answers) == 50
        assert slow.scrapes == 1, errors
        assert {a["text"] for a in answers} == {answers[0]["text"]}
        assert "# scrape 1" in answers[0]["text"]
        # Exactly one request collected (age 0); the other 49 reused its result.
        assert sum(1 for a in answers if a["age"] == 0.0) == 1


@pytest.mark.slow
def test_lock_of_a_killed_holder_expires(
    redis_url: str,
    redis_key_prefix: str,
    kv: RedisStore,
    exporter: CountingExporter,
    caplog: pytest.LogCaptureFixture,
) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.store.scrape_worker",
            "hold",
            redis_url,
            redis_key_prefix,
            "1.5",
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "collecting"
        cache = _cache(kv, wait_seconds=20)
        lock_key = cache.lock_key("gpu-prod", "ctx-a")
        token = kv.get(lock_key)
        assert token is not None
        # Alive, the holder renews its lock past the 1.5 s TTL for as long as it collects.
        time.sleep(3.5)
        assert kv.get(lock_key) == token
        holder.kill()  # SIGKILL: no finally block, no release, no more renewals
        holder.wait(timeout=10)
        metrics, age = cache.get_or_collect(
            "gpu-prod", "ctx-a", lambda: collect_from(exporter.url), 30
        )
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
    assert age == 0.0 and "# scrape 1" in metrics.text
    assert exporter.scrapes == 1
    # The dead holder's lock expired (after 1.5 s) and ours was taken: the 20 s wait never ran
    # out, which would have collected without the lock and said so.
    assert WAITED_OUT not in caplog.text


def test_a_collection_longer_than_the_lock_ttl_keeps_the_lock(
    redis_url: str, redis_key_prefix: str, kv: RedisStore
) -> None:
    holder = ScrapeCache(kv, lock_ttl_seconds=0.6, wait_seconds=30)
    # A second replica: its own connection to the same Redis.
    other_kv = RedisStore(redis_url, redis_key_prefix)
    other = ScrapeCache(other_kv, lock_ttl_seconds=0.6, wait_seconds=30)
    started, finish = threading.Event(), threading.Event()
    collections: list[str] = []
    results: dict[str, CollectedMetrics] = {}

    def slow_collect(who: str) -> CollectedMetrics:
        collections.append(who)
        started.set()
        assert finish.wait(30)
        return collected(f"# scrape by {who}\n")

    def ask(who: str, cache: ScrapeCache) -> None:
        results[who], _ = cache.get_or_collect(
            "gpu-prod", "ctx-a", lambda: slow_collect(who), ttl_seconds=60
        )

    first = threading.Thread(target=ask, args=("first", holder))
    first.start()
    try:
        assert started.wait(10)
        lock_key = holder.lock_key("gpu-prod", "ctx-a")
        token = kv.get(lock_key)
        assert token is not None
        time.sleep(2.0)  # more than three lock TTLs
        assert kv.get(lock_key) == token
        remaining = kv.ttl_seconds(lock_key)
        assert remaining is not None and 0 < remaining <= 0.6
        second = threading.Thread(target=ask, args=("second", other))
        second.start()
        time.sleep(1.0)
        assert collections == ["first"]  # the second replica waits instead of scraping
    finally:
        finish.set()
        first.join(30)
    second.join(30)
    other_kv.close()
    assert collections == ["first"]
    assert results["second"].text == results["first"].text == "# scrape by first\n"
    # Released at the end, and no renewal thread revives it.
    assert kv.get(lock_key) is None
    time.sleep(0.5)
    assert kv.get(lock_key) is None


def test_renewals_stop_after_the_longest_hold(kv: RedisStore) -> None:
    cache = ScrapeCache(kv, lock_ttl_seconds=0.3, max_hold_seconds=0.6)
    lock_key = cache.lock_key("gpu-prod", "ctx-a")
    seen: list[bytes | None] = []

    def hung_collection() -> CollectedMetrics:
        seen.append(kv.get(lock_key))
        time.sleep(1.8)  # past the longest hold and one TTL more
        seen.append(kv.get(lock_key))
        return collected("# scrape\n")

    cache.get_or_collect("gpu-prod", "ctx-a", hung_collection, ttl_seconds=60)
    assert seen[0] is not None and seen[1] is None  # the lock was freed for others


def test_a_lock_taken_over_is_not_renewed(kv: RedisStore) -> None:
    cache = ScrapeCache(kv, lock_ttl_seconds=0.3)
    lock_key = cache.lock_key("gpu-prod", "ctx-a")

    def collect_while_taken_over() -> CollectedMetrics:
        # The holder's lock expired (e.g. its store stalled) and another replica took it.
        kv.put(lock_key, b"someone-else", 5)
        time.sleep(0.5)
        return collected("# scrape\n")

    cache.get_or_collect("gpu-prod", "ctx-a", collect_while_taken_over, ttl_seconds=60)
    assert kv.get(lock_key) == b"someone-else"
    remaining = kv.ttl_seconds(lock_key)
    assert remaining is not None and remaining > 4  # never reset to the holder's 0.3 s


def test_bounded_wait_then_own_attempt(
    kv: RedisStore, exporter: CountingExporter, caplog: pytest.LogCaptureFixture
) -> None:
    cache = _cache(kv, wait_seconds=0.3)
    # A holder that is alive but stuck: its lock does not expire within our wait.
    kv.put(cache.lock_key("gpu-prod", "ctx-a"), b"someone-else", 60)
    started = time.monotonic()
    _, age = cache.get_or_collect("gpu-prod", "ctx-a", lambda: collect_from(exporter.url), 30)
    assert time.monotonic() - started >= 0.3  # it waited its whole wait first
    assert WAITED_OUT in caplog.text
    assert exporter.scrapes == 1 and age == 0.0
    # The stuck holder's lock is untouched (we never release a lock that is not ours).
    assert kv.get(cache.lock_key("gpu-prod", "ctx-a")) == b"someone-else"


def test_a_failure_is_shared_with_waiters_not_repeated(kv: RedisStore) -> None:
    cache = _cache(kv, failure_ttl_seconds=5)
    attempts: list[int] = []

    def failing() -> CollectedMetrics:
        attempts.append(1)
        time.sleep(0.3)
        raise CollectionError(
            "Cluster gpu-prod: no HAMi scheduler found "
            "(label app.kubernetes.io/component=hami-scheduler)."
        )

    errors: list[ClusterError] = []

    def ask() -> None:
        try:
            cache.get_or_collect("gpu-prod", "ctx-a", failing, 30)
        except ClusterError as error:
            errors.append(error)

    threads = [threading.Thread(target=ask) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(attempts) == 1
    assert len(errors) == 10
    assert all("no HAMi scheduler found" in e.message for e in errors)
    assert sum(isinstance(e, ScrapeFailedError) for e in errors) == 9

    # A fresh request tries again rather than repeating the old failure.
    metrics_text = "hami_vgpu_count 1\n"
    metrics, _ = cache.get_or_collect(
        "gpu-prod",
        "ctx-a",
        lambda: collected(metrics_text),
        30,
        fresh=True,
    )
    assert metrics.text == metrics_text


def test_a_failed_refresh_keeps_the_good_entry(kv: RedisStore, exporter: CountingExporter) -> None:
    cache = _cache(kv)
    good, _ = cache.get_or_collect("gpu-prod", "ctx-a", lambda: collect_from(exporter.url), 60)

    def failing() -> CollectedMetrics:
        raise CollectionError("Cluster gpu-prod: the API server did not answer within 10 s.")

    with pytest.raises(CollectionError):
        cache.get_or_collect("gpu-prod", "ctx-a", failing, 60, fresh=True)
    again, age = cache.get_or_collect("gpu-prod", "ctx-a", lambda: collect_from(exporter.url), 60)
    assert again == good and age > 0


@pytest.mark.slow
def test_redis_down_still_single_flights_within_the_process(
    private_redis: RedisServerProcess,
) -> None:
    store = ResilientStore(RedisStore(private_redis.url, "t"), retry_interval_seconds=60)
    cache = _cache(store)
    private_redis.stop()
    with counting_exporter(delay_seconds=0.3) as slow:
        results: list[tuple[CollectedMetrics, float]] = []

        def ask() -> None:
            results.append(
                cache.get_or_collect("gpu-prod", "ctx-a", lambda: collect_from(slow.url), 30)
            )

        threads = [threading.Thread(target=ask) for _ in range(10)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(results) == 10 and slow.scrapes == 1
    assert store.redis_state() == "degraded"


def test_scrape_metrics_are_recorded(kv: RedisStore, exporter: CountingExporter) -> None:
    before_ok = METRICS.value(
        "hami_summary_scrapes_total", {"cluster": "metrics-check", "result": "ok"}
    )
    cache = _cache(kv)
    cache.get_or_collect("metrics-check", None, lambda: collect_from(exporter.url), 30)
    assert (
        METRICS.value("hami_summary_scrapes_total", {"cluster": "metrics-check", "result": "ok"})
        == before_ok + 1
    )
    assert (
        METRICS.value("hami_summary_scrape_duration_seconds_count", {"cluster": "metrics-check"})
        >= 1
    )


def test_a_variant_is_cached_apart(kv: RedisStore, exporter: CountingExporter) -> None:
    cache = _cache(kv)
    cache.get_or_collect("gpu-prod", "ctx-a", lambda: collect_from(exporter.url), 30)
    cache.get_or_collect(
        "gpu-prod", "ctx-a", lambda: collect_from(exporter.url), 30, variant="runtime"
    )
    assert exporter.scrapes == 2  # allocation-only data never answers a runtime request
    cache.get_or_collect(
        "gpu-prod", "ctx-a", lambda: collect_from(exporter.url), 30, variant="runtime"
    )
    assert exporter.scrapes == 2


def test_metrics_of_another_release_are_a_miss(kv: RedisStore, exporter: CountingExporter) -> None:
    cache = _cache(kv)
    future = collected("hami_vgpu_count 1\n").to_json() | {"version": 99}
    stored = codec.encode(
        "scrape", {"stored_at": time.time(), "value": future, "error": None}, compress=True
    )
    kv.put(cache.entry_key("gpu-prod", "ctx-a"), stored, 30)
    metrics, age = cache.get_or_collect("gpu-prod", "ctx-a", lambda: collect_from(exporter.url), 30)
    assert exporter.scrapes == 1 and age == 0.0 and "# scrape 1" in metrics.text


def test_a_replica_reuses_the_collection_it_already_decoded(
    kv: RedisStore, exporter: CountingExporter
) -> None:
    replica_a, replica_b = _cache(kv), _cache(kv)
    first, _ = replica_a.get_or_collect("gpu-prod", "ctx-a", lambda: collect_from(exporter.url), 30)
    from_b, _ = replica_b.get_or_collect(
        "gpu-prod", "ctx-a", lambda: collect_from(exporter.url), 30
    )
    again_b, _ = replica_b.get_or_collect(
        "gpu-prod", "ctx-a", lambda: collect_from(exporter.url), 30
    )
    assert exporter.scrapes == 1
    assert from_b == first and from_b is not first  # decoded from Redis by replica B
    assert again_b is from_b  # then the same object: summaries can be memoised by identity

    # The companion key is small and expires with the entry.
    meta = kv.get(replica_a.meta_key("gpu-prod", "ctx-a"))
    assert meta is not None and len(meta) < 200
    assert kv.ttl_seconds(replica_a.meta_key("gpu-prod", "ctx-a")) is not None

    # With only the companion left, a replica that knows the collection still answers from
    # memory; one that does not (a new replica) misses and collects.
    kv.delete(replica_a.entry_key("gpu-prod", "ctx-a"))
    known, _ = replica_b.get_or_collect("gpu-prod", "ctx-a", lambda: collect_from(exporter.url), 30)
    assert known is from_b and exporter.scrapes == 1
    _cache(kv).get_or_collect("gpu-prod", "ctx-a", lambda: collect_from(exporter.url), 30)
    assert exporter.scrapes == 2


def test_a_new_collection_replaces_the_remembered_one(
    kv: RedisStore, exporter: CountingExporter
) -> None:
    replica_a, replica_b = _cache(kv), _cache(kv)
    old, _ = replica_b.get_or_collect("gpu-prod", "ctx-a", lambda: collect_from(exporter.url), 30)
    new, _ = replica_a.get_or_collect(
        "gpu-prod", "ctx-a", lambda: collect_from(exporter.url), 30, fresh=True
    )
    seen_by_b, _ = replica_b.get_or_collect(
        "gpu-prod", "ctx-a", lambda: collect_from(exporter.url), 30
    )
    assert "# scrape 2" in new.text and seen_by_b.text == new.text and seen_by_b != old
