"""``hami-summary why``: a saved ``kubectl describe pod`` answered as the console command runs it
(a subprocess): reasons in words, the check against given metrics, JSON, and bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES

PENDING = FIXTURES / "pending"

pytestmark = pytest.mark.slow


def hami(*args: str, tmp: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot.cli.main", "why", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=dict(os.environ, MPLCONFIGDIR=str(tmp)),
        timeout=120,
        check=False,
    )


def test_describe_file_checked_against_metrics(tmp_path: Path) -> None:
    done = hami(
        str(PENDING / "describe-reason-codes.txt"),
        "--metrics",
        str(FIXTURES / "scheduler-small.prom"),
        tmp=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Why is ml-team/gpu-pod pending?\n")
    assert "- CardInsufficientMemory on 2 nodes: gpu-node-1, gpu-node-2" in done.stdout
    assert "Checked against the allocation now (file scheduler-small.prom):" in done.stdout


def test_stdin_and_json(tmp_path: Path) -> None:
    done = hami(
        "-", "--format", "json", tmp=tmp_path, stdin=(PENDING / "get-events.txt").read_text()
    )
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert [r["code"] for r in document["reasons"]] == [
        "CardTimeSlicingExhausted",
        "CardInsufficientCore",
    ]
    assert document["findings"] == []


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("hami_gpu_core_limit_ratio 1\n", "is not a `kubectl describe pod` output"),
        (None, "cannot read"),
    ],
)
def test_bad_input_gets_a_message_not_a_trace(
    tmp_path: Path, content: str | None, expected: str
) -> None:
    path = tmp_path / "pod.txt"
    if content is not None:
        path.write_text(content)
    done = hami(str(path), tmp=tmp_path)
    assert done.returncode == 2
    assert expected in done.stderr
    assert "Traceback" not in done.stderr
