"""A server that echoes the request's credentials in its error never gets them shown.

API servers, proxies in front of them and gateways sometimes repeat what they were sent in an
error body (``invalid bearer token ...``). ``hami-summary scrape`` quotes the server's words in
its one-line message, so each case runs the CLI against the local API server and checks the
words are still there, the token is not.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli.main import main
from tests.kube.fake_apiserver import TOKEN, FakeCluster, ProxyAnswer

SERVICE_KEY = ("kube-system", "hami-scheduler", "monitor")


def scrape(kubeconfig: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(
        ["--log-level", "DEBUG", "scrape", "--kubeconfig", str(kubeconfig), "--context", "test"]
    )
    captured = capsys.readouterr()
    assert captured.out == ""
    return code, captured.err


def echo_on_every_route(cluster: FakeCluster, body: str, status: int, content_type: str) -> None:
    answer = ProxyAnswer(body.encode(), status=status, content_type=content_type)
    for key in list(cluster.service_proxy):
        cluster.service_proxy[key] = answer
    for key in list(cluster.pod_proxy):
        cluster.pod_proxy[key] = answer


@pytest.mark.parametrize(
    ("body", "status", "content_type", "shown"),
    [
        (
            f"<html>gateway refused Authorization: Bearer {TOKEN}</html>",
            502,
            "text/html",
            "(HTTP 502: <html>gateway refused Authorization: [REDACTED]</html>)",
        ),
        # The bare token, in no shape a pattern knows: removed as the exact credential sent.
        (f"upstream: {TOKEN} is not allowed", 502, "text/plain", "upstream: [REDACTED] is not"),
        (
            f"<html>sign in again ({TOKEN})</html>",
            200,
            "text/html",
            "it holds no metrics at all (it starts with '<html>sign in again ([REDACTED])</html>')",
        ),
    ],
    ids=["bearer-header", "bare-token", "login-page"],
)
def test_a_proxied_answer_echoing_the_token_is_quoted_without_it(
    cluster: FakeCluster,
    kubeconfig: Path,
    capsys: pytest.CaptureFixture[str],
    body: str,
    status: int,
    content_type: str,
    shown: str,
) -> None:
    echo_on_every_route(cluster, body, status, content_type)
    code, err = scrape(kubeconfig, capsys)
    assert code == 2
    assert shown in err
    assert TOKEN not in err


def test_an_rbac_refusal_echoing_the_token_is_quoted_without_it(
    cluster: FakeCluster, kubeconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The Status message names the user; here the "user" is what a broken proxy made of the
    # token it was sent.
    cluster.user = f"token:{TOKEN}"
    cluster.forbid("list", "pods")
    code, err = scrape(kubeconfig, capsys)
    assert code == 2
    assert (
        'refused `list pods` in all namespaces (HTTP 403 Forbidden: pods is forbidden: User "'
        in err
    )
    assert TOKEN not in err
