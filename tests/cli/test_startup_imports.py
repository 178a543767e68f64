"""Each subcommand imports only what it uses: ``summarize``, ``simulate`` and ``--help`` never
load the Kubernetes client, Slack, Redis, pydantic, YAML, or matplotlib and numpy (unless
``--chart``): numpy's import alone costs more than summarising 8,000 GPUs without it.

Checked on whole processes with ``python -X importtime``, which lists every module imported.
"""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli.main import COMMANDS, build_parser, chosen_command, terminal_columns
from tests.conftest import FIXTURES

ROOT = Path(__file__).resolve().parents[2]
SCHEDULER = str(FIXTURES / "scheduler-small.prom")
HEAVY = {
    "kubernetes",
    "slack_bolt",
    "slack_sdk",
    "redis",
    "matplotlib",
    "numpy",
    "pydantic",
    "yaml",
}
CHART = {"matplotlib", "numpy"}


def imported_packages(*args: str) -> set[str]:
    """Top-level packages a ``hami-summary`` process imports (from ``-X importtime``)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "bot.cli.main", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    packages = set()
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            name = line.rsplit("|", 1)[1].strip()
            packages.add(name.split(".")[0])
    assert "bot" in packages, "importtime output not understood"
    return packages


LIGHT_COMMANDS = {
    "help": ["--help"],
    "summarize-help": ["summarize", "--help"],
    "summarize-json": ["summarize", SCHEDULER, "--format", "json"],
    "summarize-text": ["summarize", SCHEDULER, "--format", "text"],
    "summarize-csv": ["summarize", SCHEDULER, "--format", "csv"],
    "simulate": ["simulate", "--nodes", "2", "--gpus-per-node", "2"],
}


@pytest.mark.slow
@pytest.mark.parametrize("args", LIGHT_COMMANDS.values(), ids=LIGHT_COMMANDS.keys())
def test_light_commands_import_no_heavy_package(args: list[str]) -> None:
    heavy = imported_packages(*args) & HEAVY
    assert heavy == set(), f"hami-summary {' '.join(args)} imported {sorted(heavy)}"


@pytest.mark.slow
@pytest.mark.parametrize("args", [["--help"], ["summarize", SCHEDULER, "--format", "json"]])
def test_commands_that_never_log_do_not_import_logging(args: list[str]) -> None:
    assert "logging" not in imported_packages(*args)


@pytest.mark.slow
def test_chart_loads_matplotlib_only_when_asked(tmp_path: Path) -> None:
    chart = tmp_path / "chart.png"
    packages = imported_packages("summarize", SCHEDULER, "--chart", str(chart))
    assert "matplotlib" in packages
    assert packages & (HEAVY - CHART) == set()
    assert chart.read_bytes().startswith(b"\x89PNG")


# Standard modules a summary does not need, each a few milliseconds of every run: argparse's
# default help width (shutil, which brings the archive modules), paths (pathlib), name
# suggestions for a filter that matches nothing (difflib).
UNNEEDED_STANDARD_MODULES = {
    "shutil",
    "pathlib",
    "difflib",
    "bz2",
    "lzma",
}


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["json", "text"])
def test_summarize_imports_no_unneeded_standard_module(fmt: str) -> None:
    imported = imported_packages("summarize", SCHEDULER, "--format", fmt)
    # Only text is wrapped: textwrap compiles its expressions when imported.
    unneeded = UNNEEDED_STANDARD_MODULES | ({"textwrap"} if fmt == "json" else set())
    assert imported & unneeded == set()


def test_help_is_as_wide_as_the_terminal_says(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    assert terminal_columns() == 60
    narrow = build_parser(["summarize"]).format_help()
    monkeypatch.setenv("COLUMNS", "200")
    wide = build_parser(["summarize"]).format_help()
    assert max(map(len, narrow.splitlines())) <= 58
    assert max(map(len, wide.splitlines())) > 60
    monkeypatch.setenv("COLUMNS", "not a number")
    assert terminal_columns() > 0


def test_the_table_help_is_what_each_module_registers() -> None:
    for command in COMMANDS:
        sub = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(command.module).register(sub)
        registered = {action.dest: action.help for action in sub._choices_actions}
        assert registered == {command.name: command.help}


def test_only_the_chosen_command_is_built() -> None:
    parser = build_parser(["summarize", "--example"])
    args = parser.parse_args(["summarize", "--example"])
    assert args.command == "summarize" and args.example and callable(args.run)
    assert chosen_command(["--log-level", "DEBUG", "simulate", "--nodes", "1"]) == "simulate"
    assert chosen_command(["--help"]) is None
    assert chosen_command(["nope"]) is None
    assert chosen_command(["--log-level"]) is None


def test_unknown_command_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        build_parser(["nope"]).parse_args(["nope"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'nope'" in err
    for command in COMMANDS:
        assert f"'{command.name}'" in err
