"""The cyclic garbage collector paused for a one-shot command's work.

Everything ``summarize`` builds (a row per GPU, pod and allocation) lives until the command
prints and exits, so the collector's passes only walk the same objects again and again: at
10,000 nodes that is about a third of the process's CPU (``tests/benchmarks/bench_scale.py``).
Reference counting still frees everything else as usual. The long-running bot does not pause
it: its threads share one collector.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic collector for the block; restore it as it was (tests run commands
    in one process)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
