"""``hami-summary clusters`` never prints a URL's credentials: user-info and secret query
values of registered URLs and kubeconfig servers are hidden, in text and JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SECRETS = ("s3cret-pw", "tok123", "kpw", "ktok", "promkey", "sig-value")


def write_setup(tmp_path: Path, metrics_url: str) -> tuple[Path, Path]:
    kube_dir = tmp_path / "kube"
    kube_dir.mkdir()
    (kube_dir / "prod.kubeconfig").write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "prod",
                "clusters": [
                    {
                        "name": "gpu",
                        "cluster": {"server": "https://kubeuser:kpw@127.0.0.1:9/?token=ktok"},
                    }
                ],
                "users": [{"name": "viewer", "user": {"token": "kube-token-not-a-secret"}}],
                "contexts": [{"name": "prod", "context": {"cluster": "gpu", "user": "viewer"}}],
            }
        )
    )
    registry = tmp_path / "clusters.yaml"
    registry.write_text(
        "clusters:\n"
        "  - name: demo\n"
        f"    metrics_url: {metrics_url}\n"
        "    allowed_channels: [C0TEAM01]\n"
        "  - name: thanos\n"
        "    prometheus_url: https://thanos.example.com/?apikey=promkey&X-Amz-Signature=sig-value\n"
        "    allowed_channels: [C0TEAM01]\n"
    )
    return kube_dir, registry


def clusters(kube_dir: Path, registry: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HAMI_CLUSTERS_FILE": str(registry)}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "bot.cli.main",
            "clusters",
            "--kubeconfig-dir",
            str(kube_dir),
            *args,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


@pytest.mark.slow
@pytest.mark.parametrize("output", ["text", "json"])
def test_clusters_hides_url_credentials(tmp_path: Path, output: str) -> None:
    kube_dir, registry = write_setup(
        tmp_path, "http://admin:s3cret-pw@127.0.0.1:1/metrics?token=tok123&job=hami"
    )
    result = clusters(kube_dir, registry, "--format", output)
    assert result.returncode == 0, result.stderr
    shown = result.stdout + result.stderr
    for secret in SECRETS:
        assert secret not in shown
    assert "admin" not in shown and "kubeuser" not in shown
    assert "http://127.0.0.1:1/metrics?token=***&job=hami" in shown
    assert "https://thanos.example.com/?apikey=***&X-Amz-Signature=***" in shown
    assert "https://127.0.0.1:9/?token=***" in shown


@pytest.mark.slow
def test_a_bad_registry_url_is_refused_without_showing_its_password(tmp_path: Path) -> None:
    kube_dir, registry = write_setup(tmp_path, "ftp://admin:s3cret-pw@files.example.com/m")
    result = clusters(kube_dir, registry)
    assert result.returncode == 2
    assert "s3cret-pw" not in result.stdout + result.stderr
    assert 'field "metrics_url": "ftp://files.example.com/m" is not an http(s) URL' in (
        result.stderr
    )
