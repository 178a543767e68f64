"""``hami-summary serve`` as a process: HTTP mode on a loopback port, stops on SIGTERM."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.slack.conftest import SIGNING_SECRET, SlackSender
from tests.slack.test_http_e2e import blocks_text
from tests.support.redis_server import free_port
from tests.support.slack_api import SlackWebApi
from tests.web.serve_process import ServeProcess as BotProcess
from tests.web.serve_process import http_env


def serve_env(api: SlackWebApi, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "HAMI_", "REDIS_"))}
    env.update({"SLACK_API_URL": api.base_url, "MPLBACKEND": "Agg", **extra})
    return env


@dataclass
class ServeProcess:
    process: subprocess.Popen[str]
    url: str


@pytest.fixture
def served(slack_api: SlackWebApi) -> Iterator[ServeProcess]:
    env = serve_env(
        slack_api, SLACK_BOT_TOKEN=slack_api.bot_token, SLACK_SIGNING_SECRET=SIGNING_SECRET
    )
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bot.cli.main",
            "--log-level",
            "INFO",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
        ],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    url = None
    for line in process.stderr:
        found = re.search(r"listening on (http://\S+)", line)
        if found:
            url = found.group(1)
            break
    assert url is not None, "serve never said where it listens"
    yield ServeProcess(process, url)
    if process.poll() is None:
        process.kill()
        process.wait()


@pytest.mark.slow  # its fixture starts `hami-summary serve`
def test_serve_answers_signed_requests_and_health_and_stops_on_sigterm(
    slack_api: SlackWebApi, served: ServeProcess
) -> None:
    sender = SlackSender(served.url)
    response = sender.command("help", response_url=slack_api.response_url("cli"))
    assert response.status == 200
    assert "/hami-summary clusters" in blocks_text(response.json()["blocks"])
    unsigned = sender.post(
        "command=%2Fhami-summary&text=help", "application/x-www-form-urlencoded", signed=False
    )
    assert unsigned.status == 401
    root = served.url.removesuffix("/slack/events")
    with urllib.request.urlopen(root + "/healthz", timeout=5) as health:
        assert health.status == 200
    with urllib.request.urlopen(root + "/readyz", timeout=5) as ready:
        assert ready.status == 200
    served.process.send_signal(signal.SIGTERM)
    assert served.process.wait(timeout=15) == 0
    assert served.process.stderr is not None
    logs = served.process.stderr.read()
    assert slack_api.bot_token not in logs and SIGNING_SECRET not in logs


@pytest.mark.slow
def test_serve_without_credentials_says_what_to_set(slack_api: SlackWebApi) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "bot.cli.main", "serve"],
        env=serve_env(slack_api),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "SLACK_BOT_TOKEN is not set" in result.stderr
    assert "hami-summary chat --example" in result.stderr


@pytest.mark.slow
def test_serve_with_a_rejected_token_stays_up_not_ready_without_echoing_it(
    slack_api: SlackWebApi, tmp_path: Path
) -> None:
    wrong = "xoxb-9999-wrong-token"
    served = BotProcess(http_env(slack_api.base_url, wrong), tmp_path / "serve.log")
    try:
        body = served.wait_for("/readyz", 503)
        while "retrying" not in body.get("reason", ""):
            body = served.wait_for("/readyz", 503)
        assert body["failing"] == ["slack"]
        assert body["reason"].startswith(
            "slack: auth.test failed: invalid_auth, Slack refused the token "
            "(check SLACK_BOT_TOKEN); retrying in "
        )
        assert served.get("/healthz") == (200, {"status": "alive"})
        # Slack's requests are not taken until the token is accepted; Slack retries them.
        response = SlackSender(served.base + "/slack/events").command(
            "help", response_url=slack_api.response_url("refused")
        )
        assert response.status == 503 and b"invalid_auth" in response.body
    finally:
        assert served.stop() == 0
    logs = served.logs()
    assert wrong not in logs and "Traceback" not in logs
    assert "auth.test failed: invalid_auth" in logs


@pytest.mark.slow
def test_socket_mode_needs_an_app_token(slack_api: SlackWebApi) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "bot.cli.main", "serve", "--socket-mode"],
        env=serve_env(slack_api, SLACK_BOT_TOKEN=slack_api.bot_token),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "SLACK_APP_TOKEN" in result.stderr and "connections:write" in result.stderr


@pytest.mark.slow
def test_serve_logs_json_from_its_first_line_without_bolt_warnings_or_secrets(
    slack_api: SlackWebApi,
) -> None:
    redis_password = "r3dis-pw-7731"
    closed = free_port()  # nothing listens: the store says Redis is unavailable at start
    env = serve_env(
        slack_api,
        SLACK_BOT_TOKEN=slack_api.bot_token,
        SLACK_SIGNING_SECRET=SIGNING_SECRET,
        REDIS_URL=f"redis://:{redis_password}@127.0.0.1:{closed}/0",
    )
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bot.cli.main",
            "--log-level",
            "INFO",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
        ],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        before_listening = []
        for line in process.stderr:
            if "listening on http://" in line:
                break
            before_listening.append(line)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=15) == 0
        rest = process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert before_listening, "serve logged nothing before it listened"
    records = [json.loads(line) for line in before_listening]  # every line is JSON
    assert [r["logger"] for r in records[:2]] == ["hami_summary.store"] * 2
    assert records[0]["message"] == "state in one Redis, keys under hami-summary:"
    assert records[1]["message"].startswith("Redis unavailable")
    logs = "".join(before_listening) + rest
    assert "will be unused" not in logs  # Bolt got one token, the client's
    for secret in (slack_api.bot_token, SIGNING_SECRET, redis_password):
        assert secret not in logs


@pytest.mark.slow
def test_serve_with_an_unusable_registry_stops_with_file_line_and_field(
    slack_api: SlackWebApi,
    tmp_path: Path,
) -> None:
    registry = tmp_path / "clusters.yaml"
    registry.write_text(
        "clusters:\n  - name: demo\n    metrics_url: http://127.0.0.1:9/metrics\n"
        "    runtime_allowd: true\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "bot.cli.main", "serve", "--port", "0"],
        env=serve_env(
            slack_api,
            SLACK_BOT_TOKEN=slack_api.bot_token,
            SLACK_SIGNING_SECRET=SIGNING_SECRET,
            HAMI_CLUSTERS_FILE=str(registry),
        ),
        capture_output=True,
        text=True,
        timeout=60,
    )
    # A configuration error ends the process (the pod restarts with the message in its log)
    # rather than leaving it running and unready.
    assert result.returncode == 2
    assert f"{registry}:4" in result.stderr and "runtime_allowd" in result.stderr
    assert "Traceback" not in result.stderr
    assert slack_api.calls_to("auth.test") == []  # stopped before reaching Slack
