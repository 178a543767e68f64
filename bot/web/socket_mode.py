"""Socket Mode: the bot opens a websocket to Slack instead of receiving HTTP requests.

``apps.connections.open`` (called with the app-level ``xapp-`` token through the same Web API
base URL) hands out the websocket URL; Bolt's built-in ``SocketModeHandler`` keeps the
connection alive, reconnects, and acknowledges each envelope with the listener's ack payload.
No signing secret is involved: the connection itself is authenticated.
"""

from __future__ import annotations

from slack_bolt import App
from slack_bolt.adapter.socket_mode import SocketModeHandler


class SocketModeRunner:
    def __init__(self, app: App, app_token: str, *, concurrency: int = 10) -> None:
        self._handler = SocketModeHandler(app, app_token, concurrency=concurrency)

    def connect(self) -> SocketModeRunner:
        """Connect and return; envelopes are handled on the handler's own threads."""
        self._handler.connect()  # type: ignore[no-untyped-call]
        return self

    def close(self) -> None:
        self._handler.close()  # type: ignore[no-untyped-call]
