"""The pytest command that ``python3 -m bot.quickstart test`` runs."""

from __future__ import annotations

import os

from bot.quickstart import BIN, VENV, check_environment, pytest_command

WORKERS = str(2 * (os.cpu_count() or 1))


def test_the_suite_runs_two_workers_per_core() -> None:
    assert pytest_command([]) == [str(BIN / "pytest"), "-n", WORKERS, "--dist", "worksteal"]


def test_fast_leaves_out_slow_tests_and_passes_the_rest_on() -> None:
    command = pytest_command(["--fast", "-k", "views"])
    assert command[1:] == ["-n", WORKERS, "--dist", "worksteal", "-m", "not slow", "-k", "views"]


def test_arguments_after_ours_win() -> None:
    assert pytest_command(["-n", "0"])[-2:] == ["-n", "0"]


def test_compiled_modules_are_kept_out_of_the_tree_when_bytecode_writing_is_off() -> None:
    env = check_environment({"PYTHONDONTWRITEBYTECODE": "1", "HOME": "/home/a"})
    assert env == {"PYTHONPYCACHEPREFIX": str(VENV / "pycache"), "HOME": "/home/a"}
    assert check_environment({"HOME": "/home/a"}) == {"HOME": "/home/a"}
    chosen = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": "/tmp/pyc"}
    assert check_environment(chosen) == {"PYTHONPYCACHEPREFIX": "/tmp/pyc"}
