"""``hami-summary scrape --log-level DEBUG`` through the real CLI: the debug logs of the
Kubernetes client and the bot never show a credential of the kubeconfig's exec plugin."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.kube.fake_apiserver import FakeApiServer, hami_cluster

PLUGIN_FLAG_SECRET = "plugin-flag-s3cr3t-value"
PLUGIN_ENV_SECRET = "plugin-env-s3cr3t-value"
URL_PASSWORD = "url-pa55word-value"

# An exec credential plugin, as aws-iam-authenticator or a vendor CLI is: it gets its
# credentials as arguments and environment, and prints an ExecCredential with a bearer token.
# With --fail it fails as such plugins do, echoing its command line on stderr.
PLUGIN = """\
import json, sys
if "--fail" in sys.argv:
    sys.exit("usage error in: " + " ".join(sys.argv[1:]))
print(json.dumps({
    "apiVersion": "client.authentication.k8s.io/v1beta1",
    "kind": "ExecCredential",
    "status": {"token": sys.argv[sys.argv.index("--cluster-token") + 1]},
}))
"""


def _exec_plugin_kubeconfig(server: FakeApiServer, directory: Path, *, fail: bool) -> Path:
    path = server.write_kubeconfig(directory / "kubeconfig", context="test")
    document = yaml.safe_load(path.read_text())
    plugin = directory / "plugin.py"
    plugin.write_text(PLUGIN)
    document["users"][0]["user"] = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": sys.executable,
            "args": [
                str(plugin),
                "--token",
                PLUGIN_FLAG_SECRET,
                "--cluster-token",
                server.cluster.token,
                "--issuer",
                f"https://robot:{URL_PASSWORD}@issuer.example/",
                *(["--fail"] if fail else []),
            ],
            "env": [{"name": "VENDOR_API_SECRET", "value": PLUGIN_ENV_SECRET}],
            "interactiveMode": "Never",
        }
    }
    path.write_text(yaml.safe_dump(document))
    return path


def _scrape_at_debug(kubeconfig: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "bot.cli.main",
            "--log-level",
            "DEBUG",
            "scrape",
            "--kubeconfig",
            str(kubeconfig),
            "--context",
            "test",
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "MPLBACKEND": "Agg"},
    )


@pytest.mark.slow
def test_debug_logs_of_scrape_show_no_credential(tmp_path: Path) -> None:
    with FakeApiServer(hami_cluster()) as server:
        result = _scrape_at_debug(_exec_plugin_kubeconfig(server, tmp_path, fail=False))
        cluster_token = server.cluster.token
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads(result.stdout)["cluster"]["core_allocated"] == 275
    # DEBUG logging really wrote lines (the Kubernetes client's requests among them).
    assert "DEBUG" in result.stderr
    for secret in (PLUGIN_FLAG_SECRET, PLUGIN_ENV_SECRET, URL_PASSWORD, cluster_token):
        assert secret not in result.stderr, secret


@pytest.mark.slow
def test_a_failing_plugin_that_echoes_its_arguments_leaks_nothing(tmp_path: Path) -> None:
    with FakeApiServer(hami_cluster()) as server:
        result = _scrape_at_debug(_exec_plugin_kubeconfig(server, tmp_path, fail=True))
        cluster_token = server.cluster.token
    assert result.returncode == 2, result.stderr[-3000:]
    # The Kubernetes client logs the plugin's error output (flag names kept, values gone),
    # then asks without credentials, which the API server refuses.
    assert (
        "ERROR:root:exec: process returned 1. usage error in: --token [REDACTED] "
        "--cluster-token [REDACTED] --issuer https://robot:[REDACTED]@issuer.example/ --fail"
    ) in result.stderr
    assert 'API server of context "test"' in result.stderr
    assert "rejected the credentials (HTTP 401 Unauthorized)" in result.stderr
    for secret in (PLUGIN_FLAG_SECRET, URL_PASSWORD, cluster_token):
        assert secret not in result.stderr, (secret, result.stderr[-3000:])
