"""``--max-input-mib``: the one command-line option for the input limit, on every command that
reads a metrics file or scrapes a cluster.

It overrides ``HAMI_SUMMARY_MAX_INPUT_MIB``, which overrides ``max_input_bytes`` in the
settings file (``bot.settings_file``).
"""

from __future__ import annotations

import argparse

from core.settings import DEFAULT_SETTINGS

_DEFAULT_MIB = DEFAULT_SETTINGS.limits.max_input_bytes // 1048576


def add_max_input_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-input-mib",
        type=_positive_mib,
        default=None,
        metavar="MIB",
        help=f"refuse metrics larger than this (default {_DEFAULT_MIB}, enough for a "
        "10,000-node scheduler; or $HAMI_SUMMARY_MAX_INPUT_MIB)",
    )


def _positive_mib(raw: str) -> float:
    try:
        mib = float(raw)
    except ValueError:
        mib = -1.0
    if not mib > 0 or mib == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of MiB, got {raw!r}")
    return mib
