"""``/hami-summary admin [check]`` end to end: the real bot over HTTP with signed requests, the
local Web API, a kubeconfig folder with good, broken, expired and foreign files, and the local
Kubernetes API server answering ``GET /version``."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.clusters.registry import load_registry
from tests.kube.fake_apiserver import FakeApiServer, FakeCluster
from tests.slack.conftest import CHANNEL, USER, RunningBot, start_bot, stop_bot, write_registry
from tests.slack.test_blocks import assert_valid
from tests.slack.test_http_e2e import ACK_LIMIT_SECONDS, answer_in, blocks_text
from tests.support.slack_api import SlackWebApi

ADMIN = "U0ADMIN01"
OTHER_ADMIN = "W0ADMIN02"
GROUP = "S0GPUTEAM"

BROKEN = """\
apiVersion: v1
kind: Config
current-context: gone
clusters:
  - name: c1
    cluster: {server: "https://10.0.0.1:6443"}
users:
  - name: nobody
    user: {}
contexts:
  - name: no-creds
    context: {cluster: c1, user: nobody}
  - name: no-user
    context: {cluster: c1, user: ghost}
"""

DEPLOYMENT = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"


@dataclass
class AdminSetup:
    bot: RunningBot
    kube: FakeApiServer
    kube_dir: Path
    registry_file: Path


def fill_kube_dir(folder: Path, kube: FakeApiServer) -> None:
    kube.write_kubeconfig(folder / "config", contexts=("dev", "dev-readonly"))
    kube.write_kubeconfig(folder / "expired.yaml", context="old", token="old-token-secret-123")
    (folder / "broken.yaml").write_text(BROKEN)
    (folder / "deployment.yaml").write_text(DEPLOYMENT)
    (folder / "notes.txt").write_text("remember to rotate the tokens\n")


def with_user_group(registry_file: Path) -> None:
    text = registry_file.read_text()
    registry_file.write_text(
        text + f"  - name: gpu-team\n    metrics_url: http://user:"
        f"pa55word@127.0.0.1:9/metrics\n    allowed_user_groups: [{GROUP}]\n"
    )


@pytest.fixture
def admin_setup(slack_api: SlackWebApi, tmp_path: Path) -> Iterator[AdminSetup]:
    kube_dir = tmp_path / "kube"
    kube_dir.mkdir()
    with FakeApiServer(FakeCluster()) as kube:
        fill_kube_dir(kube_dir, kube)
        registry_file = write_registry(tmp_path, "http://127.0.0.1:9/metrics")
        with_user_group(registry_file)
        running, server = start_bot(
            slack_api,
            load_registry(registry_file),
            {"HAMI_SUMMARY_ADMINS": f"{ADMIN}, {OTHER_ADMIN}", "KUBECONFIG_DIR": str(kube_dir)},
        )
        try:
            yield AdminSetup(running, kube, kube_dir, registry_file)
        finally:
            stop_bot(running, server)


def no_credentials_in(text: str) -> None:
    for secret in (
        "test-token-7f3a9c",
        "old-token-secret-123",
        "kube-token-not-a-secret",
        "pa55word",
        "certificate-authority-data",
    ):
        assert secret not in text


def test_admin_report_lists_kubeconfigs_problems_and_who_may_query(
    admin_setup: AdminSetup,
) -> None:
    bot = admin_setup.bot
    response = bot.sender.command("admin", user=ADMIN, response_url=bot.api.response_url("a"))
    assert response.status == 200 and response.elapsed_seconds < ACK_LIMIT_SECONDS
    body = response.json()
    assert body["response_type"] == "ephemeral"  # only the admin sees it
    assert_valid(body["blocks"])
    text = blocks_text(body["blocks"])
    assert "Admin: kubeconfig discovery and cluster access" in text
    assert (
        f"*Kubeconfig files* in `{admin_setup.kube_dir}` (folder from KUBECONFIG_DIR): "
        "3 found, 2 skipped."
    ) in text
    # Each file with its contexts, clusters and users; the kind of credential, never its value.
    assert "• `config` — current context `dev`" in text
    assert (
        f"◦ `dev`: cluster `fake-cluster` ({admin_setup.kube.url}), user `reader` (token) — "
        "valid (resolves; credentials present)"
    ) in text
    assert "◦ `dev-readonly`: cluster `fake-cluster`" in text
    assert "clusters: `fake-cluster` · users: `reader`" in text
    # Validation problems.
    assert ':warning: current-context "gone" is not one of the contexts' in text
    assert (
        "◦ `no-user`: cluster `c1` (https://10.0.0.1:6443), user `ghost` — :warning: user "
        '"ghost" is not defined in this file'
    ) in text
    assert "• `deployment.yaml`: YAML, but not a kubeconfig (kind: Deployment)" in text
    assert "• `notes.txt`: YAML, but not a mapping" in text
    assert "`/hami-summary admin check`" in text
    # Registered clusters and who may query them, as Slack mentions.
    assert f"*Registered clusters* (`{admin_setup.registry_file}`): 4" in text
    assert "• *demo* (Demo cluster): metrics URL http://127.0.0.1:9/metrics" in text
    assert f"may query: channels <#{CHANNEL}>" in text
    assert f"may query: users <@{USER}>" in text
    assert "may query: channels <#C0OTHER99>" in text
    assert f"may query: user groups <!subteam^{GROUP}>" in text
    assert "metrics URL http://127.0.0.1:9/metrics · runtime off" in text  # user info dropped
    no_credentials_in(json.dumps(body))
    time.sleep(0.3)
    assert bot.api.calls_to("chat.postMessage") == []  # nothing posted in the channel
    # A second admin, an Enterprise Grid id, is let in too.
    other = bot.sender.command("admin", user=OTHER_ADMIN, response_url=bot.api.response_url("o"))
    assert "Kubeconfig files" in blocks_text(other.json()["blocks"])


def test_non_admins_are_refused_politely_with_the_setting_named(admin_setup: AdminSetup) -> None:
    bot = admin_setup.bot
    for text in ("admin", "admin check"):
        body = bot.sender.command(text, user=USER, response_url=bot.api.response_url("r")).json()
        assert body["response_type"] == "ephemeral"
        shown = blocks_text(body["blocks"])
        assert "Only for the bot's admins" in shown
        assert f"HAMI_SUMMARY_ADMINS setting (your id is {USER})" in shown
        assert "`/hami-summary clusters`" in shown
        assert "`config`" not in shown and "fake-cluster" not in shown and "demo" not in shown
    time.sleep(0.5)
    assert admin_setup.kube.requests == []  # no API server was asked
    assert bot.api.calls_to("response_url") == []


def test_admin_check_asks_each_api_server_and_answers_only_the_admin(
    admin_setup: AdminSetup,
) -> None:
    bot = admin_setup.bot
    response = bot.sender.command(
        "admin check", user=ADMIN, response_url=bot.api.response_url("check")
    )
    assert response.status == 200 and response.elapsed_seconds < ACK_LIMIT_SECONDS
    assert "Checking each kubeconfig context's API server" in blocks_text(response.json()["blocks"])
    post = bot.api.wait_for("response_url", timeout=30)[0]
    assert post.params["response_type"] == "ephemeral"
    assert_valid(post.params["blocks"])
    text = blocks_text(post.params["blocks"])
    assert "(API servers checked)" in text
    assert (
        "◦ `dev`: cluster `fake-cluster` (" + admin_setup.kube.url + "), user `reader` "
        "(token) — ok, reachable and authenticated, Kubernetes v1.31.2"
    ) in text
    assert "◦ `old`: cluster `fake-cluster`" in text
    assert "rejected the credentials (HTTP 401 Unauthorized)" in text
    assert "`/hami-summary admin check`" not in text
    no_credentials_in(json.dumps(post.params))
    # Three usable contexts were asked; the broken file's were not contacted.
    assert [r.path for r in admin_setup.kube.requests].count("/version/") == 3


def test_without_kubeconfig_dir_the_default_folder_is_scanned(
    slack_api: SlackWebApi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / ".kube").mkdir(parents=True)
    (home / ".kube" / "notes.txt").write_text("not a kubeconfig\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("KUBECONFIG_DIR", raising=False)
    running, server = start_bot(
        slack_api,
        load_registry(write_registry(tmp_path, "http://x/")),
        {"HAMI_SUMMARY_ADMINS": ADMIN},
    )
    try:
        body = running.sender.command(
            "admin", user=ADMIN, response_url=slack_api.response_url("d")
        ).json()
    finally:
        stop_bot(running, server)
    text = blocks_text(body["blocks"])
    assert (
        f"*Kubeconfig files* in `{home / '.kube'}` (folder from the default): 0 found, 1 skipped."
    ) in text


def test_help_documents_the_admin_command(admin_setup: AdminSetup) -> None:
    bot = admin_setup.bot
    text = blocks_text(
        bot.sender.command("help", response_url=bot.api.response_url("h")).json()["blocks"]
    )
    assert "`/hami-summary admin [check]` — for the bot's admins" in text
    assert "`HAMI_SUMMARY_ADMINS`" in text and "`KUBECONFIG_DIR`" in text


def test_admin_asked_in_a_thread_points_to_the_private_slash_command(
    admin_setup: AdminSetup,
) -> None:
    bot = admin_setup.bot
    _, ts = bot.sender.mention("admin", user=ADMIN)
    text = blocks_text(answer_in(bot.api, CHANNEL, ts).blocks)
    assert "use `/hami-summary admin [check]` outside a thread" in text
    assert "Kubeconfig files" not in text and "fake-cluster" not in text
