"""instrument_app on a real Bolt app served over HTTP, with requests signed as Slack signs them."""

from __future__ import annotations

import io
import json
import logging
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, make_server

import pytest
from slack_bolt import Ack, App, BoltContext
from slack_bolt.adapter.wsgi import SlackRequestHandler
from slack_sdk import WebClient
from slack_sdk.signature import SignatureVerifier

from bot.ops.instrument import instrument_app, surface_of
from bot.ops.logging import configure_logging
from bot.ops.metrics import OpsMetrics

SIGNING_SECRET = "0123456789abcdef0123456789abcdef"


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


class AuthTestOnlyWebApi:
    """The one Web API method these listeners cause: ``auth.test``, run by Bolt's authorization."""

    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                ok = self.path.endswith("/auth.test")
                payload = (
                    {"ok": True, "team_id": "T1", "user_id": "UBOT", "bot_id": "B1", "team": "t"}
                    if ok
                    else {"ok": False, "error": "unknown_method"}
                )
                body = json.dumps(payload).encode()
                self.send_response(200)  # Slack answers 200 with ok:false for API errors
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/api/"
        threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class BoltUnderTest:
    def __init__(self) -> None:
        self.web_api = AuthTestOnlyWebApi()
        self.metrics = OpsMetrics()
        self.replied = threading.Event()
        # Cleared by a test that needs the lazy work held until the acknowledgement is back.
        self.lazy_may_finish = threading.Event()
        self.lazy_may_finish.set()
        self.lazy_request_ids: list[str] = []
        app = App(
            signing_secret=SIGNING_SECRET,
            client=WebClient(token="xoxb-1-test", base_url=self.web_api.base_url),
        )

        def ack_fast(ack: Ack) -> None:
            ack("working on it")

        def reply_later(context: BoltContext) -> None:
            self.lazy_may_finish.wait(10)
            time.sleep(0.2)  # the "scrape and summarise" part
            self.lazy_request_ids.append(context["request_id"])
            logging.getLogger("hami_summary.test.lazy").info("summary posted")
            self.replied.set()

        app.command("/hami-summary")(ack=ack_fast, lazy=[reply_later])
        instrument_app(app, self.metrics)
        instrument_app(app, self.metrics)  # idempotent: counted once per request
        handler = SlackRequestHandler(app)
        self.server = make_server("127.0.0.1", 0, handler, handler_class=_Quiet)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/slack/events"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def post(self, form: dict[str, str], secret: str = SIGNING_SECRET) -> int:
        body = urllib.parse.urlencode(form)
        timestamp = str(int(time.time()))
        signature = SignatureVerifier(secret).generate_signature(timestamp=timestamp, body=body)
        assert signature is not None
        request = urllib.request.Request(
            self.url,
            data=body.encode(),
            headers={
                "Content-Type": "application/x-www-form-urlencoded",
                "X-Slack-Request-Timestamp": timestamp,
                "X-Slack-Signature": signature,
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                return int(response.status)
        except urllib.error.HTTPError as error:
            return error.code

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.web_api.stop()


@pytest.fixture
def bolt() -> Iterator[BoltUnderTest]:
    running = BoltUnderTest()
    yield running
    running.stop()


@pytest.fixture
def log_stream() -> Iterator[io.StringIO]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    stream = io.StringIO()
    configure_logging("INFO", stream=stream, json_lines=True)
    yield stream
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)


COMMAND = {
    "command": "/hami-summary",
    "text": "help",
    "user_id": "U1",
    "channel_id": "C1",
    "team_id": "T1",
    "response_url": "http://127.0.0.1:9/response",
    "trigger_id": "1.2.3",
}


def test_counts_times_and_tags_a_slash_command(
    bolt: BoltUnderTest, log_stream: io.StringIO
) -> None:
    bolt.lazy_may_finish.clear()
    # The acknowledgement comes back while the lazy work is still held: it does not wait for it.
    assert bolt.post(COMMAND) == 200
    assert not bolt.replied.is_set()
    bolt.lazy_may_finish.set()
    assert bolt.replied.wait(5)
    m = bolt.metrics
    deadline = time.monotonic() + 5  # the reply is timed just after the lazy listener returns
    while not m.value("hami_summary_reply_latency_seconds_count", {"surface": "command"}):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert m.value("hami_summary_requests_total", {"surface": "command", "outcome": "ok"}) == 1
    assert m.value("hami_summary_ack_latency_seconds_count", {"surface": "command"}) == 1
    ack_seconds = m.value("hami_summary_ack_latency_seconds_sum", {"surface": "command"})
    reply_seconds = m.value("hami_summary_reply_latency_seconds_sum", {"surface": "command"})
    # The reply latency covers the held lazy work and its 0.2 s; the acknowledgement's does not.
    assert m.value("hami_summary_reply_latency_seconds_count", {"surface": "command"}) == 1
    assert reply_seconds >= 0.2
    assert 0 < ack_seconds < reply_seconds - 0.2

    records = [json.loads(line) for line in log_stream.getvalue().splitlines()]
    request_lines = [r for r in records if r["logger"] == "hami_summary.requests"]
    assert len(request_lines) == 1
    line = request_lines[0]
    assert line["surface"] == "command" and line["outcome"] == "ok" and line["status"] == 200
    # The lazy listener saw the same request id the log line carries, and its own log lines
    # (on another thread) carry it too.
    assert bolt.lazy_request_ids == [line["request_id"]]
    lazy_lines = [r for r in records if r["logger"] == "hami_summary.test.lazy"]
    assert [r["request_id"] for r in lazy_lines] == [line["request_id"]]


def test_a_badly_signed_request_is_counted_as_unauthorized(bolt: BoltUnderTest) -> None:
    assert bolt.post(COMMAND, secret="f" * 32) == 401
    assert (
        bolt.metrics.value(
            "hami_summary_requests_total", {"surface": "command", "outcome": "unauthorized"}
        )
        == 1
    )
    assert not bolt.replied.wait(0.3)


def test_an_unhandled_request_is_counted(bolt: BoltUnderTest) -> None:
    assert bolt.post({**COMMAND, "command": "/something-else"}) == 404
    assert (
        bolt.metrics.value(
            "hami_summary_requests_total", {"surface": "command", "outcome": "unhandled"}
        )
        == 1
    )


@pytest.mark.parametrize(
    ("body", "surface"),
    [
        ({"command": "/hami-summary"}, "command"),
        ({"type": "event_callback", "event": {"type": "app_mention"}}, "event:app_mention"),
        ({"type": "event_callback", "event": {"type": "message"}}, "event:message"),
        ({"type": "event_callback", "event": {"type": "reaction_added"}}, "event:other"),
        ({"type": "block_actions"}, "action"),
        ({"type": "message_action"}, "message_shortcut"),
        ({"type": "view_submission"}, "view"),
        ({"type": "url_verification"}, "url_verification"),
        ({"type": "made-up"}, "other"),
        ({}, "other"),
    ],
)
def test_surfaces_are_a_bounded_set(body: dict[str, Any], surface: str) -> None:
    assert surface_of(body) == surface
