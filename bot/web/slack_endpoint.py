"""``/slack/events``: the request is checked and read here, then handed to Bolt.

Before a byte of the body is read: only POST; a ``Content-Length`` is required (411 without
one), must be plain digits (400 for ``-1``, ``abc``, ``1e3``) and at most the limit (413). The
server in front (waitress) refuses malformed and oversized lengths itself and turns a chunked
body into a counted one, bounded by the same limit, so these checks are the second line. Then
exactly that many bytes are read; a body that is not UTF-8 (Slack sends only UTF-8) or not a
Slack payload gets 400. Bolt checks the signature and dispatches; the dispatch is counted and
timed (``bot.ops.instrument.dispatch_observed``).

Until the Slack connection is up (``auth.test`` accepted the token), the endpoint answers 503,
and Slack delivers the request again later.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from wsgiref.types import StartResponse, WSGIEnvironment

from slack_bolt import App, BoltRequest, BoltResponse
from slack_bolt.adapter.wsgi.http_request import WsgiHttpRequest
from slack_bolt.adapter.wsgi.http_response import WsgiHttpResponse

from bot.config import DEFAULT_MAX_BODY_BYTES
from bot.ops.instrument import dispatch_observed
from bot.ops.metrics import METRICS, OpsMetrics
from bot.web.responses import error_response

SLACK_EVENTS_PATH = "/slack/events"
# A length with more digits than this is larger than any limit (and than int() likes).
_MAX_LENGTH_DIGITS = 18


class RequestRefused(Exception):
    """The request is refused before Bolt sees it; ``status`` and ``message`` are the answer."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def declared_length(environ: WSGIEnvironment, max_bytes: int) -> int:
    """The body length the client declared, checked before anything is read."""
    if environ.get("HTTP_TRANSFER_ENCODING"):
        # Only reached behind a server that passes chunked bodies through undecoded.
        raise RequestRefused("411 Length Required", "send the body with a Content-Length")
    raw = environ.get("CONTENT_LENGTH")
    if raw is None or raw == "":
        raise RequestRefused("411 Length Required", "a Content-Length header is required")
    if not (raw.isascii() and raw.isdigit()):
        raise RequestRefused(
            "400 Bad Request", "Content-Length must be a whole number of bytes (digits only)"
        )
    if len(raw) > _MAX_LENGTH_DIGITS or int(raw) > max_bytes:
        raise RequestRefused(
            "413 Payload Too Large", f"the body is larger than the limit of {max_bytes} bytes"
        )
    return int(raw)


def read_text(environ: WSGIEnvironment, max_bytes: int) -> str:
    """The whole body as text: at most ``max_bytes`` read, UTF-8 required."""
    length = declared_length(environ, max_bytes)
    body = environ["wsgi.input"].read(length) if length else b""
    if len(body) != length:
        raise RequestRefused("400 Bad Request", "the body is shorter than its Content-Length")
    try:
        return bytes(body).decode("utf-8")
    except UnicodeDecodeError as error:
        raise RequestRefused(
            "400 Bad Request",
            f"the body is not valid UTF-8 (first bad byte at offset {error.start})",
        ) from None


def bolt_request(environ: WSGIEnvironment, text: str) -> BoltRequest:
    """Bolt's request; Bolt parses the body on construction, before checking the signature,
    so a body that is not JSON or a form with a JSON ``payload`` is refused here."""
    try:
        return BoltRequest(
            body=text,
            query=environ.get("QUERY_STRING", ""),
            headers=WsgiHttpRequest(environ).get_headers(),
        )
    except (ValueError, AttributeError, TypeError, KeyError, IndexError):
        raise RequestRefused(
            "400 Bad Request",
            "the body is not a Slack request (JSON, or a form whose payload is a JSON object)",
        ) from None


class SlackEndpoint:
    """The WSGI app at ``/slack/events``; Bolt's app is attached once Slack accepted the token
    (``not_ready`` says why not until then)."""

    def __init__(
        self,
        app: App | None = None,
        *,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        not_ready: Callable[[], str] = lambda: "the Slack connection is not up yet",
        metrics: OpsMetrics = METRICS,
    ) -> None:
        self._app = app
        self._metrics = metrics
        self._lock = threading.Lock()
        self.max_body_bytes = max_body_bytes
        self._not_ready = not_ready

    def attach(self, app: App) -> None:
        with self._lock:
            self._app = app

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        method = environ.get("REQUEST_METHOD", "GET")
        if method != "POST":
            return error_response(
                start_response, "405 Method Not Allowed", "Slack requests are POSTed here"
            )
        with self._lock:
            app = self._app
        try:
            text = read_text(environ, self.max_body_bytes)
            if app is None:
                raise RequestRefused("503 Service Unavailable", f"not ready: {self._not_ready()}")
            request = bolt_request(environ, text)
        except RequestRefused as refused:
            return error_response(start_response, refused.status, refused.message)
        return _to_wsgi(dispatch_observed(app, request, self._metrics), start_response)


def _to_wsgi(response: BoltResponse, start_response: StartResponse) -> list[bytes]:
    converted = WsgiHttpResponse(
        status=response.status, headers=response.headers, body=response.body
    )
    start_response(converted.status, converted.get_headers())
    return list(converted.get_body())
