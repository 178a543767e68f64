"""The README's two commands, runnable with nothing but Python 3.11+.

    python3 -m bot.quickstart run    # set up .venv, then the bot in this terminal, example loaded
    python3 -m bot.quickstart test   # set up .venv with the dev extra, then lint, type-check, test
    python3 -m bot.quickstart test --fast   # the same without the tests marked slow
    python3 -m bot.quickstart docs   # build the documentation site, --strict (a test step)

Standard library only: this runs before any dependency is installed. The virtual environment is
(re)installed only when pyproject.toml changed since the last install.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

from bot.config import process_environment

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / "python"


def _say(message: str) -> None:
    print(f"[quickstart] {message}", file=sys.stderr, flush=True)


# The editable install puts this checkout on sys.path with one line of a .pth file. The
# default mode installs an import finder instead, whose start-up (pathlib, fnmatch and the
# finder itself: several milliseconds) every command of this checkout would pay.
EDITABLE_MODE = "compat"


def _install_stamp(extra: str) -> str:
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    return f"{digest}:{extra}:{EDITABLE_MODE}"


def ensure_environment(extra: str = "") -> None:
    """Create ``.venv`` and install the project (with ``extra``) unless already current."""
    if sys.version_info < (3, 11):  # noqa: UP036 - this runs under whatever python3 is first
        sys.exit(f"hami-summary needs Python 3.11 or newer; this is {sys.version.split()[0]}.")
    stamp_file = VENV / ".hami-summary-install"
    wanted = _install_stamp(extra)
    if not PYTHON.exists():
        _say(f"creating a virtual environment in {VENV}")
        venv.EnvBuilder(with_pip=True).create(VENV)
    if stamp_file.exists() and stamp_file.read_text() == wanted:
        return
    target = f".[{extra}]" if extra else "."
    _say(
        f"installing hami-summary{f' with {extra} tools' if extra else ''} (pip, a minute "
        "or two the first time)"
    )
    subprocess.run(
        [str(PYTHON), "-m", "pip", "install", "--quiet", "--quiet", "--upgrade", "pip"],
        check=True,
        cwd=ROOT,
    )
    subprocess.run(
        [
            str(PYTHON),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--quiet",
            "--config-settings",
            f"editable_mode={EDITABLE_MODE}",
            "-e",
            target,
        ],
        check=True,
        cwd=ROOT,
    )
    stamp_file.write_text(wanted)


def _run(*args: str, env: dict[str, str] | None = None) -> int:
    return subprocess.run(list(args), cwd=ROOT, env=env).returncode


DEMO_REGISTRY = """\
# Written by `python3 -m bot.quickstart run`: the local simulated cluster, for /hami-summary demo.
clusters:
  - name: demo
    display_name: Simulated demo cluster (this machine)
    metrics_url: {url}
    cache_ttl_seconds: 15
