"""Logging for the console script: the level asked for, and credentials redacted everywhere.

Kept apart from ``bot.cli.main`` so that a command whose modules never log (``summarize``,
``--help``) does not import ``logging`` at all: its import is a noticeable part of a short
command's start-up.
"""

from __future__ import annotations

import logging
import sys


class _RedactingOnFirstRecord(logging.Filter):
    """``bot.ops.logging.RedactingFilter``, loaded when the first record comes: most runs of
    a command log nothing, and compiling the redaction patterns is a noticeable part of the
    start-up of a short command."""

    def __init__(self) -> None:
        super().__init__()
        self._redacting: logging.Filter | None = None

    def filter(self, record: logging.LogRecord) -> bool:
        if self._redacting is None:
            from bot.ops.logging import RedactingFilter

            self._redacting = RedactingFilter()
        return bool(self._redacting.filter(record))


def configure_logging(level: str) -> None:
    """Log at ``level`` (one of ``bot.cli.main.LOG_LEVELS``) to stderr.

    Every handler of the root logger redacts credentials, at any level: what the Kubernetes
    client, an exec credential plugin's error output or the bot logs (``serve`` replaces these
    handlers with ``bot.ops.logging.configure_logging``'s, which redact too)."""
    logging.basicConfig(level=level, stream=sys.stderr)
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, _RedactingOnFirstRecord) for f in handler.filters):
            handler.addFilter(_RedactingOnFirstRecord())


def log_internal_error(error_id: str, command: str) -> None:
    """Log an unexpected exception of ``command``; the traceback only at DEBUG (for
    developers; never shown by default)."""
    log = logging.getLogger("hami_summary.cli")
    log.error(
        "internal error %s in %s", error_id, command, exc_info=log.isEnabledFor(logging.DEBUG)
    )
