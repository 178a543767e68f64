"""HTTP mode: a threaded WSGI server on ``$PORT`` with Slack at ``/slack/events``.

The stdlib ``wsgiref`` server is made concurrent with ``ThreadingMixIn`` (one thread per
request), so a slow Slack request never blocks a health probe. Routes are a plain mapping of
path to WSGI application: the operations endpoints (``/healthz``, ``/readyz``, ``/metrics``
from ``bot.ops``) plug in without changes here.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterable, Mapping
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server
from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

from slack_bolt import App
from slack_bolt.adapter.wsgi import SlackRequestHandler

log = logging.getLogger("hami_summary.web")

SLACK_EVENTS_PATH = "/slack/events"
# Slack's requests are small (an event, a command, an interaction payload); anything much
# larger is not from Slack and is refused before it is read.
MAX_BODY_BYTES = 4 * 1024 * 1024


def _plain(start_response: StartResponse, status: str, message: str) -> list[bytes]:
    body = json.dumps({"error": message}).encode("utf-8")
    start_response(
        status, [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
    )
    return [body]


def slack_route(app: App, path: str = SLACK_EVENTS_PATH) -> dict[str, WSGIApplication]:
    """``{path: Bolt's WSGI adapter}``: signature check and dispatch happen inside Bolt."""
    handler = SlackRequestHandler(app, path)

    def slack(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > MAX_BODY_BYTES:
            return _plain(start_response, "413 Payload Too Large", "request body too large")
        return handler(environ, start_response)

    return {path: slack}


def router(routes: Mapping[str, WSGIApplication]) -> WSGIApplication:
    """Dispatch on the exact path; 404 naming the served paths otherwise."""

    def app(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        target = routes.get(environ.get("PATH_INFO") or "/")
        if target is None:
            return _plain(start_response, "404 Not Found",
                          "no such path; served: " + ", ".join(sorted(routes)))
        return target(environ, start_response)

    return app


class _ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    # Slack retries when no answer comes in 3 s: a deep listen queue keeps bursts waiting
    # briefly instead of refused.
    request_queue_size = 128


class _LoggingHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        log.debug("http %s %s", self.address_string(), format % args)


class BotHttpServer:
    """The bot's web server; ``start()`` serves in a daemon thread, ``serve_forever()`` here."""

    def __init__(self, routes: Mapping[str, WSGIApplication], *, host: str = "0.0.0.0",
                 port: int = 3000) -> None:
        self._server = make_server(
            host, port, router(routes), server_class=_ThreadingWSGIServer,
            handler_class=_LoggingHandler,
        )
        self.host = host
        self.port: int = self._server.server_address[1]
        self._thread: threading.Thread | None = None

    def start(self) -> BotHttpServer:
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.2},
            name="hami-summary-http", daemon=True,
        )
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._server.serve_forever(poll_interval=0.5)

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
