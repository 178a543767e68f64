"""Kubeconfig discovery and ``hami-summary clusters``: good, broken and foreign files, offline
validation, the online /version check, and the registered clusters. Credentials never show."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from bot.cli.main import main
from bot.clusters.discovery import discover_kubeconfigs
from bot.clusters.errors import KubeconfigError
from tests.kube.fake_apiserver import FakeApiServer, write_kubeconfig
from tests.kube.tls import session_certificate

BROKEN = """\
apiVersion: v1
kind: Config
current-context: gone
clusters:
  - name: c1
    cluster: {server: "https://10.0.0.1:6443"}
  - name: c2
    cluster: {}
users:
  - name: nobody
    user: {}
  - name: certonly
    user: {client-certificate-data: QUJD}
contexts:
  - name: no-cluster
    context: {cluster: missing, user: nobody}
  - name: no-server
    context: {cluster: c2, user: certonly}
  - name: no-creds
    context: {cluster: c1, user: nobody}
  - name: no-user
    context: {cluster: c1, user: ghost}
"""

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec: {replicas: 1}
"""


def _closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"https://127.0.0.1:{port}"


@pytest.fixture
def kube_dir(api_server: FakeApiServer, tmp_path: Path) -> Path:
    folder = tmp_path / "kube"
    api_server.write_kubeconfig(folder / "config", contexts=("dev", "dev-readonly"))
    api_server.write_kubeconfig(folder / "expired.yaml", token="old-token-123")
    write_kubeconfig(
        folder / "offline.yaml",
        server=_closed_port_url(),
        ca_pem=session_certificate().ca_pem,
        token="offline-token-456",
        contexts=("offline",),
    )
    (folder / "broken.yaml").write_text(BROKEN)
    (folder / "syntax.yaml").write_text("apiVersion: v1\nkind: Config\ncontexts: [\n")
    (folder / "deployment.yaml").write_text(DEPLOYMENT)
    (folder / "notes.txt").write_text("remember to rotate the tokens\n")
    (folder / "blob.bin").write_bytes(b"\x00\x01\x02binary")
    (folder / "empty").write_text("")
    (folder / "cache").mkdir()
    (folder / "cache" / "config").write_text("ignored: true\n")
    return folder


def test_discovery_lists_kubeconfigs_and_skips_others(kube_dir: Path) -> None:
    discovery = discover_kubeconfigs(kube_dir)
    names = [k.info.path.name for k in discovery.kubeconfigs]
    assert names == ["broken.yaml", "config", "expired.yaml", "offline.yaml", "syntax.yaml"]
    assert {s.path.name: s.reason for s in discovery.skipped} == {
        "blob.bin": "binary file",
        "deployment.yaml": "YAML, but not a kubeconfig (kind: Deployment)",
        "empty": "empty file",
        "notes.txt": "YAML, but not a mapping",
    }
    config = discovery.kubeconfigs[1].info
    assert config.context_names == ("dev", "dev-readonly")
    assert config.current_context == "dev"
    assert config.clusters == ("fake-cluster",) and config.users == ("reader",)
    assert all(c.usable and c.auth_kind == "token" for c in config.contexts)


def test_broken_kubeconfig_problems(kube_dir: Path) -> None:
    broken = discover_kubeconfigs(kube_dir).kubeconfigs[0].info
    assert broken.problems == ('current-context "gone" is not one of the contexts',)
    assert {c.name: c.problems for c in broken.contexts} == {
        "no-cluster": (
            'cluster "missing" is not defined in this file',
            'user "nobody" has no credentials (no token, client certificate, exec plugin or '
            "auth provider)",
        ),
        "no-server": (
            'cluster "c2" has no server address',
            'user "certonly" has a client certificate without its key (or a key without its '
            "certificate)",
        ),
        "no-creds": (
            'user "nobody" has no credentials (no token, client certificate, exec plugin or '
            "auth provider)",
        ),
        "no-user": ('user "ghost" is not defined in this file',),
    }
    syntax = discover_kubeconfigs(kube_dir).kubeconfigs[4].info
    assert syntax.problems == (
        "YAML syntax error: line 4, column 1: expected the node content, but found '<stream end>'",
    )


