"""Structured logs: JSON off a terminal, request ids, and no credential ever written."""

from __future__ import annotations

import io
import json
import logging
import os
import pty
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.ops.logging import (
    REDACTED,
    configure_logging,
    redact,
    register_secret,
    request_context,
)

REPO = Path(__file__).resolve().parents[2]

BOT_TOKEN = "xoxb-2837461-9928374650-Zx9PqR7sT2uVw4yA"
USER_TOKEN = "xoxp-1234-5678-91011-abcdef0123456789"
APP_TOKEN = "xapp-1-A02B3C4D5E6-1234567890-0a1b2c3d4e5f"
REFRESH_TOKEN = "xoxe-1-My0xLTEyMzQ1Njc4OTAtMTIz"
ROTATED_TOKEN = "xoxe.xoxb-1-MS0yLTEyMzQ1Njc4OTAtMTIz"
SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
SA_TOKEN = "eyJhbGciOiJSUzI1NiIsImtpZCI6IkJ4In0.eyJpc3MiOiJrdWJlcm5ldGVzIn0.c2lnbmF0dXJl"
CLIENT_KEY = "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVB"
CLIENT_CERT = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUM4akNDQWRxZ0F3SUJBZ0lJ"
PASSWORD = "hunter2-correct-horse"
REDIS_PASSWORD = "r3d1s-s3cr3t"
OIDC_ID_TOKEN = "eyJraWQiOiJvaWRjIn0.eyJzdWIiOiJhbGljZSJ9.c2ln"

ALL_SECRETS = [
    BOT_TOKEN,
    USER_TOKEN,
    APP_TOKEN,
    REFRESH_TOKEN,
    ROTATED_TOKEN,
    SIGNING_SECRET,
    SA_TOKEN,
    CLIENT_KEY,
    CLIENT_CERT,
    PASSWORD,
    REDIS_PASSWORD,
    OIDC_ID_TOKEN,
]

KUBECONFIG = f"""apiVersion: v1
kind: Config
clusters:
- name: gpu-prod
  cluster:
    server: https://10.0.0.1:6443
contexts:
- name: admin@gpu-prod
  context: {{cluster: gpu-prod, user: admin}}
users:
- name: admin
  user:
    client-certificate-data: {CLIENT_CERT}
    client-key-data: {CLIENT_KEY}
- name: sa
  user:
    token: {SA_TOKEN}
- name: basic
  user:
    username: ops
    password: "{PASSWORD}"
- name: oidc
  user:
    auth-provider:
      name: oidc
      config:
        id-token: {OIDC_ID_TOKEN}
"""


@pytest.fixture
def root_logger_restored() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)


def _log_everything(logger: logging.Logger) -> None:
    logger.info("starting with bot token %s and app token %s", BOT_TOKEN, APP_TOKEN)
    logger.warning(
        "user token %s, refresh %s, rotated %s", USER_TOKEN, REFRESH_TOKEN, ROTATED_TOKEN
    )
    logger.info("env SLACK_SIGNING_SECRET=%s", SIGNING_SECRET)
    logger.info("kubeconfig loaded:\n%s", KUBECONFIG)
    logger.info("GET /api/v1/pods headers={'Authorization': 'Bearer %s'}", SA_TOKEN)
    logger.info("cache at redis://default:%s@redis.internal:6379/0", REDIS_PASSWORD)
    logger.info(
        "request",
        extra={"slack_token": BOT_TOKEN, "headers": {"authorization": f"Bearer {SA_TOKEN}"}},
    )
    try:
        raise RuntimeError(f"kubeconfig user sa has token: {SA_TOKEN} and key {CLIENT_KEY}")
    except RuntimeError:
        logger.exception("collection failed for %s", "gpu-prod")
    logger.info(json.dumps({"signing_secret": SIGNING_SECRET, "password": PASSWORD}))
    logger.info(
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA%s\n-----END RSA PRIVATE KEY-----",
        CLIENT_KEY,
    )


def test_no_credential_reaches_the_json_log(root_logger_restored: None) -> None:
    stream = io.StringIO()
    configure_logging("INFO", stream=stream)
    with request_context("req-42"):
        _log_everything(logging.getLogger("hami_summary.test"))
    output = stream.getvalue()
    for secret in ALL_SECRETS:
        assert secret not in output, secret
    lines = [json.loads(line) for line in output.splitlines()]
    assert len(lines) == 10
    assert all(line["request_id"] == "req-42" for line in lines)
    assert (
        lines[0]["message"]
        == f"starting with bot token xoxb-{REDACTED} and app token xapp-{REDACTED}"
    )
    assert lines[0]["level"] == "info" and lines[0]["logger"] == "hami_summary.test"
    # What is not secret stays readable.
    kubeconfig_line = lines[3]["message"]
    assert "server: https://10.0.0.1:6443" in kubeconfig_line and "username: ops" in kubeconfig_line
    assert f"client-key-data: {REDACTED}" in kubeconfig_line
    assert "redis.internal:6379" in lines[5]["message"]
    assert lines[6]["slack_token"] == f"xoxb-{REDACTED}"
    assert lines[7]["message"] == "collection failed for gpu-prod"
    assert "RuntimeError" in lines[7]["exception"]