"""


def _start_demo_exporter(env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    """Serve a slowly changing simulated HAMi scheduler on a free loopback port."""
    command = [
        str(BIN / "hami-summary"),
        "simulate",
        "--nodes",
        "6",
        "--gpus-per-node",
        "4",
        "--seed",
        "7",
        "--serve",
        "0",
        "--drift-seconds",
        "20",
    ]
    process = subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    first_line = process.stderr.readline()
    match = re.search(r"(http://\S+/metrics)", first_line)
    if match is None:
        process.terminate()
        raise RuntimeError(f"the demo exporter did not start: {first_line.strip()}")
    return process, match.group(1)


def run_main_job(extra_args: list[str]) -> int:
    """The main job on embedded defaults: no Slack token, Redis or cluster needed.

    The bot's own conversation runs in this terminal (``hami-summary chat``) with the bundled
    example already loaded, and a simulated cluster registered as ``demo`` so that
    ``/hami-summary demo`` answers live. Charts and files land in ``hami-summary-output/``.
    """
    ensure_environment()
    env = process_environment()
    env.setdefault("MPLCONFIGDIR", str(VENV / "mplconfig"))
    out_dir = ROOT / "hami-summary-output"
    out_dir.mkdir(exist_ok=True)
    exporter, url = _start_demo_exporter(env)
    try:
        if "HAMI_CLUSTERS_FILE" not in env:
            registry = out_dir / "demo-clusters.yaml"
            registry.write_text(DEMO_REGISTRY.format(url=url))
            env["HAMI_CLUSTERS_FILE"] = str(registry)
        _say(f"demo cluster 'demo' serving at {url}; try: /hami-summary demo")
        return _run(
            str(BIN / "hami-summary"),
            "chat",
            "--example",
            "--out-dir",
            str(out_dir),
            *extra_args,
            env=env,
        )
    finally:
        exporter.terminate()
        exporter.wait(timeout=10)


def pytest_command(extra_args: list[str]) -> list[str]:
    """pytest on two workers per core (pytest-xdist; idle workers steal queued tests).

    ``--fast`` leaves out the tests marked ``slow`` (those that start processes, build a
    1,000-node cluster or run a property's full example count) for the edit-test loop. Other
    arguments go to pytest after ours, so ``-n 0`` runs in one process and ``-m ...`` chooses
    other tests.
    """
    fast = "--fast" in extra_args
    rest = [arg for arg in extra_args if arg != "--fast"]
    selection = ["-m", "not slow"] if fast else []
    return [str(BIN / "pytest"), "-n", str(workers()), "--dist", "worksteal", *selection, *rest]


def workers() -> int:
    """Two pytest workers per core: many tests spend most of their time waiting on a socket or
    a thread (a bot's reply, a server's shutdown), so one worker per core leaves cores idle."""
    return 2 * (os.cpu_count() or 1)


def check_environment(environ: dict[str, str]) -> dict[str, str]:
    """The environment of the checks: compiled modules are kept from one run to the next.

    With ``PYTHONDONTWRITEBYTECODE`` set, each pytest worker would compile the project and
    rewrite the asserts of every test module again on every run, seconds of CPU each time;
    the compiled files go under ``.venv/pycache`` instead, so the source tree stays as free of
    them as that setting asks.
    """
    env = dict(environ)
    if env.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
        env.setdefault("PYTHONPYCACHEPREFIX", str(VENV / "pycache"))
    return env


def run_tests(extra_args: list[str]) -> int:
    """Lint, type-check and run the test suite; the first failure decides the exit code."""
    ensure_environment("dev")
    env = check_environment(process_environment())
    steps = [
        ("ruff", [str(BIN / "ruff"), "check", "core", "bot", "tests"]),
        ("ruff format", [str(BIN / "ruff"), "format", "--check", "."]),
        ("mypy", [str(BIN / "mypy")]),
        ("docs", [str(PYTHON), "-m", "bot.quickstart", "docs"]),
        ("pytest", pytest_command(extra_args)),
    ]
    for name, command in steps:
        _say(f"running {name}")
        code = _run(*command, env=env)
        if code != 0:
            # pytest's exit code 5 ("no tests collected") is a failure here too.
            _say(f"{name} failed with exit code {code}")
            return code
    _say("all checks passed")
    return 0


def build_docs() -> int:
    """``mkdocs build --strict`` of ``docs/`` into a temporary folder, so the site never lands in
    the checkout; a broken link, a page left out of the navigation or any warning fails it.

    mkdocs-material prints a notice about its successor on every start, which would read as a
    warning in every test run; its own switch turns it off.
    """
    ensure_environment("dev")
    env = dict(process_environment(), NO_MKDOCS_2_WARNING="1")
    with tempfile.TemporaryDirectory(prefix="hami-summary-site-") as site:
        # No --quiet: mkdocs 1.6 then drops warnings before --strict counts them, and passes.
        command = [str(BIN / "mkdocs"), "build", "--strict", "--site-dir", site]
        return _run(*command, env=env)


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("run", "test", "docs"):
        print(__doc__, file=sys.stderr)
        return 2
    command, rest = argv[0], argv[1:]
    if command == "docs":
        return build_docs()
    return run_main_job(rest) if command == "run" else run_tests(rest)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
