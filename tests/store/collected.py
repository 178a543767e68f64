"""A local HTTP exporter that counts its scrapes, and a collection from it for cache tests."""

from __future__ import annotations

import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from bot.clusters.collect import CollectedMetrics
from core.model import SourceInfo
from tests.conftest import read_fixture


def collected(
    text: str, cluster: str = "gpu-prod", context: str | None = "ctx-a"
) -> CollectedMetrics:
    fetched_at = datetime.now(UTC)
    return CollectedMetrics(
        cluster=cluster,
        context=context,
        text=text,
        monitor_texts=(),
        missing_monitors=(),
        real_usage=None,
        fetched_at=fetched_at,
        source=SourceInfo(
            kind="cluster", label=cluster, cluster=cluster, context=context, fetched_at=fetched_at
        ),
    )


def collect_from(exporter_url: str) -> CollectedMetrics:
    """One scrape of the exporter: what a live collection does, minus Kubernetes."""
    with urllib.request.urlopen(exporter_url, timeout=30) as response:
        text = response.read().decode("utf-8")
    return collected(text)


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
