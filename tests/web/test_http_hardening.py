"""Hostile HTTP against the real ``hami-summary serve``: lengths, encodings, stalled bodies.

The server is the production one (waitress behind the bot's WSGI checks), started as a process
with a short idle timeout and a 64 KiB body limit so that the limits are reached quickly.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import socket
import time
import urllib.parse
from collections.abc import Iterator

import pytest

from tests.slack.conftest import SIGNING_SECRET
from tests.support.slack_api import SlackWebApi, running_slack_api
from tests.web.serve_process import (
    ServeProcess,
    http_env,
    raw_exchange,
    read_until_closed,
    status_of,
)

pytestmark = pytest.mark.slow

IDLE_TIMEOUT_SECONDS = 2
MAX_BODY_BYTES = 64 * 1024
THREADS = 4


@pytest.fixture(scope="module")
def slack_api() -> Iterator[SlackWebApi]:
    yield from running_slack_api()


@pytest.fixture(scope="module")
def served(
    slack_api: SlackWebApi, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServeProcess]:
    env = http_env(
        slack_api.base_url,
        slack_api.bot_token,
        HAMI_SUMMARY_HTTP_IDLE_TIMEOUT_SECONDS=str(IDLE_TIMEOUT_SECONDS),
        HAMI_SUMMARY_HTTP_MAX_BODY_BYTES=str(MAX_BODY_BYTES),
        HAMI_SUMMARY_HTTP_THREADS=str(THREADS),
    )
    process = ServeProcess(env, tmp_path_factory.mktemp("serve") / "serve.log")
    process.wait_for("/readyz", 200)
    yield process
    assert process.stop() == 0
    assert "Traceback" not in process.logs()  # nothing here is an internal error


def post(path: str, headers: dict[str, str], body: bytes = b"") -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def signed_headers(body: bytes, content_type: str) -> dict[str, str]:
    stamp = str(int(time.time()))
    digest = hmac.new(
        SIGNING_SECRET.encode(), b"v0:" + stamp.encode() + b":" + body, hashlib.sha256
    ).hexdigest()
    return {
        "Content-Type": content_type,
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": f"v0={digest}",
    }


def command_body(text: str = "help") -> bytes:
    return urllib.parse.urlencode(
        {
            "command": "/hami-summary",
            "text": text,
            "user_id": "U0ALICE1",
            "channel_id": "C0TEAM01",
            "team_id": "T0TEST",
            "trigger_id": f"trig.{time.monotonic_ns()}",
            "response_url": "http://127.0.0.1:9/response/unused",
        }
    ).encode()


def body_of(response: bytes) -> bytes:
    return response.split(b"\r\n\r\n", 1)[1]


@pytest.mark.parametrize(
    ("length", "status"),
    [("-1", 400), ("abc", 400), ("1e3", 400), (" 12x", 400), (str(300 * 1024 * 1024), 413)],
)
def test_bad_or_oversized_content_length_is_refused_before_the_body(
    served: ServeProcess, length: str, status: int
) -> None:
    # A few bytes follow the header: the server must answer without waiting for the rest.
    response = raw_exchange(
        served.port, post("/slack/events", {"Content-Length": length}, b"payload=x"), timeout=5
    )
    assert status_of(response) == status
    assert b"Traceback" not in response and b'File "' not in response


def test_missing_content_length_gets_411(served: ServeProcess) -> None:
    response = raw_exchange(served.port, post("/slack/events", {}))
    assert status_of(response) == 411
    assert json.loads(body_of(response)) == {"error": "a Content-Length header is required"}


def test_a_signed_body_that_is_not_utf8_gets_400_not_a_traceback(served: ServeProcess) -> None:
    body = b"command=%2Fhami-summary&text=\xff\xfe\xc3("
    headers = {
        "Content-Length": str(len(body)),
        **signed_headers(body, "application/x-www-form-urlencoded"),
    }
    response = raw_exchange(served.port, post("/slack/events", headers, body))
    assert status_of(response) == 400
    assert json.loads(body_of(response)) == {
        "error": "the body is not valid UTF-8 (first bad byte at offset 29)"
    }


def test_a_body_that_is_not_a_slack_payload_gets_400(served: ServeProcess) -> None:
    body = b"payload=%5B1%5D"  # a form whose payload is a JSON list
    headers = {
        "Content-Length": str(len(body)),
        **signed_headers(body, "application/x-www-form-urlencoded"),
    }
    response = raw_exchange(served.port, post("/slack/events", headers, body))
    assert status_of(response) == 400
    assert b"not a Slack request" in body_of(response)


def chunked(body: bytes, size: int = 4096) -> bytes:
    parts = [
        f"{len(body[i : i + size]):x}\r\n".encode() + body[i : i + size] + b"\r\n"
        for i in range(0, len(body), size)
    ]
    return b"".join(parts) + b"0\r\n\r\n"


def test_chunked_bodies_are_read_within_the_limit(served: ServeProcess) -> None:
    body = command_body()
    headers = {
        "Transfer-Encoding": "chunked",
        **signed_headers(body, "application/x-www-form-urlencoded"),
    }
    response = raw_exchange(served.port, post("/slack/events", headers, chunked(body, 16)))
    assert status_of(response) == 200
    assert b"/hami-summary clusters" in body_of(response)

    too_big = b"x" * (MAX_BODY_BYTES + 1024)
    response = raw_exchange(
        served.port, post("/slack/events", {"Transfer-Encoding": "chunked"}, chunked(too_big))
    )
    assert status_of(response) == 413


def test_connections_that_never_send_their_body_are_closed_and_hold_no_thread(
    served: ServeProcess,
) -> None:
    stalled = []
    for _ in range(100):
        sock = socket.create_connection(("127.0.0.1", served.port), timeout=30)
        sock.sendall(post("/slack/events", {"Content-Length": "1000"}, b"payload="))
        stalled.append(sock)
    try:
        # While they hang, the server answers at once and has not grown a thread per
        # connection (the request pool, Bolt's and the process's own threads only).
        assert served.get("/healthz", timeout=2) == (200, {"status": "alive"})
        assert served.proc_status("Threads") <= THREADS + 30
        # Each is closed by the server after the idle timeout, without an answer.
        for sock in stalled:
            assert read_until_closed(sock) == b""
    finally:
        for sock in stalled:
            sock.close()
    assert served.get("/healthz", timeout=2)[0] == 200


def stream(port: int, head: bytes, total_bytes: int) -> int:
    """Send ``head`` then zeros until ``total_bytes`` or until the server hangs up; the
    number of body bytes the kernel accepted."""
    sent = 0
    block = bytes(1024 * 1024)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head)
        try:
            while sent < total_bytes:
                sock.sendall(block)
                sent += len(block)
        except OSError:
            pass
    return sent


def test_oversized_uploads_are_cut_off_without_the_process_growing(
    served: ServeProcess,
) -> None:
    total = 300 * 1024 * 1024
    before_kb = served.proc_status("VmRSS")
    attempts = [
        post("/slack/events", {"Content-Length": "-1"}),
        post("/slack/events", {"Content-Length": str(total)}),
        post("/slack/events", {"Transfer-Encoding": "chunked"}) + f"{total:x}\r\n".encode(),
    ]
    for head in attempts:
        sent = stream(served.port, head, total)
        assert sent < total // 4, f"the server read {sent} bytes of {head[:80]!r}"
    grown_kb = served.proc_status("VmRSS") - before_kb
    assert grown_kb < 32 * 1024, f"resident memory grew by {grown_kb} kB"
    assert served.get("/healthz", timeout=2)[0] == 200
