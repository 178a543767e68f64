"""The scheduler's allocation outcomes: what its counters say, and how fast they grew.

HAMi after v2.10 (PR #3088, for issue #3083) counts, since the scheduler started, successful
allocation reservations, allocation failures (by phase and a bounded ``failure_reason``), bind
rollbacks, stale reservations and reconciliation errors. A counter's value alone is a lifetime
total; a rate needs two readings of the same scheduler, which the kept history gives. A counter
lower in the later reading means the scheduler restarted, so the later value is then the whole
increase (as Prometheus' ``increase()`` reads a reset).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# What each counter counts (``kind``), in the order the report names them.
ALLOCATIONS = "allocations"
FAILURES = "allocation_failures"
TROUBLE_KINDS = ("bind_rollbacks", "stale_reservations", "reconciliation_errors")
KIND_WORDS = {
    ALLOCATIONS: ("allocation", "allocations"),
    FAILURES: ("failure", "failures"),
    "bind_rollbacks": ("bind rollback", "bind rollbacks"),
    "stale_reservations": ("stale reservation", "stale reservations"),
    "reconciliation_errors": ("reconciliation error", "reconciliation errors"),
}


@dataclass(frozen=True, slots=True)
class OutcomeCount:
    """One series of the outcome counters: events since the scheduler started."""

    kind: str  # a key of ``KIND_WORDS``
    phase: str
    device_type: str
    failure_reason: str
    count: float


@dataclass(frozen=True, slots=True)
class ReasonCount:
    """Failures of one phase and reason, summed over device types."""

    phase: str
    failure_reason: str
    count: float


@dataclass(frozen=True, slots=True)
class Outcomes:
    """The outcome counters of one reading (or the increase between two), totalled."""

    series: tuple[OutcomeCount, ...]

    def total(self, kind: str) -> float:
        return sum(s.count for s in self.series if s.kind == kind)

    @property
    def failure_percent(self) -> float | None:
        """Failures as a share of attempts (allocations plus failures); None without any."""
        attempts = self.total(ALLOCATIONS) + self.total(FAILURES)
        return self.total(FAILURES) / attempts * 100.0 if attempts else None

    def failures_by_reason(self) -> tuple[ReasonCount, ...]:
        """Failures per (phase, reason), the most first; none counted left out."""
        totals: dict[tuple[str, str], float] = {}
        for s in self.series:
            if s.kind == FAILURES and s.count:
                key = (s.phase, s.failure_reason)
                totals[key] = totals.get(key, 0.0) + s.count
        ordered = sorted(totals.items(), key=lambda item: (-item[1], item[0]))
        return tuple(ReasonCount(phase, reason, count) for (phase, reason), count in ordered)


def increase(before: Sequence[OutcomeCount], after: Sequence[OutcomeCount]) -> Outcomes:
    """What each series counted between two readings; a series that fell was reset (the
    scheduler restarted) and counts its later value, one new since counts in full."""
    earlier = {_key(s): s.count for s in before}
    grown = []
    for s in after:
        start = earlier.get(_key(s), 0.0)
        counted = s.count - start if s.count >= start else s.count
        grown.append(OutcomeCount(s.kind, s.phase, s.device_type, s.failure_reason, counted))
    return Outcomes(tuple(grown))


def outcomes_of(series: Iterable[OutcomeCount]) -> Outcomes | None:
    """The outcomes of one reading; None when the scheduler wrote no outcome counter."""
    read = tuple(series)
    return Outcomes(read) if read else None


def _key(s: OutcomeCount) -> tuple[str, str, str, str]:
    return (s.kind, s.phase, s.device_type, s.failure_reason)
