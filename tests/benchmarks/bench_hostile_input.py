"""Benchmark: hostile inputs cost no more than ordinary ones of the same size.

Run from the repository root:

    .venv/bin/python tests/benchmarks/bench_hostile_input.py [--repeat 3]

1. ``summarize_text`` plus the text report, on each hostile file against an ordinary exposition
   of the same size (the simulator's output cut at a line): a 42 KB file with one 40,000-digit
   value then junk, 160,000 labels on one line (1.8 MB), one 4 MB label value. Target: at most
   3x the ordinary file's CPU time (before the fixes: 39 s, several seconds, and 11 s).
2. What a Slack message costs before its acknowledgement (``typed_text`` and
   ``looks_like_metrics``), on a 40,000-character line of digits then junk against 40,000
   characters of metrics text. Target: at most 3x.
3. Every pattern of ``tests/core/user_text_patterns.py`` on adversarial strings of 5,000 and
   50,000 characters (what the pattern starts with, a run of a piece it or a parser looks for,
   then a tail):
   the worst ratio of the two times. Linear is about 10x, quadratic 100x. Target: at most 20x.
   Times under 0.2 ms at 50,000 characters are too small to compare and count as a pass.

CPU time of this process, best of ``--repeat``. Prints one PASS/FAIL line per target and exits 1
if any fails.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bot.conversation.parsing import looks_like_metrics  # noqa: E402
from bot.slack.incoming import typed_text  # noqa: E402
from core.api import summarize_text  # noqa: E402
from core.errors import InputError  # noqa: E402
from core.model import SourceInfo  # noqa: E402
from core.simulate import simulate_exposition  # noqa: E402
from core.views import render  # noqa: E402
from tests.conftest import read_fixture  # noqa: E402
from tests.core.test_user_text_patterns import ADVERSARIAL_PIECES, compiled  # noqa: E402
from tests.core.user_text_patterns import USER_TEXT  # noqa: E402

SOURCE = SourceInfo(kind="paste", label="benchmark")
TARGET_FILE_RATIO = 3.0
TARGET_PATTERN_RATIO = 20.0
TOO_SMALL_SECONDS = 0.0002
_parser: Any = getattr(re, "_parser")  # noqa: B009 - the standard library's pattern parser
_c: Any = getattr(re, "_constants")  # noqa: B009


def cpu_seconds(run: Callable[..., object], repeat: int, *args: object) -> float:
    """The least CPU time of ``repeat`` calls of ``run(*args)``."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        run(*args)
        best = min(best, time.process_time() - start)
    return best


def summarize_and_render(text: str) -> None:
    with contextlib.suppress(InputError):
        render(summarize_text(text, SOURCE), "text", top=20)


def ordinary_text(size: int) -> str:
    """A plain scheduler exposition of about ``size`` characters, cut at a line."""
    nodes = 1
    text = simulate_exposition(nodes, 8, seed=5)
    while len(text) < size:
        nodes *= 2
        text = simulate_exposition(nodes, 8, seed=5)
    return text[: text.rindex("\n", 0, size) + 1]


def hostile_files() -> dict[str, str]:
    fixture = read_fixture("scheduler-small.prom")
    labels = ",".join(f'l{i}="v"' for i in range(160_000))
    return {
        "40,000-digit value": fixture
        + "# HELP foo_x x\n# TYPE foo_x gauge\nfoo_x "
        + "1" * 40_000
        + "x\n",
        "160,000 labels on one line": fixture.replace(
            'zone="vGPU"} 50\n', f'zone="vGPU",{labels}}} 50\n', 1
        ),
        "4 MB label value": fixture.replace(
            'node="gpu-node-1"', 'node="' + "a" * 4_000_000 + '"', 1
        ),
    }


def leading_literal(pattern: re.Pattern[str]) -> str:
    """The characters every match of ``pattern`` starts with (after anchors), if any."""
    chars = []
    for op, value in _parser.parse(pattern.pattern, pattern.flags):
        if op == _c.AT:
            continue
        if op != _c.LITERAL:
            break
        chars.append(chr(value))
    return "".join(chars)


def apply(pattern: re.Pattern[str], method: str, text: str) -> object:
    if method == "sub":
        return pattern.sub("", text)
    if method == "split":
        return pattern.split(text)
    return getattr(pattern, method)(text)


def worst_pattern_ratio(pattern: re.Pattern[str], method: str, repeat: int) -> tuple[float, str]:
    """The worst 50,000 / 5,000 time ratio over the adversarial strings, and its string.

    Each string is a prefix (nothing, or what the pattern starts with and a separator), a run
    of one piece, and a tail that may make the match fail at the very end.
    """
    literal = leading_literal(pattern)
    prefixes = [""] + ([literal, literal + " ", literal + "=", literal + '="'] if literal else [])
    pieces = [*ADVERSARIAL_PIECES, *([literal] if literal else [])]
    worst, worst_input = 0.0, ""
    for prefix in prefixes:
        for piece in pieces:
            for tail in ("", "x", "\n"):
                small = prefix + piece * (5_000 // len(piece) + 1) + tail
                large = prefix + piece * (50_000 // len(piece) + 1) + tail
                large_seconds = cpu_seconds(apply, repeat, pattern, method, large)
                if large_seconds < TOO_SMALL_SECONDS:
                    continue
                small_seconds = cpu_seconds(apply, repeat, pattern, method, small)
                ratio = large_seconds / max(small_seconds, 1e-6)
                if ratio > worst:
                    worst, worst_input = ratio, f"{prefix!r} + {piece!r} x n + {tail!r}"
    return worst, worst_input


def before_ack(message: str) -> bool:
    """What the bot does with a message's text before acknowledging it."""
    return looks_like_metrics(typed_text(message))


def report(label: str, ratio: float, target: float, detail: str) -> bool:
    verdict = "PASS" if ratio <= target else "FAIL"
    print(f"{verdict} {label}: {detail} = {ratio:.2f} (target <= {target:g})")
    return verdict == "PASS"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    passed = True
    for label, text in hostile_files().items():
        ordinary = ordinary_text(len(text))
        hostile_seconds = cpu_seconds(summarize_and_render, args.repeat, text)
        ordinary_seconds = cpu_seconds(summarize_and_render, args.repeat, ordinary)
        passed &= report(
            f"{label} ({len(text):,} chars) / ordinary file ({len(ordinary):,} chars)",
            hostile_seconds / ordinary_seconds,
            TARGET_FILE_RATIO,
            f"{hostile_seconds:.4f} s / {ordinary_seconds:.4f} s",
        )
    chat_line = "a{} " + "1" * 39_995 + "x"
    metrics_message = ordinary_text(40_000)
    hostile_seconds = cpu_seconds(before_ack, args.repeat, chat_line)
    ordinary_seconds = cpu_seconds(before_ack, args.repeat, metrics_message)
    passed &= report(
        "40,000-character chat line / 40,000 characters of metrics, before the ack",
        hostile_seconds / ordinary_seconds,
        TARGET_FILE_RATIO,
        f"{hostile_seconds:.5f} s / {ordinary_seconds:.5f} s",
    )
    for key, entry in sorted(USER_TEXT.items()):
        for pattern in compiled(key):
            ratio, worst_input = worst_pattern_ratio(pattern, entry.method, args.repeat)
            passed &= report(
                f"{key} ({entry.method})",
                ratio,
                TARGET_PATTERN_RATIO,
                f"worst 50,000 / 5,000 time on {worst_input or 'none over 0.2 ms'}",
            )
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
