"""Benchmark: two bot replicas sharing one Redis, 200 slash commands for one cached cluster.

Run from the repository root (not part of the default test run):

    .venv/bin/python tests/benchmarks/bench_replicas.py [--commands 200] [--clients 20]
        [--nodes 1000] [--gpus-per-node 8]

Set-up, all on this machine: a ``redis-server`` of its own (or ``$REDIS_URL``), the local Slack
Web API of the tests, a HAMi scheduler stand-in serving the simulator's exposition of a
1,000-node cluster and counting its scrapes, and two ``hami-summary serve`` processes in HTTP
mode whose registry maps ``demo`` to that exporter. One command fills the cache; then
``--clients`` clients (each in its own channel, each command from a different user) send
``/hami-summary demo`` in turn, alternating between the replicas, each client waiting for its
answer before the next command. Measured per command:

* acknowledgement: the HTTP round trip of the slash command (Slack's 3-second deadline);
* full reply: from sending the command to the ``chat.update`` that puts the summary in place.

Targets: acknowledgement p99 < 1 s, full reply p50 < 2 s, no duplicate answers, one
scrape. Prints the numbers and one PASS/FAIL line per target; exits 1 if any fails.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from core.simulate import simulate_exposition  # noqa: E402
from tests.replicas.conftest import start_replicas  # noqa: E402
from tests.store.collected import CountingExporter  # noqa: E402
from tests.support.redis_server import RedisServerProcess, redis_answers  # noqa: E402
from tests.support.slack_api import SlackWebApi  # noqa: E402

TARGET_ACK_P99_SECONDS = 1.0
TARGET_REPLY_P50_SECONDS = 2.0


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))
    return ordered[index]


def wait_for_summary(api: SlackWebApi, channel: str, sent_at: float, timeout: float) -> float:
    """Monotonic time of the summary's ``chat.update`` in ``channel`` after ``sent_at``.

    Each client has a channel of its own and one command in flight, so the first summary
    update in that channel after the command was sent is its answer.
    """
    deadline = time.monotonic() + timeout
    with api._lock:
        while True:
            for call in api.calls:
                if (
                    call.method == "chat.update"
                    and call.at >= sent_at
                    and call.status == 200
                    and call.params.get("channel") == channel
                    and "cores" in str(call.params.get("blocks"))
                ):
                    return call.at
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no summary in {channel} within {timeout} s")
            api._lock.wait(left)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commands", type=int, default=200)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--gpus-per-node", type=int, default=8)
    args = parser.parse_args()

    os.environ.setdefault("MPLCONFIGDIR", tempfile.mkdtemp(prefix="hami-summary-mpl-"))
    text = simulate_exposition(args.nodes, args.gpus_per_node, seed=0)
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs; "
        f"exposition: {args.nodes} nodes x {args.gpus_per_node} GPUs, {len(text) / 1e6:.1f} MB"
    )

    own_redis: RedisServerProcess | None = None
    redis_url = os.environ.get("REDIS_URL", "")
    if not redis_url or not redis_answers(redis_url):
        own_redis = RedisServerProcess()
        own_redis.start()
        redis_url = own_redis.url
    api = SlackWebApi().start()
    exporter = CountingExporter(body=text)
    exporter.start()
    work = Path(tempfile.mkdtemp(prefix="hami-summary-bench-"))
    replicas = start_replicas(api, exporter, redis_url, f"bench-{os.getpid()}", work)
    try:
        # Fill the cache: the one scrape of the run.
        warm_channel = "C0WARM0001"
        sent = time.monotonic()
        replicas.a.sender.command(
            "demo",
            response_url=api.response_url("warm"),
            channel=warm_channel,
            user="U0WARM0001",
            trigger_id="trigger.warm",
        )
        first = wait_for_summary(api, warm_channel, sent, timeout=300) - sent
        print(f"first answer (scrape, summary, chart): {first:.2f} s")

        acks: list[float] = []
        replies: list[float] = []
        failures: list[str] = []
        lock = threading.Lock()
        per_client = args.commands // args.clients
        counter = iter(range(args.commands))

        def client(number: int) -> None:
            channel = f"C0BENCH{number:03d}"
            for _ in range(per_client):
                with lock:
                    n = next(counter)
                replica = replicas.both[n % 2]
                sent_at = time.monotonic()
                response = replica.sender.command(
                    "demo",
                    response_url=api.response_url(f"bench-{n}"),
                    channel=channel,
                    user=f"U0BENCH{n:04d}",
                    trigger_id=f"trigger.bench.{n}",
                )
                ack = time.monotonic() - sent_at
                try:
                    done = wait_for_summary(api, channel, sent_at, timeout=120)
                except AssertionError as error:
                    with lock:
                        failures.append(str(error))
                    return
                with lock:
                    acks.append(ack)
                    replies.append(done - sent_at)
                    if response.status != 200:
                        failures.append(f"command {n}: HTTP {response.status}")

        started = time.monotonic()
        threads = [threading.Thread(target=client, args=(c,)) for c in range(args.clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.monotonic() - started
        time.sleep(1.0)  # any duplicate answer would arrive now

        bench_posts = [
            c
            for c in api.calls_to("chat.postMessage")
            if str(c.params.get("channel")).startswith("C0BENCH")
        ]
        duplicates = len(bench_posts) - args.commands
        ack_p50, ack_p99 = percentile(acks, 0.5), percentile(acks, 0.99)
        reply_p50, reply_p99 = percentile(replies, 0.5), percentile(replies, 0.99)
        print(
            f"{len(replies)} commands from {args.clients} clients in {wall:.1f} s "
            f"({len(replies) / wall:.1f} answers/s)"
        )
        print(
            f"acknowledgement: p50 {ack_p50 * 1000:.0f} ms, p99 {ack_p99 * 1000:.0f} ms, "
            f"max {max(acks) * 1000:.0f} ms"
        )
        print(
            f"full reply: p50 {reply_p50:.2f} s, p99 {reply_p99:.2f} s, "
            f"mean {statistics.mean(replies):.2f} s"
        )
        print(
            f"working messages posted: {len(bench_posts)} for {args.commands} commands; "
            f"scrapes at the exporter: {exporter.scrapes}"
        )
        for failure in failures[:5]:
            print(f"failure: {failure}")

        checks = [
            ("acknowledgement p99 < 1 s", ack_p99 < TARGET_ACK_P99_SECONDS),
            ("full reply p50 < 2 s", reply_p50 < TARGET_REPLY_P50_SECONDS),
            ("no duplicate answers", duplicates == 0 and not failures),
            ("one scrape", exporter.scrapes == 1),
        ]
        for name, ok in checks:
            print(f"{'PASS' if ok else 'FAIL'}: {name}")
        return 0 if all(ok for _, ok in checks) else 1
    finally:
        for replica in replicas.both:
            replica.stop()
        exporter.stop()
        api.stop()
        if own_redis is not None:
            own_redis.close()


if __name__ == "__main__":
    sys.exit(main())
