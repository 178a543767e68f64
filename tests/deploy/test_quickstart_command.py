"""The pytest command that ``python3 -m bot.quickstart test`` runs."""

from __future__ import annotations

from bot.quickstart import BIN, pytest_command


def test_the_suite_runs_on_every_core() -> None:
    assert pytest_command([]) == [str(BIN / "pytest"), "-n", "auto", "--dist", "worksteal"]


def test_fast_leaves_out_slow_tests_and_passes_the_rest_on() -> None:
    command = pytest_command(["--fast", "-k", "views"])
    assert command[1:] == ["-n", "auto", "--dist", "worksteal", "-m", "not slow", "-k", "views"]


def test_arguments_after_ours_win() -> None:
    assert pytest_command(["-n", "0"])[-2:] == ["-n", "0"]