def test_registered_secrets_of_any_shape_are_removed(root_logger_restored: None) -> None:
    odd_secret = "no-recognisable-shape-7731"
    register_secret(odd_secret)
    stream = io.StringIO()
    configure_logging("INFO", stream=stream)
    logging.getLogger("hami_summary.test").info("value is %s", odd_secret)
    assert odd_secret not in stream.getvalue()
    assert redact(f"x {odd_secret} y") == f"x {REDACTED} y"


AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
AWS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"
DB_PASSWORD = "p4ss word with spaces"
STRIPE_KEY = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
PLUGIN_TOKEN = "k8s-aws-v1.aHR0cHM6Ly9zdHMuYW1hem9uYXdzLmNvbQ"

# A kubeconfig whose users authenticate with exec credential plugins: cloud credentials in the
# plugin's env list and args, as aws-iam-authenticator and similar plugins are configured.
EXEC_KUBECONFIG = f"""users:
- name: eks-admin
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: aws-iam-authenticator
      args: ["token", "-i", "gpu-prod", "--token", "{PLUGIN_TOKEN}"]
      env:
      - name: AWS_ACCESS_KEY_ID
        value: {AWS_KEY_ID}
      - name: AWS_SECRET_ACCESS_KEY
        value: {AWS_SECRET}
      - name: AWS_REGION
        value: eu-west-1
"""


def test_generic_credential_assignments_are_redacted(root_logger_restored: None) -> None:
    stream = io.StringIO()
    configure_logging("INFO", stream=stream)
    logger = logging.getLogger("hami_summary.test")
    logger.info("kubeconfig loaded:\n%s", EXEC_KUBECONFIG)
    logger.info("plugin environment: AWS_SECRET_ACCESS_KEY=%s AWS_REGION=eu-west-1", AWS_SECRET)
    logger.info(
        "exec plugin failed: %s",
        {
            "env": [
                {"name": "DB_PASSWORD", "value": DB_PASSWORD},
                {"name": "STRIPE_KEY", "value": STRIPE_KEY},
            ]
        },
    )
    logger.info("%s", json.dumps({"env": [{"name": "DB_PASSWORD", "value": DB_PASSWORD}]}))
    logger.info(
        'settings: STRIPE_KEY: %s, client_secret="%s", password=%s&user=ops',
        STRIPE_KEY,
        DB_PASSWORD,
        PASSWORD,
    )
    logger.info("running aws-iam-authenticator token --password %s --role ops", PASSWORD)
    output = stream.getvalue()
    for secret in (AWS_SECRET, AWS_KEY_ID, DB_PASSWORD, STRIPE_KEY, PLUGIN_TOKEN, PASSWORD):
        assert secret not in output, secret
    lines = [json.loads(line)["message"] for line in output.splitlines()]
    assert len(lines) == 6
    # What is not a credential stays readable, and the names say what was removed.
    assert "- name: AWS_SECRET_ACCESS_KEY\n        value: [REDACTED]" in lines[0]
    assert "- name: AWS_REGION\n        value: eu-west-1" in lines[0]
    assert '"--token", "[REDACTED]"' in lines[0] and "command: aws-iam-authenticator" in lines[0]
    assert lines[1] == f"plugin environment: AWS_SECRET_ACCESS_KEY={REDACTED} AWS_REGION=eu-west-1"
    assert f"'name': 'STRIPE_KEY', 'value': '{REDACTED}'" in lines[2]
    assert f'"name": "DB_PASSWORD", "value": "{REDACTED}"' in lines[3]
    assert lines[4] == (
        f'settings: STRIPE_KEY: {REDACTED}, client_secret="{REDACTED}", '
        f"password={REDACTED}&user=ops"
    )
    assert lines[5] == f"running aws-iam-authenticator token --password {REDACTED} --role ops"


def test_ordinary_text_is_left_alone() -> None:
    for text in [
        "the bot token was verified for team T123",
        "tokens: 5",
        "keys: 4",
        "monkey=3",
        "cache key=hami-summary:v1:thread:C0TEAM01",
        "- name: AWS_REGION\n  value: eu-west-1",
        'hami_vgpu_memory_allocated_bytes{node="gpu-1"} 1.6e+10',
        "Cluster gpu-prod: 403 Forbidden: cannot get services/proxy in namespace kube-system",
    ]:
        assert redact(text) == text


@pytest.mark.slow
def test_text_on_a_terminal_json_through_a_pipe() -> None:
    script = (
        "import logging; from bot.ops.logging import configure_logging, request_context; "
        "configure_logging('INFO'); "
        "ctx = request_context('req-7'); ctx.__enter__(); "
        f"logging.getLogger('hami_summary.x').info('hello %s', {BOT_TOKEN!r})"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    piped = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    record = json.loads(piped.stderr)
    assert record["message"] == f"hello xoxb-{REDACTED}" and record["request_id"] == "req-7"

    leader, follower = pty.openpty()
    try:
        subprocess.run(
            [sys.executable, "-c", script], cwd=REPO, env=env, stderr=follower, check=True
        )
        os.close(follower)
        follower = -1
        terminal = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:
                break
            if not chunk:
                break
            terminal += chunk
    finally:
        os.close(leader)
        if follower != -1:
            os.close(follower)
    text = terminal.decode()
    assert "INFO" in text and "hami_summary.x [req-7]: hello xoxb-[REDACTED]" in text
    assert not text.lstrip().startswith("{")
