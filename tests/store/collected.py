"""Collected metrics for the cache tests, and a local HTTP exporter that counts its scrapes.

``CollectedMetrics`` mirrors the shape of ``bot.clusters.collect.CollectedMetrics`` (a frozen
dataclass with ``to_json``/``from_json``) so that the cache is tested on the same round trip.
"""

from __future__ import annotations

import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.conftest import read_fixture


@dataclass(frozen=True, slots=True)
class CollectedMetrics:
    cluster: str
    context: str | None
    text: str
    monitor_texts: tuple[str, ...] = ()
    missing_monitors: tuple[str, ...] = ()
    source: str = "service-proxy"
    fetched_at: float = field(default_factory=time.time)

    def to_json(self) -> dict[str, Any]:
        return {
            "cluster": self.cluster,
            "context": self.context,
            "text": self.text,
            "monitor_texts": list(self.monitor_texts),
            "missing_monitors": list(self.missing_monitors),
            "source": self.source,
            "fetched_at": self.fetched_at,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CollectedMetrics:
        return cls(
            cluster=data["cluster"],
            context=data["context"],
            text=data["text"],
            monitor_texts=tuple(data["monitor_texts"]),
            missing_monitors=tuple(data["missing_monitors"]),
            source=data["source"],
            fetched_at=float(data["fetched_at"]),
        )


def collect_from(exporter_url: str) -> CollectedMetrics:
    """One scrape of the exporter: what a live collection does, minus Kubernetes."""
    with urllib.request.urlopen(exporter_url, timeout=30) as response:
        text = response.read().decode("utf-8")
    return CollectedMetrics(cluster="gpu-prod", context="ctx-a", text=text)


class CountingExporter:
    """An HTTP server serving HAMi metrics at ``/metrics``, counting scrapes."""

    def __init__(self, delay_seconds: float = 0.0, body: str | None = None) -> None:
        self.delay_seconds = delay_seconds
        self.body = (body if body is not None else read_fixture("scheduler-small.prom")).encode()
        self.scrapes = 0
        self._lock = threading.Lock()
        exporter = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                with exporter._lock:
                    exporter.scrapes += 1
                    number = exporter.scrapes
                time.sleep(exporter.delay_seconds)
                payload = exporter.body + f"# scrape {number}\n".encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/metrics"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@contextmanager
def counting_exporter(delay_seconds: float = 0.0) -> Iterator[CountingExporter]:
    exporter = CountingExporter(delay_seconds)
    exporter.start()
    try:
        yield exporter
    finally:
        exporter.stop()
