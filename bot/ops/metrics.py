"""The bot's Prometheus metrics, on a private registry served at ``/metrics``.

A private ``CollectorRegistry`` (not prometheus-client's global one) keeps the exposition to
what this document lists, and lets tests read values without other libraries' collectors.
Label values are bounded sets (surfaces, outcomes, registered cluster names), never user ids.
"""

from __future__ import annotations

import platform
from importlib.metadata import PackageNotFoundError, version

from prometheus_client import (
    CollectorRegistry,
    Counter,
    GCCollector,
    Histogram,
    Info,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
)

# Slack wants an acknowledgement within 3 s: buckets are dense below that.
ACK_BUCKETS_SECONDS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0)
REPLY_BUCKETS_SECONDS = (0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 20.0, 30.0, 60.0)
SCRAPE_BUCKETS_SECONDS = (0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0)


class OpsMetrics:
    """Every metric the bot exports, registered on ``self.registry``."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "hami_summary_requests",
            "Slack requests handled, by surface (command, event, action, shortcut, view, ...) "
            "and outcome (ok, unauthorized, unhandled, error).",
            ["surface", "outcome"],
            registry=self.registry,
        )
        self.ack_latency_seconds = Histogram(
            "hami_summary_ack_latency_seconds",
            "Time from a Slack request reaching the bot to its acknowledgement.",
            ["surface"],
            buckets=ACK_BUCKETS_SECONDS,
            registry=self.registry,
        )
        self.reply_latency_seconds = Histogram(
            "hami_summary_reply_latency_seconds",
            "Time from a Slack request reaching the bot to its final reply being posted.",
            ["surface"],
            buckets=REPLY_BUCKETS_SECONDS,
            registry=self.registry,
        )
        self.scrapes = Counter(
            "hami_summary_scrapes",
            "Live metric collections, by registered cluster and result (ok, error).",
            ["cluster", "result"],
            registry=self.registry,
        )
        self.scrape_duration_seconds = Histogram(
            "hami_summary_scrape_duration_seconds",
            "Duration of live metric collections, by registered cluster.",
            ["cluster"],
            buckets=SCRAPE_BUCKETS_SECONDS,
            registry=self.registry,
        )
        self.cache_requests = Counter(
            "hami_summary_cache_requests",
            "Scrape cache look-ups by result (hit, miss, shared: another request's collection "
            "was waited for and reused).",
            ["result"],
            registry=self.registry,
        )
        self.redis_errors = Counter(
            "hami_summary_redis_errors",
            "Redis calls that failed or timed out, by operation.",
            ["operation"],
            registry=self.registry,
        )
        add_runtime_metrics(self.registry)

    def exposition(self) -> bytes:
        """The Prometheus text format of every metric above."""
        return bytes(generate_latest(self.registry))

    def value(self, name: str, labels: dict[str, str] | None = None) -> float:
        """One sample's current value (0 when never recorded); for tests and readiness."""
        found = self.registry.get_sample_value(name, labels or {})
        return float(found) if found is not None else 0.0


def add_runtime_metrics(registry: CollectorRegistry) -> None:
    """The process and Python metrics every Prometheus client exports by default
    (``process_*``: CPU, memory, open files, start time; ``python_*``: version, garbage
    collection), and ``hami_summary_build_info`` naming the running version, which the private
    registry would otherwise lack."""
    ProcessCollector(registry=registry)
    PlatformCollector(registry=registry)
    GCCollector(registry=registry)  # registers nothing on interpreters without gc statistics
    try:
        package_version = version("hami-summary")
    except PackageNotFoundError:  # run from a source tree that was never installed
        package_version = "unknown"
    Info("hami_summary_build", "The running hami-summary release.", registry=registry).info(
        {"version": package_version, "python_version": platform.python_version()}
    )


METRICS = OpsMetrics()
