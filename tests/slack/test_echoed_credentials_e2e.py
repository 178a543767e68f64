"""Credentials in a registered URL are sent, and never shown even when the server echoes them.

A ``metrics_url`` of ``http://user:password@host/...`` is read with HTTP Basic authentication;
an endpoint that answers with a page repeating the request (its Authorization header, its
query) is reported as "not HAMi metrics" with the page quoted, the password, token and Basic
credentials taken out. Signed requests in, the local Slack Web API recording every call out.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from bot.clusters.registry import load_registry
from tests.conftest import read_fixture
from tests.kube.fake_apiserver import TOKEN, FakeApiServer, ProxyAnswer, hami_cluster
from tests.slack.conftest import CHANNEL, RunningBot, start_bot, stop_bot
from tests.slack.test_http_e2e import answer_in, blocks_text
from tests.support.slack_api import SlackWebApi

PASSWORD = "s3cret-pw"
QUERY_TOKEN = "tok123"
BASIC = base64.b64encode(f"admin:{PASSWORD}".encode()).decode()


class GuardedMetrics:
    """``/metrics`` only with the right Basic credentials (401 otherwise); ``/echo`` answers
    200 with a sign-in page repeating the request's Authorization header and query."""

    def __init__(self) -> None:
        self.authorizations: list[str | None] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                auth = self.headers.get("Authorization")
                owner.authorizations.append(auth)
                if self.path.startswith("/echo"):
                    body = f"<html>Sign in again. You sent {auth} for {self.path}</html>".encode()
                    status, kind = 200, "text/html"
                elif auth == f"Basic {BASIC}":
                    body, status = read_fixture("scheduler-small.prom").encode(), 200
                    kind = "text/plain; version=0.0.4"
                else:
                    body, status, kind = b"unauthorized", 401, "text/plain"
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.base = f"http://admin:{PASSWORD}@127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def bot(slack_api: SlackWebApi, tmp_path: Path) -> Iterator[RunningBot]:
    metrics = GuardedMetrics()
    cluster = hami_cluster()
    echoed = f"<html>gateway refused Authorization: Bearer {TOKEN}</html>".encode()
    for key in list(cluster.service_proxy):
        cluster.service_proxy[key] = ProxyAnswer(echoed, status=502, content_type="text/html")
    for key in list(cluster.pod_proxy):
        cluster.pod_proxy[key] = ProxyAnswer(echoed, status=502, content_type="text/html")
    with FakeApiServer(cluster) as api_server:
        kubeconfig = api_server.write_kubeconfig(tmp_path / "lab.kubeconfig", context="lab")
        registry = tmp_path / "clusters.yaml"
        registry.write_text(
            "clusters:\n"
            "  - name: guarded\n"
            f"    metrics_url: {metrics.base}/metrics?token={QUERY_TOKEN}\n"
            f"    allowed_channels: [{CHANNEL}]\n"
            "  - name: echo\n"
            f"    metrics_url: {metrics.base}/echo?token={QUERY_TOKEN}\n"
            f"    allowed_channels: [{CHANNEL}]\n"
            "  - name: lab\n"
            f"    kubeconfig: {kubeconfig}\n"
            f"    allowed_channels: [{CHANNEL}]\n"
        )
        running, server = start_bot(slack_api, load_registry(registry))
        try:
            yield running
        finally:
            stop_bot(running, server)
            metrics.stop()


def ask(bot: RunningBot, cluster: str) -> str:
    bot.sender.command(f"{cluster} fresh", response_url=bot.api.response_url(cluster))
    posted = bot.api.wait_for("response_url", where=lambda c: c.path.endswith("/" + cluster))
    return blocks_text(posted[-1].params["blocks"])


def test_the_url_password_is_sent_as_basic_authentication(bot: RunningBot) -> None:
    bot.sender.command("guarded fresh", response_url=bot.api.response_url("guarded"))
    answer = answer_in(bot.api, CHANNEL, None)
    assert "275 / 600 cores (45.8%)" in blocks_text(answer.blocks)


def test_a_page_echoing_the_request_is_quoted_without_its_credentials(bot: RunningBot) -> None:
    shown = ask(bot, "echo")
    assert "answered, but not with HAMi scheduler metrics: it holds no metrics at all" in shown
    assert "Sign in again. You sent Basic [REDACTED]" in shown
    sent = json.dumps([c.params for c in bot.api.calls])
    for secret in (PASSWORD, QUERY_TOKEN, BASIC):
        assert secret not in sent


def test_an_api_server_proxy_echoing_the_token_is_quoted_without_it(bot: RunningBot) -> None:
    shown = ask(bot, "lab")
    # Quoted as Slack shows it: the page's markup escaped, the token gone.
    assert "(HTTP 502: &lt;html&gt;gateway refused Authorization: [REDACTED]&lt;/html&gt;)" in shown
    assert TOKEN not in json.dumps([c.params for c in bot.api.calls])
