"""The real bot on a loopback port, a local Slack Web API, and requests signed like Slack's.

``bot`` runs the same assembly as ``hami-summary serve`` (``bot.slack.assembly``) behind the
real threaded WSGI server; ``SlackSender`` signs each request with
``slack_sdk.signature.SignatureVerifier`` exactly as Slack does (v0 HMAC-SHA256 over
``v0:{timestamp}:{body}``).
"""

from __future__ import annotations

import itertools
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from slack_sdk.signature import SignatureVerifier

from bot.clusters.registry import ClusterRegistry, empty_registry, load_registry
from bot.config import load_config
from bot.notify.records import NotifyRecords
from bot.ops.metrics import METRICS, OpsMetrics
from bot.slack.app import drain
from bot.slack.assembly import SlackBot, assemble_bot
from bot.store.kv import KeyValueStore
from bot.store.memory import MemoryStore
from bot.web.server import BotHttpServer
from bot.web.slack_endpoint import SLACK_EVENTS_PATH, SlackEndpoint
from tests.conftest import read_fixture
from tests.support.slack_api import BOT_USER_ID, SlackWebApi, running_slack_api

SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
CHANNEL = "C0TEAM01"
USER = "U0ALICE1"


@dataclass
class Response:
    status: int
    body: bytes
    elapsed_seconds: float

    def json(self) -> Any:
        return json.loads(self.body)


class SlackSender:
    """Sends signed requests to the bot's ``/slack/events`` like Slack does."""

    def __init__(self, url: str, signing_secret: str = SIGNING_SECRET) -> None:
        self.url = url
        self.verifier = SignatureVerifier(signing_secret)
        self._ids = itertools.count(1)

    def post(
        self,
        body: str,
        content_type: str,
        *,
        headers: dict[str, str] | None = None,
        timestamp: int | None = None,
        signature: str | None = None,
        signed: bool = True,
    ) -> Response:
        stamp = str(int(time.time()) if timestamp is None else timestamp)
        all_headers = {"Content-Type": content_type}
        if signed:
            all_headers["X-Slack-Request-Timestamp"] = stamp
            all_headers["X-Slack-Signature"] = signature or str(
                self.verifier.generate_signature(timestamp=stamp, body=body)
            )
        all_headers.update(headers or {})
        request = urllib.request.Request(
            self.url, data=body.encode(), headers=all_headers, method="POST"
        )
        started = time.monotonic()
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return Response(response.status, response.read(), time.monotonic() - started)
        except urllib.error.HTTPError as error:
            return Response(error.code, error.read(), time.monotonic() - started)

    def next_id(self) -> int:
        return next(self._ids)

    def event(
        self, event: dict[str, Any], *, event_id: str | None = None, retry_num: int | None = None
    ) -> Response:
        body = json.dumps(
            {
                "token": "verification-token-unused",
                "team_id": "T0TEST",
                "api_app_id": "A0TEST",
                "type": "event_callback",
                "event_id": event_id or f"Ev{self.next_id():08d}",
                "event_time": int(time.time()),
                "authorizations": [{"team_id": "T0TEST", "user_id": BOT_USER_ID, "is_bot": True}],
                "event": event,
            }
        )
        headers = {}
        if retry_num is not None:
            headers = {"X-Slack-Retry-Num": str(retry_num), "X-Slack-Retry-Reason": "http_timeout"}
        return self.post(body, "application/json", headers=headers)

    def mention(
        self,
        text: str,
        *,
        channel: str = CHANNEL,
        user: str = USER,
        ts: str | None = None,
        thread_ts: str | None = None,
        files: list[dict[str, Any]] | None = None,
        event_id: str | None = None,
        bot_id: str | None = None,
    ) -> tuple[Response, str]:
        ts = ts or f"1710000000.{self.next_id():06d}"
        event: dict[str, Any] = {
            "type": "app_mention",
            "user": user,
            "text": f"<@{BOT_USER_ID}> {text}",
            "ts": ts,
            "channel": channel,
            "event_ts": ts,
        }
        if thread_ts:
            event["thread_ts"] = thread_ts
        if files:
            event["files"] = files
        if bot_id:
            event["bot_id"] = bot_id
        return self.event(event, event_id=event_id), ts

    def direct_message(
        self,
        text: str,
        *,
        channel: str = "D0ALICE1",
        user: str = USER,
        thread_ts: str | None = None,
    ) -> tuple[Response, str]:
        ts = f"1710000000.{self.next_id():06d}"
        event: dict[str, Any] = {
            "type": "message",
            "channel_type": "im",
            "user": user,
            "text": text,
            "ts": ts,
            "channel": channel,
            "event_ts": ts,
        }
        if thread_ts:
            event["thread_ts"] = thread_ts
        return self.event(event), ts

    def command(
        self,
        text: str,
        *,
        response_url: str,
        channel: str = CHANNEL,
        user: str = USER,
        trigger_id: str | None = None,
    ) -> Response:
        body = urlencode(
            {
                "token": "unused",
                "team_id": "T0TEST",
                "team_domain": "test",
                "channel_id": channel,
                "channel_name": "gpu-team",
                "user_id": user,
                "user_name": "alice",
                "command": "/hami-summary",
                "text": text,
                "api_app_id": "A0TEST",
                "response_url": response_url,
                "trigger_id": trigger_id or f"trigger.{self.next_id()}",
            }
        )
        return self.post(body, "application/x-www-form-urlencoded")

    def interaction(self, payload: dict[str, Any]) -> Response:
        payload.setdefault("trigger_id", f"trigger.{self.next_id()}")
        payload.setdefault("team", {"id": "T0TEST", "domain": "test"})
        payload.setdefault("api_app_id", "A0TEST")
        payload.setdefault("token", "unused")
        return self.post(
            urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded"
        )


