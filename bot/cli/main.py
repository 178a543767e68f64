"""Entry point of the ``hami-summary`` console script.

Exit codes (DESIGN.md): 0 success, 2 input or cluster problem the user can fix (message on
stderr), 1 internal error (logged with an error id, never a bare stack trace).
"""

from __future__ import annotations

import argparse
import logging
import sys
import uuid
from collections.abc import Sequence
from types import ModuleType

from bot.ops.logging import redact_handlers

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USAGE = 2

log = logging.getLogger("hami_summary.cli")


def _command_modules() -> list[ModuleType]:
    # Each module exposes ``register(subparsers)``, which adds its parser and sets ``run``.
    from bot.cli import chat, clusters, scrape, serve, simulate, summarize

    return [summarize, simulate, clusters, scrape, serve, chat]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hami-summary",
        description="How the GPUs of a Kubernetes cluster are shared out by HAMi.",
    )
    parser.add_argument("--log-level", default="WARNING", help="logging level (default WARNING)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module in _command_modules():
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr)
    # Every command's logs, not only serve's JSON lines, go through the credential redaction.
    redact_handlers()
    try:
        code: int = args.run(args)
        return code
    except KeyboardInterrupt:
        return 130
    except Exception:
        error_id = uuid.uuid4().hex[:8]
        # The traceback is for developers: shown with --log-level DEBUG, never by default.
        log.error(
            "internal error %s in %s",
            error_id,
            args.command,
            exc_info=log.isEnabledFor(logging.DEBUG),
        )
        print(
            f"hami-summary: internal error (id {error_id}). This is a bug, not your input; "
            "run again with --log-level DEBUG and report the id with the output.",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
