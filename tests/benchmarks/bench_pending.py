"""Benchmark: ``/hami-summary <cluster> pending`` at fleet size, as the bot answers it.

Run from the repository root:

    .venv/bin/python tests/benchmarks/bench_pending.py [--nodes 1000] [--pending 500]
        [--repeat 5]

A cluster on the local Kubernetes API server (real HTTP, the official client) serves the
simulator's scheduler metrics for ``--nodes`` nodes x 8 GPUs and ``--pending`` pods pending on
HAMi's resources, each with its ``FilteringFailed`` event. The conversation is the bot's
(``Conversation`` over the registry, the scrape cache warmed by one summary first); each round
answers, in turn:

- ``lab`` (the cached summary: the reference, measured in the same run);
- ``lab pending`` (one pod list and one event list through the API, grouped and laid out);
- ``lab why ml/batch-0000`` (one pod, its events, checked against the cached summary).

Each answer is turned into the Slack message the bot would post. It prints the median wall time
of each and its ratio to the cached summary, and PASS/FAIL against the targets: ``pending``
under 2 s, and its message one screen (at most 50 blocks, the longest waiting shown and the
rest in one file). Exits 1 if a target fails.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bot.clusters.registry import load_registry
from bot.conversation.intents import CommandIntent
from bot.conversation.service import Conversation
from bot.live import RegistryLiveSource
from bot.slack.messages import slack_message
from bot.store.memory import MemoryStore
from bot.store.state import BotState
from core.simulate import simulate_exposition
from tests.kube.fake_apiserver import (
    FakeApiServer,
    FakeContainer,
    FakeEvent,
    FakePod,
    hami_cluster,
)

TARGET_PENDING_SECONDS = 2.0
MAX_BLOCKS = 50


def _cluster(nodes: int, pending: int) -> FakeApiServer:
    found = hami_cluster(scheduler_body=simulate_exposition(nodes, 8).encode())
    codes = ("CardInsufficientMemory", "CardInsufficientCore", "CardTimeSlicingExhausted")
    for index in range(pending):
        name = f"batch-{index:04d}"
        found.pods.append(
            FakePod(
                namespace="ml",
                name=name,
                containers=[
                    FakeContainer(
                        "main", limits={"nvidia.com/gpu": "2", "nvidia.com/gpumem": "30000"}
                    )
                ],
                node_name="",
                phase="Pending",
                scheduler_name="hami-scheduler",
                unschedulable_since=f"2026-08-21T0{index % 10}:{index % 60:02d}:00Z",
            )
        )
        code = codes[index % len(codes)]
        found.events.append(
            FakeEvent("ml", name, "FilteringFailed", f"3 nodes {code}(node-1,node-2,node-3)")
        )
    return FakeApiServer(found)


def _timed(call: Callable[[], object], repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pending", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, _cluster(args.nodes, args.pending) as kube:
        directory = Path(folder)
        kube.write_kubeconfig(directory / "lab.kubeconfig", context="lab")
        registry = directory / "clusters.yaml"
        registry.write_text(
            "clusters:\n  - name: lab\n    kubeconfig: lab.kubeconfig\n    context: lab\n"
            "    cache_ttl_seconds: 3600\n    timeout_seconds: 60\n"
        )
        store = MemoryStore()
        conversation = Conversation(
            BotState(store), RegistryLiveSource(load_registry(registry), store)
        )

        def answer(text: str) -> object:
            plan = conversation.handle(CommandIntent(text, None, "bench", None)).plan
            assert plan is not None, text
            return slack_message(conversation.run(plan))

        answer("lab")  # the scrape, cached from here on
        summary_s, _ = _timed(lambda: answer("lab"), args.repeat)
        pending_s, pending = _timed(lambda: answer("lab pending"), args.repeat)
        why_s, _ = _timed(lambda: answer("lab why ml/batch-0000"), args.repeat)
    blocks = len(pending.blocks)  # type: ignore[attr-defined]
    files = [a.filename for a in pending.attachments]  # type: ignore[attr-defined]
    print(f"{args.nodes:,} nodes x 8 GPUs, {args.pending:,} pending pods, median of {args.repeat}")
    print(f"  cached summary (reference)  {summary_s:7.3f} s  1.00x")
    print(f"  pending                     {pending_s:7.3f} s  {pending_s / summary_s:5.2f}x")
    print(f"  why one pod                 {why_s:7.3f} s  {why_s / summary_s:5.2f}x")
    print(f"  pending message: {blocks} blocks, files {files}")
    fast = pending_s < TARGET_PENDING_SECONDS
    one_screen = blocks <= MAX_BLOCKS and files == ["hami-pending.txt"]
    print(f"{'PASS' if fast else 'FAIL'}: pending under {TARGET_PENDING_SECONDS:g} s")
    print(f"{'PASS' if one_screen else 'FAIL'}: one screen, the rest in one file")
    return 0 if fast and one_screen else 1


if __name__ == "__main__":
    sys.exit(main())
