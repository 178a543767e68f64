"""The bot's WSGI server in-thread: generic 500s, draining on stop, the metrics app's HEAD;
and ``serve`` refusing unusable limits."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterable
from wsgiref.types import StartResponse, WSGIEnvironment

import pytest

from bot.ops.endpoints import Readiness
from bot.web.server import BotHttpServer, start_ops_server
from tests.web.serve_process import REPO


def _fetch(url: str, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def _broken(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
    raise RuntimeError("a bug with a secret path /srv/internal/module.py")


def test_an_unexpected_error_is_a_json_500_naming_an_id_that_the_log_has(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = BotHttpServer({"/broken": _broken}, host="127.0.0.1", port=0).start()
    try:
        with caplog.at_level(logging.ERROR, logger="hami_summary.web"):
            status, headers, body = _fetch(f"http://127.0.0.1:{server.port}/broken")
    finally:
        server.stop()
    assert status == 500 and headers["Content-Type"] == "application/json"
    answer = json.loads(body)
    assert answer["error"] == "internal error" and len(answer["error_id"]) == 12
    assert b"Traceback" not in body and b"/srv/internal" not in body
    [record] = [r for r in caplog.records if answer["error_id"] in r.getMessage()]
    assert record.exc_info is not None  # the operator gets the traceback, in the log


def test_stop_lets_the_request_in_progress_finish_then_refuses_connections() -> None:
    entered, release = threading.Event(), threading.Event()

    def slow(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        entered.set()
        release.wait(10)
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"finished"]

    server = BotHttpServer({"/slow": slow}, host="127.0.0.1", port=0).start()
    url = f"http://127.0.0.1:{server.port}/slow"
    answers: list[tuple[int, dict[str, str], bytes]] = []
    client = threading.Thread(target=lambda: answers.append(_fetch(url)))
    client.start()
    assert entered.wait(10)
    stopper = threading.Thread(target=server.stop)
    stopper.start()
    release.set()
    stopper.join(15)
    client.join(15)
    assert answers and answers[0][0] == 200 and answers[0][2] == b"finished"
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(url, timeout=2)


def test_the_ops_port_serves_metrics_for_get_and_head_and_nothing_else() -> None:
    readiness = Readiness()
    server = start_ops_server(readiness, host="127.0.0.1", port=0)
    base = f"http://127.0.0.1:{server.port}"
    try:
        status, headers, body = _fetch(f"{base}/metrics")
        assert status == 200 and b"hami_summary_build_info" in body
        assert headers["Content-Type"].startswith("text/plain; version=0.0.4")
        status, _, body = _fetch(f"{base}/metrics", method="HEAD")
        assert status == 200 and body == b""
        status, _, body = _fetch(f"{base}/metrics", method="POST")
        assert status == 405 and b"use GET" in body
        status, _, body = _fetch(f"{base}/slack/events", method="POST")
        assert status == 404 and b"/healthz, /metrics, /readyz" in body
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("HAMI_SUMMARY_HTTP_THREADS", "0"),
        ("HAMI_SUMMARY_HTTP_IDLE_TIMEOUT_SECONDS", "1.5"),
        ("HAMI_SUMMARY_HTTP_MAX_BODY_BYTES", "-1"),
        ("HAMI_SUMMARY_HTTP_CONNECTION_LIMIT", "lots"),
    ],
)
@pytest.mark.slow
def test_serve_refuses_an_unusable_limit_naming_it(name: str, value: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "HAMI_"))}
    env.update({"SLACK_BOT_TOKEN": "xoxb-1-unused", "SLACK_SIGNING_SECRET": "s" * 32, name: value})
    result = subprocess.run(
        [sys.executable, "-m", "bot.cli.main", "serve", "--port", "0"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert f"{name}={value!r} must be a whole number from " in result.stderr
    assert "Traceback" not in result.stderr
