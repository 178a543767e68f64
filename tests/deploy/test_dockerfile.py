"""The container image definition: non-root, nothing written outside /tmp, the right command."""

from __future__ import annotations

import fnmatch
import shlex
import tomllib
from pathlib import Path

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
