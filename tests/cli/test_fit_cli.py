"""``hami-summary fit``: the JSON contract, the text answer, stdin, help and exit codes, run as
the console command is (a subprocess)."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from core.simulate import simulate_exposition
from tests.conftest import FIXTURES

SCHEDULER = FIXTURES / "scheduler-small.prom"

# Every test runs the command in its own process.
pytestmark = pytest.mark.slow


def hami(*args: str, stdin: bytes | None = None, tmp: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, MPLCONFIGDIR=str(tmp))
    return subprocess.run(
        [sys.executable, "-m", "bot.cli.main", "fit", *args],
        input=stdin.decode() if stdin is not None else "",
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fit") / "cluster.prom"
    path.write_text(simulate_exposition(20, 8, seed=3), encoding="utf-8")
    return path


def test_json_contract_when_it_fits(cluster: Path, tmp_path: Path) -> None:
    done = hami("2x50c/20GiB", str(cluster), "--format", "json", tmp=tmp_path)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert set(doc) >= {"shape", "fits", "placements", "nodes", "reason"}
    assert doc["fits"] is True and doc["reason"] is None
    assert doc["shape"]["gpus"] == 2 and doc["shape"]["cores_per_gpu"] == 50
    assert doc["shape"]["memory_per_gpu_mib"] == 20480
    assert doc["placements"] == sum(node["placements"] for node in doc["nodes"])
    assert all(node["placements"] >= 1 and isinstance(node["node"], str) for node in doc["nodes"])
    keys = [(n["fragmented_gpus_after"], n["node"]) for n in doc["nodes"]]
    assert keys == sorted(keys)
    assert all(len(n["gpus_chosen"]) == 2 for n in doc["nodes"])


def test_json_contract_when_it_does_not_fit(cluster: Path, tmp_path: Path) -> None:
    done = hami("8xH100", str(cluster), "--format", "json", tmp=tmp_path)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["fits"] is False and doc["placements"] == 0 and doc["nodes"] == []
    assert "needs 8 on one node" in doc["reason"]
    assert doc["closest"].endswith("now.")
    assert [m["model"] for m in doc["models_matched"]] == ["NVIDIA H100 80GB HBM3"]


def test_text_answer_lists_nodes_best_first(cluster: Path, tmp_path: Path) -> None:
    done = hami("1xA100 memory=30GiB", str(cluster), "--top", "5", tmp=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("1 x A100, 0 cores and 30.0 GiB each: fits now on ")
    assert "Nodes, best first" in done.stdout
    assert "more node(s); --format json lists every one." in done.stdout
    assert max(len(line) for line in lines) <= 100


def test_text_answer_says_why_not(tmp_path: Path) -> None:
    done = hami("8xH100", str(SCHEDULER), tmp=tmp_path)
    assert done.returncode == 0
    assert "does not fit now" in done.stdout
    assert "no GPU model matches 'H100'. Models here:" in done.stdout


def test_stdin_and_example(tmp_path: Path) -> None:
    piped = hami("1", "-", "--format", "json", stdin=SCHEDULER.read_bytes(), tmp=tmp_path)
    assert piped.returncode == 0, piped.stderr
    example = hami("1", "--example", "--format", "json", tmp=tmp_path)
    assert example.returncode == 0, example.stderr
    assert json.loads(piped.stdout)["fits"] is True
    assert json.loads(example.stdout)["shape"]["whole_gpu"] is True


def test_bad_shape_is_exit_2_with_an_example(tmp_path: Path) -> None:
    done = hami("2x50", str(SCHEDULER), tmp=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert "'50' has no unit" in done.stderr and "2x50c/20GiB" in done.stderr
    assert "Traceback" not in done.stderr


def test_missing_file_and_bad_split_count_are_exit_2(tmp_path: Path) -> None:
    missing = hami("1", str(tmp_path / "nope.prom"), tmp=tmp_path)
    assert missing.returncode == 2 and "cannot read" in missing.stderr
    split = hami("1", str(SCHEDULER), "--split-count", "0", tmp=tmp_path)
    assert split.returncode == 2 and "--split-count must be 1 or more" in split.stderr


def test_no_input_at_a_terminal_says_what_to_give(tmp_path: Path) -> None:
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "bot.cli.main", "fit", "8xH100"],
            stdin=follower,
            capture_output=True,
            text=True,
            env=dict(os.environ, MPLCONFIGDIR=str(tmp_path)),
            timeout=120,
            check=False,
        )
    finally:
        os.close(leader)
        os.close(follower)
    assert done.returncode == 2
    assert "no input: give a metrics file (hami-summary fit 8xH100 metrics.prom)" in done.stderr


def test_help_shows_examples(tmp_path: Path) -> None:
    done = hami("--help", tmp=tmp_path)
    assert done.returncode == 0
    for example in ("8xH100", "2x50c/20GiB", "1xA100 memory=30GiB", "hami-summary fit"):
        assert example in done.stdout
