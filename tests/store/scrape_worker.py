"""A separate process using ScrapeCache on a shared Redis (a second bot replica, in miniature).

``burst``: THREADS threads ask for one cluster at START_AT (Unix time) and print one JSON line
per answer. ``hold``: take the collection lock, print "collecting", and hang inside the
collection until killed (a replica that dies mid-scrape).

    python -m tests.store.scrape_worker burst REDIS_URL PREFIX EXPORTER_URL THREADS START_AT
    python -m tests.store.scrape_worker hold REDIS_URL PREFIX LOCK_TTL
"""

from __future__ import annotations

import json
import sys
import threading
import time

from bot.clusters.collect import CollectedMetrics
from bot.clusters.scrape_cache import ScrapeCache
from bot.store.redis_store import RedisStore
from bot.store.resilient import ResilientStore
from tests.store.collected import collect_from


def burst(redis_url: str, prefix: str, exporter_url: str, threads: int, start_at: float) -> None:
    # Generous Redis timeouts: on a loaded machine a 200 ms one can expire, and the store then
    # rightly falls back to memory, which is not what this burst is about.
    cache = ScrapeCache(ResilientStore(RedisStore(redis_url, prefix, timeout_seconds=5.0)))
    lock = threading.Lock()

    def ask() -> None:
        time.sleep(max(0.0, start_at - time.time()))
        metrics, age = cache.get_or_collect(
            "gpu-prod", "ctx-a", lambda: collect_from(exporter_url), ttl_seconds=60
        )
        with lock:
            print(json.dumps({"text": metrics.text, "age": age}), flush=True)

    workers = [threading.Thread(target=ask) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()


def hold(redis_url: str, prefix: str, lock_ttl_seconds: float) -> None:
    cache = ScrapeCache(RedisStore(redis_url, prefix), lock_ttl_seconds=lock_ttl_seconds)

    def hang() -> CollectedMetrics:
        print("collecting", flush=True)
        time.sleep(120)
        raise AssertionError("should have been killed")

    cache.get_or_collect("gpu-prod", "ctx-a", hang, ttl_seconds=60)


if __name__ == "__main__":
    mode, url, key_prefix = sys.argv[1:4]
    if mode == "burst":
        burst(url, key_prefix, sys.argv[4], int(sys.argv[5]), float(sys.argv[6]))
    else:
        hold(url, key_prefix, float(sys.argv[4]))