def test_check_reaches_each_usable_context(api_server: FakeApiServer, kube_dir: Path) -> None:
    discovery = discover_kubeconfigs(kube_dir, check=True, timeout_seconds=2)
    by_name = {k.info.path.name: k for k in discovery.kubeconfigs}
    dev = by_name["config"].check("dev")
    assert dev is not None and dev.ok
    assert dev.message == "reachable and authenticated, Kubernetes v1.31.2"
    expired = by_name["expired.yaml"].check("test")
    assert expired is not None and not expired.ok
    assert "rejected the credentials (HTTP 401 Unauthorized)" in expired.message
    offline = by_name["offline.yaml"].check("offline")
    assert offline is not None and not offline.ok
    assert offline.message.startswith(
        'Cannot reach the Kubernetes API server of context "offline" at https://127.0.0.1:'
    )
    assert by_name["broken.yaml"].checks == ()  # unusable contexts are not contacted
    assert [r.path for r in api_server.requests].count("/version/") == 3


def test_missing_directory() -> None:
    with pytest.raises(KubeconfigError) as caught:
        discover_kubeconfigs("/nonexistent/kube")
    assert caught.value.message == (
        "kubeconfig directory /nonexistent/kube does not exist or is not a directory. Give one "
        "with --kubeconfig-dir DIR or the KUBECONFIG_DIR environment variable."
    )


def test_clusters_command_text(
    kube_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HAMI_CLUSTERS_FILE", raising=False)
    monkeypatch.setenv("KUBECONFIG_DIR", str(kube_dir))
    assert main(["clusters", "--check", "--timeout", "2"]) == 0
    out = capsys.readouterr().out
    assert f"Kubeconfig files in {kube_dir}: 5\n" in out
    assert "  config (current context: dev)\n" in out
    assert (
        "      dev: cluster fake-cluster (https://127.0.0.1:" in out
        and "), user reader (token) -- ok, reachable and authenticated, Kubernetes v1.31.2\n" in out
    )
    assert "      no-user: cluster c1 (https://10.0.0.1:6443), user ghost -- PROBLEM: user " in out
    assert "    deployment.yaml: YAML, but not a kubeconfig (kind: Deployment)\n" in out
    assert "Registered clusters: none (HAMI_CLUSTERS_FILE is not set).\n" in out
    for secret in ("test-token-7f3a9c", "old-token-123", "offline-token-456", "QUJD"):
        assert secret not in out


def test_clusters_command_json_with_registry(
    kube_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    registry = tmp_path / "clusters.yaml"
    registry.write_text(
        f"clusters:\n  - name: dev\n    kubeconfig: {kube_dir / 'config'}\n"
        "    context: dev\n    allowed_channels: [C1, C2]\n    runtime_allowed: true\n"
    )
    monkeypatch.setenv("HAMI_CLUSTERS_FILE", str(registry))
    assert main(["clusters", "--kubeconfig-dir", str(kube_dir), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [k["path"].rsplit("/", 1)[1] for k in data["kubeconfigs"]][1] == "config"
    assert data["kubeconfigs"][1]["contexts"][0]["credentials"] == "token"
    assert data["registered"] == [
        {
            "name": "dev",
            "display_name": "dev",
            "source": "kubeconfig",
            "describe": f"kubeconfig {kube_dir / 'config'} (contexts: dev)",
            "contexts": ["dev"],
            "hami_namespace": None,
            "cache_ttl_seconds": 60.0,
            "runtime_allowed": True,
            "nvidia_smi_allowed": False,
            "access": "2 channels",
        }
    ]


def test_clusters_command_reports_bad_registry_and_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    registry = tmp_path / "clusters.yaml"
    registry.write_text("clusters:\n  - name: x\n")
    monkeypatch.setenv("HAMI_CLUSTERS_FILE", str(registry))
    assert main(["clusters", "--kubeconfig-dir", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err
    assert f"hami-summary clusters: kubeconfig directory {tmp_path / 'none'} does not exist" in err
    assert (
        f'hami-summary clusters: cluster registry: {registry}:2: clusters[0] ("x"): give exactly '
        "one source"
    ) in err
