"""``hami-summary summarize`` as a whole process: it ends itself once its output is flushed.

The command line of the process (no ``argv`` given to ``main``) ends with ``os._exit`` after a
successful summary, and writes a JSON document orjson wrote as UTF-8 bytes straight to the
stdout buffer. What arrives must be exactly what ``main([...])`` writes in-process, whatever
the stream's encoding, and warnings, errors and exit codes must be those of the in-process
route.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli.main import main
from tests.conftest import FIXTURES

SCHEDULER = str(FIXTURES / "scheduler-small.prom")
pytestmark = pytest.mark.slow


def process(
    tmp_path: Path, *args: str, stdin: bytes | None = None, encoding: str | None = None
) -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ, MPLCONFIGDIR=str(tmp_path))
    env.pop("HAMI_SUMMARY_SETTINGS", None)
    if encoding is not None:
        env["PYTHONIOENCODING"] = encoding
    return subprocess.run(
        [sys.executable, "-m", "bot.cli.main", "summarize", *args],
        input=stdin,
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )


def in_process(capsysbinary: pytest.CaptureFixture[bytes], *args: str) -> tuple[int, bytes]:
    code = main(["summarize", *args])
    return code, capsysbinary.readouterr().out


@pytest.mark.parametrize(
    "options",
    [
        ["--format", "json"],
        ["--format", "json", "--pretty"],
        ["--format", "text"],
        ["--format", "csv"],
        ["--format", "json", "--namespace", "team-b"],
    ],
)
def test_the_process_writes_what_main_writes(
    capsysbinary: pytest.CaptureFixture[bytes], tmp_path: Path, options: list[str]
) -> None:
    done = process(tmp_path, SCHEDULER, *options)
    assert done.returncode == 0, done.stderr
    assert (0, done.stdout) == in_process(capsysbinary, SCHEDULER, *options)
    assert done.stdout.endswith(b"\n") and b"Traceback" not in done.stderr


def test_a_stream_that_is_not_utf8_gets_the_text_it_always_got(tmp_path: Path) -> None:
    """With a non-UTF-8 stdout the bytes are not sent as they are: the stream encodes."""
    utf8 = process(tmp_path, SCHEDULER, "--format", "json")
    latin = process(tmp_path, SCHEDULER, "--format", "json", encoding="latin-1")
    assert latin.returncode == 0, latin.stderr
    assert latin.stdout.decode("latin-1") == utf8.stdout.decode("utf-8")


def test_a_warning_still_reaches_stderr_before_the_process_ends(tmp_path: Path) -> None:
    text = Path(SCHEDULER).read_text(encoding="utf-8")
    repeated = text + "\n" + text  # every series twice: counted once, and said so
    done = process(tmp_path, "-", "--format", "json", stdin=repeated.encode())
    assert done.returncode == 0, done.stderr
    assert b"warning: Input problems" in done.stderr
    assert done.stdout.rstrip().endswith(b"}")


def test_errors_keep_exit_code_2_and_their_message(tmp_path: Path) -> None:
    missing = process(tmp_path, str(tmp_path / "nothing.prom"), "--format", "json")
    assert missing.returncode == 2
    assert b"cannot read" in missing.stderr and missing.stdout == b""


def test_a_large_document_arrives_whole(tmp_path: Path) -> None:
    """Many times a pipe buffer: the flush before the process ends writes all of it."""
    big = tmp_path / "big.prom"
    made = subprocess.run(
        [
            sys.executable,
            "-m",
            "bot.cli.main",
            "simulate",
            "--nodes=60",
            "--gpus-per-node=8",
            "--output",
            str(big),
        ],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    done = process(tmp_path, str(big), "--format", "json", "--pretty")
    assert done.returncode == 0, done.stderr
    assert len(done.stdout) > 500_000  # a pipe buffer holds 64 KiB
    assert json.loads(done.stdout)["cluster"]["nodes"] == 60
