"""Running several cluster collections at once, within one wait for all of them.

The fleet view and App Home ask every cluster a person may query. Each collection goes through
the scrape cache (one scrape per cluster however many ask) and has its own timeout; the batch
only waits ``wait_seconds`` in all, so one slow cluster never holds up the others. A call still
running then keeps running on the shared pool: its result lands in the scrape cache, ready for
the next request. Calls the pool had not started yet are cancelled (the pool is bounded, so a
burst of large fleets cannot start unbounded threads).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")

# Collections in flight at once in one process, across every batch.
POOL_THREADS = 32

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _shared_pool() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=POOL_THREADS, thread_name_prefix="hami-batch")
        return _pool


@dataclass(frozen=True, slots=True)
class Finished(Generic[T]):
    """A call that ended in time: its value, or the exception it raised."""

    value: T | None = None
    error: BaseException | None = None


def run_within(calls: Sequence[Callable[[], T]], wait_seconds: float) -> list[Finished[T] | None]:
    """Start every call on the shared pool and wait at most ``wait_seconds`` for all of them.

    One entry per call, in order: ``Finished`` for those that ended, None for those still
    running (or never started) when the wait was over.
    """
    pool = _shared_pool()
    futures: list[Future[T]] = [pool.submit(call) for call in calls]
    wait(futures, timeout=max(0.0, wait_seconds))
    results: list[Finished[T] | None] = []
    for future in futures:
        if not future.done():
            future.cancel()  # only stops a call not started yet; a running one finishes
            results.append(None)
            continue
        error = future.exception()
        results.append(Finished(error=error) if error is not None else Finished(future.result()))
    return results
