"""Entry point of the ``hami-summary`` console script.

Exit codes: 0 success, 2 input or cluster problem the user can fix (message on
stderr), 1 internal error (logged with an error id, never a bare stack trace).

Start-up cost is what a user feels on every command, so subcommand modules are imported only
when chosen: ``COMMANDS`` names each one, its module and its one-line help, which is all that
``hami-summary --help`` needs. ``summarize`` and ``simulate`` therefore never load the
Kubernetes client, Slack, Redis or pydantic that other commands need.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from bot.config import terminal_columns

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_CLOSED_PIPE = 141  # 128 + SIGPIPE, as a shell reports a command that a closed pipe stopped
EXIT_USAGE = 2


@dataclass(frozen=True, slots=True)
class Command:
    """A subcommand: its module exposes ``register(subparsers)``, which adds the full parser
    (with the same ``help``) and sets ``run``."""

    name: str
    module: str
    help: str


# To add a subcommand: one row here, and a module with ``register(sub)``.
COMMANDS: tuple[Command, ...] = (
    Command("summarize", "bot.cli.summarize", "summarise HAMi /metrics text from a file or stdin"),
    Command(
        "changes",
        "bot.cli.changes",
        "what changed between two HAMi /metrics exports of one cluster",
    ),
    Command(
        "gpu-hours",
        "bot.cli.gpu_hours",
        "GPU-hours per namespace over a directory of /metrics exports",
    ),
    Command("fit", "bot.cli.fit", "where a job of a given GPU shape would be placed now"),
    Command("pending", "bot.cli.pending", "pods pending on HAMi's resources, grouped by reason"),
    Command("why", "bot.cli.why", "why a pod is pending: its HAMi reasons checked against now"),
    Command(
        "simulate",
        "bot.cli.simulate",
        "write or serve the /metrics text of a simulated HAMi scheduler",
    ),
    Command(
        "clusters",
        "bot.cli.clusters",
        "list kubeconfig files and contexts, and the registered clusters",
    ),
    Command("scrape", "bot.cli.scrape", "summarise a live cluster through the Kubernetes API"),
    Command("serve", "bot.cli.serve", "run the Slack bot (HTTP mode or Socket Mode)"),
    Command("chat", "bot.cli.chat", "talk to the bot in this terminal (no Slack needed)"),
)


# Checked by the parser, which needs no import of ``logging`` (see ``main``).
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def _add_global_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--log-level",
        default="WARNING",
        type=str.upper,
        choices=LOG_LEVELS,
        metavar="LEVEL",
        help="logging level: DEBUG, INFO, WARNING (the default), ERROR or CRITICAL",
    )


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, given the terminal's width.

    argparse builds a formatter for every option it adds (to check its metavar), and without a
    width the formatter imports ``shutil``, which imports the bz2, lzma and zlib modules: a
    cost every command would pay before doing anything.
    """

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        super().__init__(
            prog,
            indent_increment,
            max_help_position,
            terminal_columns() - 2 if width is None else width,
        )


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose help is formatted by ``HelpFormatter`` unless told otherwise
    (its subcommands' parsers too)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)


class _ScoutProblem(Exception):
    pass


class _ScoutParser(Parser):
    """Finds the subcommand; leaves every complaint to the full parser."""

    def error(self, message: str) -> NoReturn:
        raise _ScoutProblem(message)


def chosen_command(argv: Sequence[str]) -> str | None:
    """The subcommand named on the command line, or None (``--help``, none, or a typo)."""
    scout = _ScoutParser(add_help=False)
    _add_global_options(scout)
    scout.add_argument("command", nargs="?")
    try:
        known, _ = scout.parse_known_args(argv)
    except _ScoutProblem:  # e.g. --log-level without a value: the full parser says so
        return None
    names = {command.name for command in COMMANDS}
    return known.command if known.command in names else None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser for ``argv``: every subcommand is listed, only the chosen one is built."""
    chosen = chosen_command(sys.argv[1:] if argv is None else argv)
    parser = Parser(
        prog="hami-summary",
        description="How the GPUs of a Kubernetes cluster are shared out by HAMi.",
    )
    _add_global_options(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for command in COMMANDS:
        if command.name == chosen:
            importlib.import_module(command.module).register(sub)
        else:
            sub.add_parser(command.name, help=command.help, add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command ``argv`` (default: this process's command line)."""
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if "logging" in sys.modules:
        # The chosen command's modules (or the libraries they use) log: set the level and the
        # credential redaction up before it runs. A command whose modules never import logging
        # (summarize, --help) cannot log, and is spared the import.
        from bot.cli.log_setup import configure_logging

        configure_logging(args.log_level)
    try:
        code: int = args.run(args)
        sys.stdout.flush()  # a closed pipe shows here, not at exit
        return code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader stopped early (``| head``): nothing is wrong, and nothing more can be
        # written. Output still buffered goes nowhere, so the exit flush raises nothing.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_CLOSED_PIPE
    except Exception:
        error_id = os.urandom(4).hex()
        from bot.cli.log_setup import configure_logging, log_internal_error

        configure_logging(args.log_level)
        log_internal_error(error_id, args.command)
        print(
            f"hami-summary: internal error (id {error_id}). This is a bug, not your input; "
            "run again with --log-level DEBUG and report the id with the output.",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
