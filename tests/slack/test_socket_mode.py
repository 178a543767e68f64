"""Socket Mode: the bot gets its websocket URL from ``apps.connections.open`` (local Web API),
connects to a local websocket server, and answers envelopes there."""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from websockets.sync.server import Server, ServerConnection, serve

from bot.clusters.registry import empty_registry
from bot.config import load_config
from bot.slack.assembly import assemble_bot
from bot.store.memory import MemoryStore
from bot.web.socket_mode import SocketModeRunner
from tests.conftest import read_fixture
from tests.slack.conftest import CHANNEL, USER
from tests.slack.test_http_e2e import blocks_text
from tests.support.slack_api import BOT_USER_ID, SlackWebApi


class EnvelopeServer:
    """Plays Slack's Socket Mode endpoint: sends envelopes, collects the bot's acks."""

    def __init__(self) -> None:
        self.connected = threading.Event()
        self.acks: queue.Queue[dict[str, Any]] = queue.Queue()
        self._outbox: queue.Queue[str] = queue.Queue()
        self._server: Server = serve(self._session, "127.0.0.1", 0)
        self.url = f"ws://127.0.0.1:{self._server.socket.getsockname()[1]}/link"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def _session(self, connection: ServerConnection) -> None:
        connection.send(
            json.dumps(
                {"type": "hello", "num_connections": 1, "connection_info": {"app_id": "A0TEST"}}
            )
        )
        self.connected.set()
        while True:
            try:
                outgoing = self._outbox.get(timeout=0.05)
                connection.send(outgoing)
            except queue.Empty:
                pass
            try:
                message = connection.recv(timeout=0.05)
            except TimeoutError:
                continue
            except Exception:
                return
            self.acks.put(json.loads(message))

    def send(self, envelope: dict[str, Any]) -> None:
        self._outbox.put(json.dumps(envelope))

    def ack_for(self, envelope_id: str, timeout: float = 10.0) -> dict[str, Any]:
        while True:
            ack = self.acks.get(timeout=timeout)
            if ack.get("envelope_id") == envelope_id:
                return ack

    def stop(self) -> None:
        self._server.shutdown()


@pytest.fixture
def envelope_server() -> Iterator[EnvelopeServer]:
    server = EnvelopeServer()
    yield server
    server.stop()


@pytest.fixture
def socket_bot(slack_api: SlackWebApi, envelope_server: EnvelopeServer) -> Iterator[None]:
    slack_api.socket_mode_url = envelope_server.url
    config = load_config(
        {
            "SLACK_BOT_TOKEN": slack_api.bot_token,
            "SLACK_APP_TOKEN": slack_api.app_token,
            "SLACK_API_URL": slack_api.base_url,
        }
    )
    bot = assemble_bot(config, store=MemoryStore(), registry=empty_registry(), socket_mode=True)
    runner = SocketModeRunner(bot.app, slack_api.app_token).connect()
    assert envelope_server.connected.wait(10), "the bot never connected to the websocket"
    yield
    runner.close()


def test_socket_mode_connects_with_the_app_token_and_answers_a_slash_command(
    slack_api: SlackWebApi, envelope_server: EnvelopeServer, socket_bot: None
) -> None:
    opened = slack_api.calls_to("apps.connections.open")
    assert opened and opened[0].headers["authorization"] == f"Bearer {slack_api.app_token}"
    envelope_server.send(
        {
            "envelope_id": "env-help-1",
            "type": "slash_commands",
            "accepts_response_payload": True,
            "payload": {
                "token": "unused",
                "team_id": "T0TEST",
                "channel_id": CHANNEL,
                "user_id": USER,
                "command": "/hami-summary",
                "text": "help",
                "api_app_id": "A0TEST",
                "response_url": slack_api.response_url("socket-help"),
                "trigger_id": "trig.1",
            },
        }
    )
    ack = envelope_server.ack_for("env-help-1")
    assert ack["payload"]["response_type"] == "ephemeral"
    assert "Slash commands cannot be used inside threads" in blocks_text(ack["payload"]["blocks"])


def test_socket_mode_answers_a_mention_through_the_web_api(
    slack_api: SlackWebApi, envelope_server: EnvelopeServer, socket_bot: None
) -> None:
    ts = "1720000000.000001"
    envelope_server.send(
        {
            "envelope_id": "env-mention-1",
            "type": "events_api",
            "accepts_response_payload": False,
            "payload": {
                "type": "event_callback",
                "team_id": "T0TEST",
                "event_id": "Ev0SOCK01",
                "event": {
                    "type": "app_mention",
                    "user": USER,
                    "channel": CHANNEL,
                    "ts": ts,
                    "text": f"<@{BOT_USER_ID}> ```{read_fixture('scheduler-small.prom')}```",
                },
            },
        }
    )
    envelope_server.ack_for("env-mention-1")
    update = slack_api.wait_for("chat.update")[0]
    assert "275 / 600 cores" in blocks_text(update.params["blocks"])
