"""Benchmark: the two cheap paths that must stay cheap, as CPU-time ratios measured in one run.

Run from the repository root:

    .venv/bin/python tests/benchmarks/bench_parse_paths.py [--repeat 3]

On the simulator's 100 nodes x 8 GPUs exposition:

1. ``core.exposition.parse_exposition`` against ``prometheus_client``'s parser. Target: at most
   1/6 of its CPU time (the label-set cache and hot loop; the slow path alone is about 1-2x).
2. ``core.paste.clean_paste`` on text that needs no cleaning against parsing it. Target: at most
   1/3 of the parse time (clean text is checked, not rewritten).

CPU time of this process, best of ``--repeat``: other processes' load does not count. Prints one
PASS/FAIL line per target and exits 1 if any fails.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable

from prometheus_client.parser import text_string_to_metric_families

from core.exposition import parse_exposition
from core.paste import clean_paste
from core.simulate import simulate_exposition


def cpu_seconds(run: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    text = simulate_exposition(100, 8, seed=3)
    reference = cpu_seconds(lambda: list(text_string_to_metric_families(text)), args.repeat)
    parsing = cpu_seconds(lambda: parse_exposition(text), args.repeat)
    cleaning = cpu_seconds(lambda: clean_paste(text), args.repeat)
    failed = False
    for label, ours, against, target in (
        ("parse / prometheus_client parse", parsing, reference, 1 / 6),
        ("clean_paste / parse (clean text)", cleaning, parsing, 1 / 3),
    ):
        ratio = ours / against
        verdict = "PASS" if ratio <= target else "FAIL"
        failed |= verdict == "FAIL"
        print(
            f"{verdict} {label}: {ours:.4f} s / {against:.4f} s = {ratio:.3f} "
            f"(target <= {target:.3f})"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
