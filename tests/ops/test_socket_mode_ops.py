"""``hami-summary serve --socket-mode``: health, readiness and metrics on the side port."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.slack.conftest import CHANNEL, USER
from tests.slack.test_socket_mode import EnvelopeServer
from tests.support.redis_server import free_port
from tests.support.slack_api import SlackWebApi, running_slack_api

REPO = Path(__file__).resolve().parents[2]


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


@pytest.fixture
def slack_api() -> Iterator[SlackWebApi]:
    yield from running_slack_api()


@pytest.mark.slow
def test_side_port_serves_health_readiness_and_metrics(
    slack_api: SlackWebApi, tmp_path: Path
) -> None:
    envelopes = EnvelopeServer()
    slack_api.socket_mode_url = envelopes.url
    ops_port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "REDIS_"))}
    env.update(
        {
            "PYTHONPATH": str(REPO),
            "SLACK_BOT_TOKEN": slack_api.bot_token,
            "SLACK_APP_TOKEN": slack_api.app_token,
            "SLACK_API_URL": slack_api.base_url,
            "OPS_PORT": str(ops_port),
        }
    )
    log_path = tmp_path / "bot.log"
    with log_path.open("wb") as log:
        bot = subprocess.Popen(
            [sys.executable, "-m", "bot.cli.main", "--log-level", "INFO", "serve", "--socket-mode"],
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        try:
            assert envelopes.connected.wait(30), log_path.read_text()
            base = f"http://127.0.0.1:{ops_port}"
            deadline = time.monotonic() + 10
            # Ready once the websocket is up (the ops port answers 503 before that).
            while True:
                try:
                    status, body = _get(f"{base}/readyz")
                    if status == 200 or time.monotonic() >= deadline:
                        break
                except OSError:
                    assert time.monotonic() < deadline, log_path.read_text()
                time.sleep(0.1)
            ready: dict[str, Any] = json.loads(body)
            assert status == 200 and ready["status"] == "ready", ready
            assert ready["checks"]["redis"]["status"] == "disabled"
            assert _get(f"{base}/healthz") == (200, b'{"status": "alive"}\n')

            envelopes.send(
                {
                    "envelope_id": "env-ops-1",
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
                        "trigger_id": "trig.ops.1",
                        "response_url": slack_api.response_url("ops-help"),
                    },
                }
            )
            envelopes.ack_for("env-ops-1")
            status, metrics = _get(f"{base}/metrics")
            assert status == 200
            assert (
                'hami_summary_requests_total{outcome="ok",surface="command"} 1.0'
                in metrics.decode()
            )
            # No Slack route here: Socket Mode receives nothing over HTTP.
            assert _get(f"{base}/slack/events")[0] == 404
        finally:
            bot.terminate()
            bot.wait(timeout=15)
            envelopes.stop()
    logs = log_path.read_text()
    assert slack_api.bot_token not in logs and slack_api.app_token not in logs
