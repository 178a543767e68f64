"""Benchmark: redacting a log text costs time in proportion to its length, whatever it holds.

Run from the repository root:

    .venv/bin/python tests/benchmarks/bench_redaction.py [--repeat 3]

For each adversarial fragment (key names, separators, URL parts, flag prefixes, PEM headers)
repeated to 5,000 and to 50,000 characters, each redaction pattern's CPU time on the long text
is compared with its time on the short one. Linear patterns scale by about 10; a backtracking
one by 100 or more (the former key/value pattern took 7.7 s on 8,000 characters and grows with
the cube of the length). Target: at most 25 for every pattern and fragment. Also prints
``redact`` on each 50,000-character text against ``redact`` on 50,000 characters of ordinary log
text (a reference measured in the same run).

CPU time of this process, best of ``--repeat``. Prints one PASS/FAIL line per pattern and exits
1 if any fails.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable
from functools import partial

from bot.ops import logging as redaction

SHORT, LONG = 5_000, 50_000
SCALING_TARGET = 25.0
FRAGMENTS = [
    "token=", "a", "a_", ":", "@", "x://a:", "--token ", "name: secret_token ", "bearer ",
    "secret_", "1", "xoxb-", "-----BEGIN RSA PRIVATE KEY-----", " ", '"', "a-key", "x_key =",
    "'", "\\", "-----END ", "LS0tLS1CRUdJTi",
]  # fmt: skip
ORDINARY = "GET /api/v1/namespaces/kube-system/services 200 in 12 ms for cluster gpu-prod\n"


def cpu_seconds(run: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return best


def repeated(fragment: str, size: int) -> str:
    return (fragment * (size // len(fragment) + 1))[:size]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    repeat = parser.parse_args(argv).repeat
    failed = False
    patterns = [value for value in vars(redaction).values() if isinstance(value, re.Pattern)]
    for pattern in patterns:
        worst, worst_fragment = 0.0, ""
        for fragment in FRAGMENTS:
            short_text, long_text = repeated(fragment, SHORT), repeated(fragment, LONG)
            short = cpu_seconds(partial(pattern.sub, "x", short_text), repeat)
            long = cpu_seconds(partial(pattern.sub, "x", long_text), repeat)
            # Below the clock's resolution both are noise: count them as one tick.
            ratio = max(long, 1e-4) / max(short, 1e-4)
            if ratio > worst:
                worst, worst_fragment = ratio, fragment
        verdict = "PASS" if worst <= SCALING_TARGET else "FAIL"
        failed |= verdict == "FAIL"
        print(
            f"{verdict} {pattern.pattern[:40]!r}...: 10x longer text costs {worst:.1f}x "
            f"(worst fragment {worst_fragment!r}, target <= {SCALING_TARGET:g})"
        )
    reference = cpu_seconds(lambda: redaction.redact(repeated(ORDINARY, LONG)), repeat)
    for fragment in FRAGMENTS:
        text = repeated(fragment, LONG)
        spent = cpu_seconds(partial(redaction.redact, text), repeat)
        print(
            f"redact {fragment!r} x {LONG:,} characters: {spent * 1000:.1f} ms = "
            f"{spent / max(reference, 1e-4):.1f}x ordinary log text ({reference * 1000:.1f} ms)"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
