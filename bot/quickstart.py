"""The README's two commands, runnable with nothing but Python 3.11+.

    python3 -m bot.quickstart run    # set up .venv, then show a full answer on a bundled example
    python3 -m bot.quickstart test   # set up .venv with the dev extra, then lint, type-check, test

Standard library only: this runs before any dependency is installed. The virtual environment is
(re)installed only when pyproject.toml changed since the last install.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / "python"


def _say(message: str) -> None:
    print(f"[quickstart] {message}", file=sys.stderr, flush=True)


def _install_stamp(extra: str) -> str:
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    return f"{digest}:{extra}"


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
        [str(PYTHON), "-m", "pip", "install", "--quiet", "--upgrade", "pip"], check=True, cwd=ROOT
    )
    subprocess.run(
        [str(PYTHON), "-m", "pip", "install", "--quiet", "-e", target], check=True, cwd=ROOT
    )
    stamp_file.write_text(wanted)


def _run(*args: str, env: dict[str, str] | None = None) -> int:
    return subprocess.run(list(args), cwd=ROOT, env=env).returncode


def run_main_job(extra_args: list[str]) -> int:
    """The main job on embedded defaults: no Slack token, Redis or cluster needed."""
    ensure_environment()
    env = dict(os.environ)
    env.setdefault("MPLCONFIGDIR", str(ROOT / ".venv" / "mplconfig"))
    out_dir = ROOT / "hami-summary-output"
    out_dir.mkdir(exist_ok=True)
    chart = out_dir / "example-chart.png"
    return _run(
        str(BIN / "hami-summary"),
        "summarize",
        "--example",
        "--chart",
        str(chart),
        *extra_args,
        env=env,
    )


def run_tests(extra_args: list[str]) -> int:
    """Lint, type-check and run the whole test suite; the first failure decides the exit code."""
    ensure_environment("dev")
    steps = [
        ("ruff", [str(BIN / "ruff"), "check", "core", "bot", "tests"]),
        ("mypy", [str(BIN / "mypy")]),
        ("pytest", [str(BIN / "pytest"), *extra_args]),
    ]
    for name, command in steps:
        _say(f"running {name}")
        code = _run(*command)
        if code != 0:
            # pytest's exit code 5 ("no tests collected") is a failure here too.
            _say(f"{name} failed with exit code {code}")
            return code
    _say("all checks passed")
    return 0


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("run", "test"):
        print(__doc__, file=sys.stderr)
        return 2
    command, rest = argv[0], argv[1:]
    return run_main_job(rest) if command == "run" else run_tests(rest)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
