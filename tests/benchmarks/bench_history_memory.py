"""Measure: Redis memory of one cluster's full summary history (docs/operating.md, "Summary
history").

Run from the repository root:

    .venv/bin/python tests/benchmarks/bench_history_memory.py [--nodes 1000] [--gpus-per-node 8]

Starts a private ``redis-server``, records a full history (the default policy: 48 recent
snapshots 10 minutes apart plus one per day for 14 days) of a simulated cluster that drifts
between snapshots, as ``bot.store.history.SnapshotHistory`` writes it, then sums
``MEMORY USAGE`` over every history key and prints it with the key count and the average
compressed snapshot size.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import redis

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bot.store.history import SnapshotHistory  # noqa: E402
from bot.store.redis_store import RedisStore  # noqa: E402
from core.api import summarize_text  # noqa: E402
from core.history.retention import SECONDS_PER_DAY  # noqa: E402
from core.model import SourceInfo  # noqa: E402
from core.settings import History  # noqa: E402
from core.simulate import drift_cluster, render_exposition, simulate_cluster  # noqa: E402
from tests.support.redis_server import RedisServerProcess  # noqa: E402

PREFIX = "bench"


def _moments(policy: History, end: float) -> list[float]:
    """One snapshot time per kept slot: a day's first for each older day, then recent ones."""
    spacing = policy.min_spacing_minutes * 60
    recent = [end - i * spacing for i in range(policy.recent_snapshots)]
    first_recent_day = int(min(recent) // SECONDS_PER_DAY)
    days = [(first_recent_day - d) * SECONDS_PER_DAY + 60 for d in range(1, policy.daily_days)]
    return sorted(days + recent)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--gpus-per-node", type=int, default=8)
    args = parser.parse_args()
    policy = History()
    end = 20_500 * SECONDS_PER_DAY + 23 * 3600  # late in a day: the recent tier fits in it
    moments = _moments(policy, end)
    server = RedisServerProcess()
    server.start()
    store = RedisStore(server.url, PREFIX, timeout_seconds=5.0)
    clock = [moments[0]]
    history = SnapshotHistory(store, policy=policy, clock=lambda: clock[0])
    cluster = simulate_cluster(args.nodes, args.gpus_per_node, seed=1)
    started = time.monotonic()
    recording: list[float] = []
    try:
        for moment in moments:
            cluster = drift_cluster(cluster, steps=3)
            source = SourceInfo(kind="cluster", label="bench", cluster="bench")
            summary = summarize_text(render_exposition(cluster), source)
            clock[0] = moment
            # What a live answer pays: the summary is memoised by then, so only the snapshot,
            # its encoding and the store writes (and retention) count.
            before = time.perf_counter()
            history.record_collection("bench", None, moment, lambda s=summary: s)
            recording.append(time.perf_counter() - before)
        _report(server.url, history, len(moments), time.monotonic() - started, args)
        _report_costs(history, recording, moments[-1])
    finally:
        store.close()
        server.close()


def _report(
    url: str, history: SnapshotHistory, recorded: int, seconds: float, args: argparse.Namespace
) -> None:
    client = redis.Redis.from_url(url)
    keys = list(client.scan_iter(match=f"{PREFIX}:history*", count=1000))
    usage = sum(int(client.memory_usage(key) or 0) for key in keys)
    lengths = [int(client.strlen(key)) for key in keys if b":history:" in key]
    client.close()
    kept = len(history.times("bench"))
    print(
        f"{args.nodes} nodes x {args.gpus_per_node} GPUs: recorded {recorded} snapshots in "
        f"{seconds:.0f} s, kept {kept}; {len(keys)} keys, MEMORY USAGE total "
        f"{usage / 1024 / 1024:.1f} MiB, average snapshot {sum(lengths) / len(lengths) / 1024:.0f}"
        f" KiB compressed"
    )


def _report_costs(history: SnapshotHistory, recording: list[float], last: float) -> None:
    """The answer path's cost: a write every ``min_spacing_minutes``, one index read else."""
    skipped = 200
    before = time.perf_counter()
    for _ in range(skipped):
        history.wants("bench", None, last + 1)
    per_check = (time.perf_counter() - before) / skipped
    ordered = sorted(recording)
    print(
        f"recording a snapshot: median {ordered[len(ordered) // 2] * 1000:.0f} ms, max "
        f"{ordered[-1] * 1000:.0f} ms; an answer within the spacing: {per_check * 1000:.2f} ms"
    )


if __name__ == "__main__":
    main()
