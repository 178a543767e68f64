"""What the console script says when its own options are wrong or a command fails unexpectedly:
a message and an exit code, never a stack trace unless ``--log-level DEBUG`` asks for one."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli.main import main

ROOT = Path(__file__).resolve().parents[2]

# A summarize run whose summary step fails in a way no input can cause (a bug).
FAILING_SUMMARIZE = """\
import sys
import bot.cli.summarize as summarize
from bot.cli.main import main

def broken(*args, **kwargs):
    raise RuntimeError("secret-free boom")

summarize.summarize_text = broken
sys.exit(main(sys.argv[1:]))
"""


def test_an_unknown_log_level_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--log-level", "LOUD", "summarize", "--example"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "argument --log-level: invalid choice: 'LOUD'" in err
    assert "Traceback" not in err


def test_the_log_level_is_read_in_any_case(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--log-level", "debug", "summarize", "--example", "--format", "json"]) == 0
    assert capsys.readouterr().out.startswith('{"schema_version":1,')


def _run_failing(*options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", FAILING_SUMMARIZE, *options, "summarize", "--example"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow
def test_an_internal_error_is_logged_with_its_id_and_no_traceback() -> None:
    done = _run_failing()
    assert done.returncode == 1
    shown = re.search(r"hami-summary: internal error \(id ([0-9a-f]{8})\)", done.stderr)
    assert shown is not None, done.stderr
    assert f"internal error {shown.group(1)} in summarize" in done.stderr
    assert "Traceback" not in done.stderr and "boom" not in done.stderr


@pytest.mark.slow
def test_debug_logging_shows_the_traceback_of_an_internal_error() -> None:
    done = _run_failing("--log-level", "DEBUG")
    assert done.returncode == 1
    assert "Traceback" in done.stderr and "RuntimeError: secret-free boom" in done.stderr


@pytest.mark.slow
def test_a_reader_that_stops_early_ends_the_command_quietly(tmp_path: Path) -> None:
    # ``hami-summary summarize big.prom --format json | head``: the pipe closes after the first
    # bytes. That is no bug of the command's and no error of the user's: no message, and the
    # exit status a shell gives a command stopped by a closed pipe.
    metrics = tmp_path / "scheduler.prom"
    command = [sys.executable, "-m", "bot.cli.main"]
    simulate = ["simulate", "--nodes", "100", "--gpus-per-node", "8", "--output", str(metrics)]
    subprocess.run([*command, *simulate], cwd=ROOT, check=True, capture_output=True, timeout=120)
    with subprocess.Popen(
        [*command, "summarize", str(metrics), "--format", "json"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as child:
        assert child.stdout is not None and child.stderr is not None
        assert child.stdout.read(100).startswith(b'{"schema_version":1,')
        child.stdout.close()  # the document is megabytes: far more than a pipe holds
        errors = child.stderr.read().decode()
        assert child.wait(timeout=120) == 141
    assert errors == ""
