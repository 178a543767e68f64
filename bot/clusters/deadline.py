"""One time budget shared by every request of a collection, so "10 s" means 10 s in total."""

from __future__ import annotations

import time


class DeadlineExceeded(Exception):
    """The budget ran out before or during ``doing``."""

    def __init__(self, doing: str, budget_seconds: float) -> None:
        super().__init__(f"time budget of {budget_seconds:g} s used up while {doing}")
        self.doing = doing
        self.budget_seconds = budget_seconds


class Deadline:
    # Connecting should never take more than this; the rest of the budget is for reading.
    MAX_CONNECT_SECONDS = 5.0

    def __init__(self, budget_seconds: float) -> None:
        self.budget_seconds = budget_seconds
        self._end = time.monotonic() + budget_seconds

    def remaining(self) -> float:
        return self._end - time.monotonic()

    def expired(self) -> bool:
        return self.remaining() <= 0

    def check(self, doing: str) -> None:
        if self.expired():
            raise DeadlineExceeded(doing, self.budget_seconds)

    def request_timeout(self, doing: str) -> tuple[float, float]:
        """(connect, read) timeouts for one client request (its ``_request_timeout``)."""
        self.check(doing)
        remaining = max(self.remaining(), 0.001)
        return (min(remaining, self.MAX_CONNECT_SECONDS), remaining)