@dataclass
class RunningBot:
    api: SlackWebApi
    sender: SlackSender
    slack: SlackBot
    url: str


class MetricsServer:
    """A HAMi scheduler stand-in: serves one exposition at /metrics and counts scrapes and the
    answers it finished. A ``held`` server is a slow cluster: it answers no scrape until
    ``release()`` (or ``stop()``), so a test decides when the slow answer arrives instead of
    racing a fixed delay against the bot's own waits."""

    def __init__(self, text: str, *, held: bool = False) -> None:
        self.text = text
        self.scrapes = 0
        self.served = 0
        self._released = threading.Event()
        if not held:
            self._released.set()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                server.scrapes += 1
                server._released.wait(timeout=60)
                body = server.text.encode()
                self.send_response(200)
                self.send_header(
                    "Content-Type", "text/plain; version=0.0.4; charset=utf-8; escaping=underscores"
                )
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                server.served += 1

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/metrics"
        # shutdown() waits for the loop's next poll: half a second by default, every test.
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()

    def release(self) -> None:
        """Let the held scrapes (and every later one) be answered."""
        self._released.set()

    def stop(self) -> None:
        self.release()
        self._server.shutdown()
        self._server.server_close()


def write_kubeconfig(path: Path, contexts: list[str]) -> None:
    """A kubeconfig whose contexts point at a closed loopback port (collection fails fast)."""
    path.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": contexts[0],
                "clusters": [{"name": "gpu", "cluster": {"server": "https://127.0.0.1:9"}}],
                "users": [{"name": "viewer", "user": {"token": "kube-token-not-a-secret"}}],
                "contexts": [
                    {"name": c, "context": {"cluster": "gpu", "user": "viewer"}} for c in contexts
                ],
            }
        )
    )


def write_registry(directory: Path, metrics_url: str) -> Path:
    write_kubeconfig(directory / "prod.kubeconfig", ["prod-admin", "prod-readonly"])
    registry = directory / "clusters.yaml"
    registry.write_text(
        "clusters:\n"
        "  - name: demo\n"
        "    display_name: Demo cluster\n"
        f"    metrics_url: {metrics_url}\n"
        f"    allowed_channels: [{CHANNEL}]\n"
        "    cache_ttl_seconds: 60\n"
        "  - name: prod\n"
        "    display_name: Production\n"
        "    kubeconfig: prod.kubeconfig\n"
        "    contexts: [prod-admin, prod-readonly]\n"
        "    timeout_seconds: 2\n"
        f"    allowed_users: [{USER}]\n"
        "  - name: secret-lab\n"
        f"    metrics_url: {metrics_url}\n"
        "    allowed_channels: [C0OTHER99]\n"
    )
    return registry


@pytest.fixture
def slack_api() -> Iterator[SlackWebApi]:
    yield from running_slack_api()


@pytest.fixture
def metrics_server() -> Iterator[MetricsServer]:
    server = MetricsServer(read_fixture("scheduler-small.prom"))
    yield server
    server.stop()


def start_bot(
    api: SlackWebApi,
    registry: ClusterRegistry,
    extra_env: dict[str, str] | None = None,
    store: KeyValueStore | None = None,
    *,
    metrics: OpsMetrics = METRICS,
    **assembly: Any,
) -> tuple[RunningBot, BotHttpServer]:
    """The bot on a loopback port; its state in ``store`` (a Redis store where a test checks
    what is kept), else in process memory."""
    env = {
        "SLACK_BOT_TOKEN": api.bot_token,
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_API_URL": api.base_url,
        **(extra_env or {}),
    }
    kv = store if store is not None else MemoryStore()
    # As ``serve`` hands them in: the notifier's records, for digests and alert buttons.
    assembly.setdefault("notices", NotifyRecords(kv))
    slack = assemble_bot(load_config(env), store=kv, registry=registry, **assembly)
    server = BotHttpServer(
        {SLACK_EVENTS_PATH: SlackEndpoint(slack.app, metrics=metrics)}, host="127.0.0.1", port=0
    ).start()
    url = f"http://127.0.0.1:{server.port}/slack/events"
    return RunningBot(api, SlackSender(url), slack, url), server


def stop_bot(running: RunningBot, server: BotHttpServer) -> None:
    """Stop taking requests, then let answers in progress finish before Slack goes away."""
    server.stop()
    assert drain(running.slack.app, timeout_seconds=60), "answers still running after 60 s"
    running.slack.user_groups.stop()


@pytest.fixture
def bot(
    slack_api: SlackWebApi, metrics_server: MetricsServer, tmp_path: Path
) -> Iterator[RunningBot]:
    registry = load_registry(write_registry(tmp_path, metrics_server.url))
    running, server = start_bot(slack_api, registry)
    yield running
    stop_bot(running, server)


@pytest.fixture
def bot_without_clusters(slack_api: SlackWebApi) -> Iterator[RunningBot]:
    running, server = start_bot(slack_api, empty_registry())
    yield running
    stop_bot(running, server)
