"""Socket Mode: the bot opens a websocket to Slack instead of receiving HTTP requests.

``apps.connections.open`` (called with the app-level ``xapp-`` token through the same Web API
base URL) hands out the websocket URL; Bolt's built-in ``SocketModeHandler`` keeps the
connection alive, reconnects, and acknowledges each envelope with the listener's ack payload.
No signing secret is involved: the connection itself is authenticated.

``handle`` is the handler's method for one envelope; ours differs from Bolt's in one call: the
request goes through ``dispatch_observed`` (counted and timed like an HTTP request) instead of
straight to ``app.dispatch``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from slack_bolt import App, BoltRequest
from slack_bolt.adapter.socket_mode import SocketModeHandler
from slack_bolt.adapter.socket_mode.internals import send_response
from slack_sdk.socket_mode.builtin import SocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest

from bot.ops.instrument import dispatch_observed
from bot.ops.metrics import METRICS, OpsMetrics


def retry_headers(envelope: SocketModeRequest) -> dict[str, str | Sequence[str]]:
    """Slack's redelivery headers of an HTTP request, from the envelope's retry fields, so that
    redeliveries are recognised the same way in both modes."""
    headers: dict[str, str | Sequence[str]] = {}
    if envelope.retry_attempt is not None:
        headers["x-slack-retry-num"] = str(envelope.retry_attempt)
    if envelope.retry_reason is not None:
        headers["x-slack-retry-reason"] = envelope.retry_reason
    return headers


class ObservedSocketModeHandler(SocketModeHandler):
    """Bolt's Socket Mode handler, with each envelope dispatched through ``dispatch_observed``."""

    def __init__(self, app: App, app_token: str, *, concurrency: int, metrics: OpsMetrics) -> None:
        super().__init__(app, app_token, concurrency=concurrency)
        self._metrics = metrics

    def handle(self, client: SocketModeClient, req: SocketModeRequest) -> None:  # type: ignore[override]
        started = time.time()
        request = BoltRequest(mode="socket_mode", body=req.payload, headers=retry_headers(req))
        response = dispatch_observed(self.app, request, self._metrics)
        send_response(client, req, response, started)


class SocketModeRunner:
    def __init__(
        self,
        app: App,
        app_token: str,
        *,
        concurrency: int = 10,
        metrics: OpsMetrics = METRICS,
    ) -> None:
        self._handler = ObservedSocketModeHandler(
            app, app_token, concurrency=concurrency, metrics=metrics
        )

    def connect(self) -> SocketModeRunner:
        """Connect and return; envelopes are handled on the handler's own threads."""
        self._handler.connect()  # type: ignore[no-untyped-call]
        return self

    def close(self) -> None:
        self._handler.close()  # type: ignore[no-untyped-call]
