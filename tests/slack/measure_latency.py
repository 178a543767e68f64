"""Measure acknowledgement and full-reply times of the bot for a 1,000-node cluster.

    .venv/bin/python -m tests.slack.measure_latency [--runs 20] [--nodes 1000]

Runs the real bot in HTTP mode (same assembly as ``hami-summary serve``) against the local
Slack Web API, with the simulated exposition of ``core.simulate`` (1,000 nodes x 8 GPUs) as:

* ``/hami-summary demo``: a registered cluster behind a metrics URL, answered from the scrape
  cache (scraped once before the first run): the summary and chart are built once for the
  collection and shared by every request, so this is the reply path alone;
* ``/hami-summary demo fresh``: the same cluster, scraped every run;
* a mention with the exposition attached as a ``.prom`` file (downloaded every run).

Times, from sending the signed request: the acknowledgement (HTTP response), the answer in
place (``chat.update`` of the working message arrives at the Web API) and all files uploaded
(``files.completeUploadExternal``). Prints the median and the spread of each. Not collected by
pytest: it takes a minute or two.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from bot.clusters.registry import load_registry
from core.simulate import simulate_exposition
from tests.slack.conftest import CHANNEL, MetricsServer, start_bot, stop_bot, write_registry
from tests.support.slack_api import ApiCall, SlackWebApi


def _after(api: SlackWebApi, method: str, since: int, where: object = None) -> ApiCall:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        with api._lock:
            calls = [c for c in api.calls[since:] if c.method == method and c.status == 200]
        if calls:
            return calls[0]
        time.sleep(0.005)
    raise TimeoutError(f"no {method} within 120 s")


def _report(name: str, values: list[float]) -> str:
    ordered = sorted(values)
    return (
        f"{name:<34} median {statistics.median(ordered) * 1000:8.0f} ms   "
        f"min {ordered[0] * 1000:7.0f} ms   max {ordered[-1] * 1000:7.0f} ms"
    )


def measure(runs: int, nodes: int) -> list[str]:
    text = simulate_exposition(nodes, 8)
    metrics = MetricsServer(text)
    api = SlackWebApi().start()
    with tempfile.TemporaryDirectory() as folder:
        registry = load_registry(write_registry(Path(folder), metrics.url))
        running, server = start_bot(api, registry, {"HAMI_SUMMARY_LIVE_PER_MINUTE": str(runs * 3)})
        results: dict[str, list[float]] = {}
        try:
            # One scrape, summary and chart for the cached runs (not measured).
            since = len(api.calls)
            running.sender.command("demo", response_url=api.response_url("warm-up"))
            _after(api, "files.completeUploadExternal", since)
            time.sleep(0.2)
            for run in range(runs):
                since = len(api.calls)
                started = time.monotonic()
                ack = running.sender.command("demo", response_url=api.response_url(f"c{run}"))
                update = _after(api, "chat.update", since)
                files = _after(api, "files.completeUploadExternal", since)
                results.setdefault("cached slash: acknowledgement", []).append(ack.elapsed_seconds)
                results.setdefault("cached slash: answer in place", []).append(update.at - started)
                results.setdefault("cached slash: chart uploaded", []).append(files.at - started)
                time.sleep(0.2)  # let this run's uploads finish before the next starts
            for run in range(runs):
                since = len(api.calls)
                started = time.monotonic()
                ack = running.sender.command("demo fresh", response_url=api.response_url(f"m{run}"))
                update = _after(api, "chat.update", since)
                files = _after(api, "files.completeUploadExternal", since)
                results.setdefault("slash: acknowledgement", []).append(ack.elapsed_seconds)
                results.setdefault("slash: answer in place", []).append(update.at - started)
                results.setdefault("slash: chart and files uploaded", []).append(files.at - started)

                file = api.add_private_file(f"cluster-{run}.prom", text.encode())
                since = len(api.calls)
                started = time.monotonic()
                ack, _ = running.sender.mention("", files=[file], channel=CHANNEL)
                update = _after(api, "chat.update", since)
                files = _after(api, "files.completeUploadExternal", since)
                results.setdefault("file mention: acknowledgement", []).append(ack.elapsed_seconds)
                results.setdefault("file mention: answer in place", []).append(update.at - started)
                results.setdefault("file mention: files uploaded", []).append(files.at - started)
                time.sleep(0.2)  # let this run's uploads finish before the next starts
        finally:
            stop_bot(running, server)
            api.stop()
            metrics.stop()
    header = (
        f"{runs} runs, simulated exposition of {nodes} nodes x 8 GPUs "
        f"({len(text) / 1e6:.1f} MB), scraped {metrics.scrapes} times"
    )
    return [header, *(_report(name, values) for name, values in results.items())]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--nodes", type=int, default=1000)
    args = parser.parse_args()
    print("\n".join(measure(args.runs, args.nodes)))


if __name__ == "__main__":
    main()
