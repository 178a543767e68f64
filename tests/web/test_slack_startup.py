"""``hami-summary serve`` stays up while Slack is unreachable or failing, and says so.

Acceptance: with the Slack Web API unreachable for 30 s, ``/healthz`` answers 200 throughout,
``/readyz`` answers 503 naming Slack and the next try, and the bot becomes ready (and answers
Slack) once the API answers, without a restart.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.slack.conftest import SlackSender
from tests.slack.test_http_e2e import blocks_text
from tests.slack.test_socket_mode import EnvelopeServer
from tests.support.redis_server import free_port
from tests.support.slack_api import SlackWebApi, running_slack_api
from tests.web.forwarder import Forwarder
from tests.web.serve_process import ServeProcess, http_env

pytestmark = pytest.mark.slow

OUTAGE_SECONDS = 30


@pytest.fixture
def slack_api() -> Iterator[SlackWebApi]:
    yield from running_slack_api()


def warnings_about_slack(logs: str, start: str = "not ready: auth.test failed") -> list[str]:
    records = [json.loads(line) for line in logs.splitlines() if line.startswith("{")]
    return [
        r["message"] for r in records if r["level"] == "warning" and r["message"].startswith(start)
    ]


def test_unreachable_slack_keeps_the_pod_up_and_unready_until_it_answers(
    slack_api: SlackWebApi, tmp_path: Path
) -> None:
    later = Forwarder(slack_api.port)  # nothing listens on its port yet
    api_url = f"http://127.0.0.1:{later.port}/api/"
    served = ServeProcess(http_env(api_url, slack_api.bot_token), tmp_path / "serve.log")
    try:
        served.wait_for("/healthz", 200)
        started = time.monotonic()
        sender = SlackSender(served.base + "/slack/events")
        seen: list[dict[str, Any]] = []
        while time.monotonic() - started < OUTAGE_SECONDS:
            assert served.get("/healthz") == (200, {"status": "alive"})
            status, body = served.get("/readyz")
            assert status == 503, body
            seen.append(body)
            time.sleep(1)
        assert served.process.poll() is None
        reason = seen[-1]["reason"]
        assert reason.startswith(f"slack: auth.test failed: cannot reach {api_url}: ")
        assert "Connection refused" in reason and "; retrying in " in reason
        command = sender.command("help", response_url=slack_api.response_url("outage"))
        assert command.status == 503 and b"auth.test failed" in command.body

        later.open()
        served.wait_for("/readyz", 200, timeout_seconds=70)
        command = sender.command("help", response_url=slack_api.response_url("after"))
        assert command.status == 200
        assert "/hami-summary clusters" in blocks_text(command.json()["blocks"])
    finally:
        assert served.stop() == 0
        later.close()
    # About six failed tries in the outage, one warning: logged once per state change.
    assert len(warnings_about_slack(served.logs())) == 1
    assert "Slack accepted the bot token (team Test): ready" in served.logs()


class FailingAuthTest(SlackWebApi):
    """auth.test answers ``fatal_error`` (as Slack does in an incident) ``failures`` times."""

    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures_left = failures

    def _auth_test(self, params: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            failing = self.failures_left > 0
            self.failures_left -= failing
        if failing:
            return {"ok": False, "error": "fatal_error"}
        return super()._auth_test(params)


def test_failing_auth_test_is_retried_with_back_off_and_readiness_follows(
    tmp_path: Path,
) -> None:
    api = FailingAuthTest(failures=3).start()
    served = ServeProcess(http_env(api.base_url, api.bot_token), tmp_path / "serve.log")
    try:
        body = served.wait_for("/readyz", 503)
        while "retrying" not in body.get("reason", ""):
            body = served.wait_for("/readyz", 503)
        assert body["failing"] == ["slack"]
        assert body["checks"]["slack"]["status"] == "failed"
        assert body["reason"].startswith("slack: auth.test failed: fatal_error; retrying in ")

        ready = served.wait_for("/readyz", 200, timeout_seconds=30)
        assert ready["checks"]["slack"] == {
            "status": "ok",
            "detail": "auth.test accepted the bot token (team Test)",
        }
    finally:
        assert served.stop() == 0
        api.stop()
    tries = [c.at for c in api.calls_to("auth.test")]
    # Three refused tries 1 s and 2 s and 4 s apart, then the start-up check and Bolt's own.
    assert len(tries) == 5
    gaps = [b - a for a, b in itertools.pairwise(tries[:4])]
    assert gaps[1] > gaps[0] * 1.5 and gaps[2] > gaps[1] * 1.5, f"no back-off: {gaps}"
    assert warnings_about_slack(served.logs()) == [
        "not ready: auth.test failed: fatal_error; retrying with back-off up to 60 s "
        "(logged again when the reason changes)"
    ]


def test_socket_mode_waits_unready_until_slack_hands_out_a_websocket(
    slack_api: SlackWebApi, tmp_path: Path
) -> None:
    # apps.connections.open answers socket_mode_not_enabled until the app has Socket Mode on.
    envelopes = EnvelopeServer()
    ops_port = free_port()
    env = {
        "SLACK_BOT_TOKEN": slack_api.bot_token,
        "SLACK_APP_TOKEN": slack_api.app_token,
        "SLACK_API_URL": slack_api.base_url,
        "OPS_PORT": str(ops_port),
    }
    served = ServeProcess(env, tmp_path / "serve.log", args=["--socket-mode"], port=ops_port)
    try:
        body = served.wait_for("/readyz", 503)
        while "retrying" not in body.get("reason", ""):
            body = served.wait_for("/readyz", 503)
        assert body["reason"].startswith(
            "slack: connecting to Slack failed: socket_mode_not_enabled; retrying in "
        )
        assert served.get("/healthz") == (200, {"status": "alive"})

        slack_api.socket_mode_url = envelopes.url
        assert envelopes.connected.wait(30), served.logs()[-3000:]
        served.wait_for("/readyz", 200, timeout_seconds=30)
    finally:
        assert served.stop() == 0
        envelopes.stop()
    assert len(warnings_about_slack(served.logs(), "not ready: connecting to Slack failed")) == 1
    # One auth.test per try, and Bolt's own once: the app is built once, only the websocket is
    # tried again.
    opens = len(slack_api.calls_to("apps.connections.open"))
    assert opens >= 2 and len(slack_api.calls_to("auth.test")) == opens + 1
