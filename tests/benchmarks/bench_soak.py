"""Benchmark: one bot replica soaked with large pastes and slash commands, without Redis and
with it.

Run from the repository root (not part of the default test run):

    .venv/bin/python tests/benchmarks/bench_soak.py [--pastes 1000] [--clients 4]
        [--bound-mib 1024]

Set-up, all on this machine: the local Slack Web API of the tests, a HAMi scheduler stand-in
for ``/hami-summary demo``, and one ``hami-summary serve`` process in HTTP mode, first with its
state in process memory (no ``REDIS_URL``), then on a ``redis-server`` of its own. ``--clients``
clients each attach a metrics file of 1, 2, 4 or 8 MiB (the simulator's scheduler page of 70 to
560 nodes, in turn) to a mention in a thread of their own, wait for the answer, and send a
slash command after every tenth paste. Each paste opens a thread the bot keeps for follow-ups
(compressed, a day), so without Redis the process holds them all within its store's byte bound
(``HAMI_SUMMARY_MEMORY_STORE_MIB``, 256 by default).

Measured per configuration: the replica's resident memory every half second (peak, and the mean
of the first and last quarter of the run), answers per minute, and how many pastes and commands
were answered. Targets: every paste and command answered; peak resident memory under
``--bound-mib``; the last quarter's memory no more than 25 % over the second quarter's (memory
levels off instead of growing with the pastes). Exits 1 if any fails.
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
from tests.replicas.conftest import BotProcess, bot_env, write_registry  # noqa: E402
from tests.slack.test_http_e2e import answer_in  # noqa: E402
from tests.store.collected import CountingExporter  # noqa: E402
from tests.support.redis_server import RedisServerProcess  # noqa: E402
from tests.support.slack_api import SlackWebApi  # noqa: E402

# Nodes of 8 GPUs whose scheduler page is about 1, 2, 4 and 8 MiB.
PASTE_NODES = (70, 140, 280, 560)
GROWTH_LIMIT = 1.25


def resident_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class Sampler(threading.Thread):
    """The resident memory of ``pid`` every half second, until stopped."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.samples: list[float] = []
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(0.5):
            try:
                self.samples.append(resident_mib(self.pid))
            except OSError:
                return


def soak(
    label: str,
    api: SlackWebApi,
    env: dict[str, str],
    folder: Path,
    pastes: list[bytes],
    clients: int,
) -> dict[str, float]:
    replica = BotProcess(label, env, folder)
    replica.wait_until_serving()
    sampler = Sampler(replica.process.pid)
    sampler.start()
    answered = {"pastes": 0, "commands": 0}
    failures: list[str] = []
    lock = threading.Lock()
    per_client = len(pastes) // clients

    def client(number: int) -> None:
        for turn in range(per_client):
            index = number * per_client + turn
            channel = f"C0SOAK{number:03d}"
            file = api.add_private_file(f"paste-{index}.prom", pastes[index])
            try:
                _, ts = replica.sender.mention(
                    "", files=[file], channel=channel, user=f"U0SOAK{index:05d}"
                )
                answer_in(api, channel, ts)
                with api._lock:  # the stand-in keeps nothing it need not: 1,000 pastes are GBs
                    api.private_files.pop(file["id"], None)
                with lock:
                    answered["pastes"] += 1
                if turn % 10 == 9:
                    command_channel = f"C0SOAKCMD{number:02d}"
                    replica.sender.command(
                        "demo",
                        response_url=api.response_url(f"soak-{index}"),
                        channel=command_channel,
                        user=f"U0SOAKC{index:05d}",
                        trigger_id=f"trigger.soak.{index}",
                    )
                    answer_in(api, command_channel, None)
                    with lock:
                        answered["commands"] += 1
            except AssertionError as error:
                with lock:
                    failures.append(f"paste {index}: {error}")

    started = time.monotonic()
    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    sampler.stopped.set()
    sampler.join()
    replica.stop()
    samples = sampler.samples or [0.0]
    quarter = max(1, len(samples) // 4)
    for failure in failures[:5]:
        print(f"  {label}: {failure}")
    return {
        "pastes": answered["pastes"],
        "commands": answered["commands"],
        "expected_pastes": per_client * clients,
        "expected_commands": clients * (per_client // 10),
        "minutes": elapsed / 60,
        "per_minute": (answered["pastes"] + answered["commands"]) / (elapsed / 60),
        "peak": max(samples),
        "second_quarter": statistics.mean(samples[quarter : 2 * quarter] or samples),
        "last_quarter": statistics.mean(samples[-quarter:]),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pastes", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--bound-mib", type=float, default=1024.0)
    args = parser.parse_args()
    print(
        f"machine: {platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}"
    )
    pages = [simulate_exposition(nodes, 8, seed=nodes).encode() for nodes in PASTE_NODES]
    print("pastes: " + ", ".join(f"{len(p) / 2**20:.1f} MiB" for p in pages) + " in turn")
    pastes = [pages[i % len(pages)] for i in range(args.pastes)]
    api = SlackWebApi().start()
    exporter = CountingExporter()
    exporter.start()
    redis_server = RedisServerProcess()
    redis_server.start()
    results = {}
    try:
        with tempfile.TemporaryDirectory(prefix="hami-bench-soak-") as name:
            folder = Path(name)
            registry = write_registry(folder, exporter.url)
            env = bot_env(api, registry, redis_server.url, "soak")
            env["HAMI_SUMMARY_LIVE_PER_MINUTE"] = "100000"
            without = {k: v for k, v in env.items() if not k.startswith("REDIS_")}
            results["no Redis"] = soak("no-redis", api, without, folder, pastes, args.clients)
            results["Redis"] = soak("redis", api, env, folder, pastes, args.clients)
    finally:
        redis_server.close()
        exporter.stop()
        api.stop()
    print(
        f"\n{'replica':<10} {'pastes':>9} {'commands':>9} {'per min':>8} {'peak MiB':>9} "
        f"{'Q2 MiB':>7} {'Q4 MiB':>7}"
    )
    ok = True
    for label, r in results.items():
        print(
            f"{label:<10} {r['pastes']:>4.0f}/{r['expected_pastes']:<4.0f} "
            f"{r['commands']:>4.0f}/{r['expected_commands']:<4.0f} {r['per_minute']:8.1f} "
            f"{r['peak']:9.0f} {r['second_quarter']:7.0f} {r['last_quarter']:7.0f}"
        )
    print()
    for label, r in results.items():
        checks = [
            (
                r["pastes"] == r["expected_pastes"] and r["commands"] == r["expected_commands"],
                f"{label}: every paste and command answered",
            ),
            (
                r["peak"] < args.bound_mib,
                f"{label}: peak {r['peak']:.0f} MiB (target < {args.bound_mib:g})",
            ),
            (
                r["last_quarter"] <= GROWTH_LIMIT * r["second_quarter"],
                f"{label}: last quarter {r['last_quarter']:.0f} MiB, second "
                f"{r['second_quarter']:.0f} (target at most {GROWTH_LIMIT:.2f}x)",
            ),
        ]
        for passed, message in checks:
            print(f"{'PASS' if passed else 'FAIL'} {message}")
            ok = ok and passed
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
