"""The bot's HTTP server: waitress, one port, Slack at ``/slack/events`` beside the ops routes.

waitress (a maintained, pure-Python WSGI server) speaks HTTP/1.1 with keep-alive, reads
sockets on one event loop and runs requests on a fixed pool of threads, so a thousand idle or
stalled connections cost sockets, not threads. It refuses malformed and oversized
``Content-Length`` values and bounds chunked bodies before the application is called, and
closes connections that stay silent for the idle timeout (``bot.config.HttpSettings``).

The same server serves ``/healthz``, ``/readyz`` and ``/metrics`` on the Socket Mode side port
(``start_ops_server``), where there is no Slack route.

waitress stops only on a signal in the thread that runs it; here its loop runs one poll at a
time so that ``stop()`` can end it from any thread: listening stops at once, requests in
progress get ``drain_seconds`` to finish and be sent, then every connection is closed.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from typing import Any
from wsgiref.types import WSGIApplication

from waitress import wasyncore
from waitress.channel import HTTPChannel
from waitress.server import TcpWSGIServer

from bot.config import HttpSettings
from bot.ops.endpoints import Readiness, ops_routes
from bot.web.responses import never_a_traceback, router

log = logging.getLogger("hami_summary.web")

# One poll of the event loop waits at most this long, so a stop request is seen this soon.
_POLL_SECONDS = 0.2
DEFAULT_DRAIN_SECONDS = 5.0


def _cleanup_interval(idle_timeout_seconds: int) -> int:
    # waitress looks for idle connections every cleanup_interval seconds (30 by default), so
    # a short idle timeout needs a short interval to mean anything.
    return max(1, min(30, idle_timeout_seconds // 2))


class BotHttpServer:
    """``routes`` on ``host:port``; ``start()`` serves in a daemon thread, ``serve_forever()``
    in this one."""

    def __init__(
        self,
        routes: Mapping[str, WSGIApplication],
        *,
        host: str = "0.0.0.0",
        port: int = 3000,
        settings: HttpSettings | None = None,
        name: str = "hami-summary-http",
    ) -> None:
        limits = settings or HttpSettings()
        # waitress's socket map (fd -> listener, connection or wake-up pipe).
        self._map: dict[int, Any] = {}
        self._server = TcpWSGIServer(
            never_a_traceback(router(routes)),
            map=self._map,
            host=host,
            port=port,
            threads=limits.threads,
            channel_timeout=limits.idle_timeout_seconds,
            cleanup_interval=_cleanup_interval(limits.idle_timeout_seconds),
            # waitress refuses lengths >= this value; the limit itself is allowed.
            max_request_body_size=limits.max_body_bytes + 1,
            connection_limit=limits.connection_limit,
            # poll(), unlike select(), is not limited to file descriptors below 1024.
            asyncore_use_poll=True,
            expose_tracebacks=False,
            ident="hami-summary",
        )
        self.host = host
        self.port: int = int(self._server.getsockname()[1])
        self._name = name
        self._stopping = threading.Event()
        # Held while waking the loop and while the loop closes its sockets: once they are
        # closed their file descriptors may be reused, and a wake-up written then would land
        # in another file.
        self._wake_lock = threading.Lock()
        self._closed = False
        self._thread: threading.Thread | None = None
        self._drain_seconds = DEFAULT_DRAIN_SECONDS

    def start(self) -> BotHttpServer:
        self._thread = threading.Thread(target=self.serve_forever, name=self._name, daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        while not self._stopping.is_set():
            wasyncore.loop(timeout=_POLL_SECONDS, use_poll=True, map=self._map, count=1)
        self._close()

    def stop(self, drain_seconds: float = DEFAULT_DRAIN_SECONDS) -> None:
        """Stop listening, let requests in progress finish (at most ``drain_seconds``),
        close every connection. Returns when the server thread has ended."""
        self._drain_seconds = drain_seconds
        self._stopping.set()
        with self._wake_lock:
            if not self._closed:
                self._server.pull_trigger()
        if self._thread is not None:
            self._thread.join(drain_seconds + 5)

    def _channels(self) -> list[HTTPChannel]:
        return [c for c in list(self._map.values()) if isinstance(c, HTTPChannel)]

    def _close(self) -> None:
        # Runs on the loop thread: waitress's objects are not shared with another thread.
        wasyncore.dispatcher.close(self._server)
        deadline = time.monotonic() + self._drain_seconds
        while time.monotonic() < deadline and any(
            c.requests or c.total_outbufs_len for c in self._channels()
        ):
            wasyncore.loop(timeout=0.05, use_poll=True, map=self._map, count=1)
        for channel in self._channels():
            channel.handle_close()
        with self._wake_lock:
            self._closed = True
            wasyncore.close_all(self._map, ignore_all=True)
        self._server.task_dispatcher.shutdown(timeout=1)


def start_ops_server(
    readiness: Readiness,
    *,
    host: str = "0.0.0.0",
    port: int = 8080,
    settings: HttpSettings | None = None,
) -> BotHttpServer:
    """``/healthz``, ``/readyz`` and ``/metrics`` on ``host:port`` in a daemon thread (the
    Socket Mode side port)."""
    server = BotHttpServer(
        ops_routes(readiness), host=host, port=port, settings=settings, name="hami-summary-ops"
    ).start()
    log.info("health, readiness and metrics on port %d", server.port)
    return server
