"""A stand-in HAMi scheduler ``/metrics`` endpoint serving a simulated cluster.

For demos and tests: point the bot, a Prometheus or ``curl`` at it instead of a real scheduler.
It answers like HAMi's metrics listener (client_golang ``promhttp`` with default options):
only ``/metrics``, text format 0.0.4 with ``Content-Type: text/plain; version=0.0.4;
charset=utf-8; escaping=underscores`` (client_golang 1.24), gzip when the scraper asks for it,
and Go's ``404 page not found`` for every other path. With ``drift_seconds`` the simulated
cluster moves one drift step per interval, so successive scrapes differ a little.
"""

from __future__ import annotations

import gzip
import logging
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from core.simulate import SimulatedCluster, drift_cluster, render_exposition, simulate_cluster

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8; escaping=underscores"
METRICS_PATH = "/metrics"

log = logging.getLogger("hami_summary.demo_exporter")


@dataclass(frozen=True, slots=True)
class _Body:
    step: int
    plain: bytes
    gzipped: bytes


class SimulatedScheduler:
    """The simulated state and its rendered body, advanced lazily to the current step."""

    def __init__(
        self,
        nodes: int,
        gpus_per_node: int,
        *,
        seed: int,
        drift_seconds: float | None,
        legacy: bool = False,
        both: bool = False,
        replica: str | None = None,
        outcomes: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if drift_seconds is not None and drift_seconds <= 0:
            raise ValueError(f"drift_seconds must be more than 0, got {drift_seconds}")
        self._cluster: SimulatedCluster = simulate_cluster(nodes, gpus_per_node, seed=seed)
        self._drift_seconds = drift_seconds
        self._legacy = legacy
        self._both = both
        self._replica = replica
        self._outcomes = outcomes
        self._clock = clock
        self._started = clock()
        self._lock = threading.Lock()
        self._body = self._render()

    def current_step(self) -> int:
        if self._drift_seconds is None:
            return 0
        return int((self._clock() - self._started) / self._drift_seconds)

    def body(self) -> _Body:
        step = self.current_step()
        with self._lock:  # one render per step, however many scrapes arrive at once
            if step > self._body.step:
                self._cluster = drift_cluster(self._cluster, steps=step - self._cluster.step)
                self._body = self._render()
            return self._body

    def _render(self) -> _Body:
        text = render_exposition(
            self._cluster,
            legacy=self._legacy,
            both=self._both,
            replica=self._replica,
            outcomes=self._outcomes,
        )
        plain = text.encode("utf-8")
        # mtime=0 keeps the compressed body identical for identical text.
        return _Body(self._cluster.step, plain, gzip.compress(plain, compresslevel=5, mtime=0))


def _accepts_gzip(header: str | None) -> bool:
    """True when ``Accept-Encoding`` lists gzip with a non-zero quality (RFC 9110 12.5.3)."""
    for item in (header or "").split(","):
        coding, _, params = item.strip().partition(";")
        if coding.strip().lower() not in ("gzip", "*"):
            continue
        quality = params.strip()
        if quality.startswith("q="):
            try:
                return float(quality[2:]) > 0
            except ValueError:
                return False
        return True
    return False


class _MetricsHandler(BaseHTTPRequestHandler):
    server: _ExporterServer
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self._answer(send_body=True)

    def do_HEAD(self) -> None:
        self._answer(send_body=False)

    def _answer(self, *, send_body: bool) -> None:
        if self.path.split("?", 1)[0] != METRICS_PATH:
            payload = b"404 page not found\n"  # Go net/http NotFound
            self.send_response(404)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if send_body:
                self.wfile.write(payload)
            return
        body = self.server.scheduler.body()
        use_gzip = _accepts_gzip(self.headers.get("Accept-Encoding"))
        payload = body.gzipped if use_gzip else body.plain
        self.send_response(200)
        self.send_header("Content-Type", CONTENT_TYPE)
        if use_gzip:
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Vary", "Accept-Encoding")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if send_body:
            try:
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                log.debug("scraper went away before the body was sent")

    def log_message(self, format: str, *args: object) -> None:
        log.debug("%s %s", self.address_string(), format % args)


class _ExporterServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], scheduler: SimulatedScheduler) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, _MetricsHandler)
        self.scheduler = scheduler


class DemoExporter:
    """A running exporter: ``url`` is its ``/metrics`` address; ``stop()`` shuts it down."""

    def __init__(self, server: _ExporterServer, thread: threading.Thread) -> None:
        self._server = server
        self._thread = thread
        host, port = server.server_address[:2]
        host_text = host if isinstance(host, str) else host.decode()
        if ":" in host_text:
            host_text = f"[{host_text}]"
        self.host = host_text
        self.port = int(port)
        self.url = f"http://{host_text}:{self.port}{METRICS_PATH}"

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def wait(self) -> None:
        """Block until ``stop()`` is called from another thread (or the process is interrupted)."""
        while self._thread.is_alive():
            self._thread.join(timeout=0.5)

    def __enter__(self) -> DemoExporter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_demo_exporter(
    host: str = "127.0.0.1",
    port: int = 0,
    nodes: int = 4,
    gpus_per_node: int = 8,
    seed: int = 0,
    drift_seconds: float | None = None,
    *,
    legacy: bool = False,
    both: bool = False,
    replica: str | None = None,
    outcomes: bool = False,
) -> DemoExporter:
    """Serve a simulated scheduler on ``host:port`` (0 picks a free port) in a daemon thread;
    ``replica`` and ``outcomes`` as for ``render_exposition``.

    Raises ``OSError`` when the address cannot be bound and ``ValueError`` on bad sizes.
    """
    scheduler = SimulatedScheduler(
        nodes,
        gpus_per_node,
        seed=seed,
        drift_seconds=drift_seconds,
        legacy=legacy,
        both=both,
        replica=replica,
        outcomes=outcomes,
    )
    server = _ExporterServer((host, port), scheduler)
    thread = threading.Thread(
        target=server.serve_forever,
        kwargs={"poll_interval": 0.2},
        name="demo-exporter",
        daemon=True,
    )
    thread.start()
    return DemoExporter(server, thread)
