"""The scheduler's allocation outcomes in words, for every human-readable view.

One phrase for a lifetime reading ("since the scheduler started: 1,204 allocations, 23
failures (1.9% of attempts: no_fit 20 at filter, ...)") and one for the
increase between two readings, with a rate per hour. Reasons are label values from the input:
shown escaped and cut to a length that still names any of HAMi's codes.
"""

from __future__ import annotations

from core import number_style
from core.outcomes import ALLOCATIONS, FAILURES, KIND_WORDS, TROUBLE_KINDS, Outcomes
from core.visible_text import visible

REASONS_SHOWN = 3
# HAMi's failure_reason values (pkg/metrics/scheduler.go) have at most 16 characters
# (annotation_patch), its scheduling event codes up to 33 (AllocatedCardsInsufficientRequest,
# pkg/device/common/common.go): 48 keeps either whole.
_REASON_CHARS = 48
_SECONDS_PER_HOUR = 3600.0


def _reason(text: str) -> str:
    if not text:
        return "no reason given"
    shown = visible(text)
    return shown if len(shown) <= _REASON_CHARS else shown[: _REASON_CHARS - 1] + "…"


def _counted(value: float, kind: str) -> str:
    noun, plural = KIND_WORDS[kind]
    return number_style.counted(value, noun, plural)


def failure_reasons(outcomes: Outcomes) -> str:
    """``no_fit 20 at filter, lock 3 at bind and 2 more reasons``."""
    reasons = outcomes.failures_by_reason()
    shown = [
        f"{_reason(r.failure_reason)} {number_style.count(r.count)}"
        + (f" at {visible(r.phase[:_REASON_CHARS])}" if r.phase else "")
        for r in reasons[:REASONS_SHOWN]
    ]
    rest = len(reasons) - len(shown)
    more = f" and {number_style.counted(rest, 'more reason', 'more reasons')}" if rest else ""
    return ", ".join(shown) + more


def _failures(outcomes: Outcomes) -> str:
    failures = outcomes.total(FAILURES)
    text = _counted(failures, FAILURES)
    share = outcomes.failure_percent
    if not failures or share is None:
        return text
    return f"{text} ({number_style.percent(share)} of attempts: {failure_reasons(outcomes)})"


def _trouble(outcomes: Outcomes) -> list[str]:
    return [_counted(total, kind) for kind in TROUBLE_KINDS if (total := outcomes.total(kind))]


SINCE_START = "Since the scheduler started"


def lifetime_words(outcomes: Outcomes) -> str:
    """The counters' events: as read, since the scheduler started (``SINCE_START``), or their
    increase between two readings."""
    parts = [_counted(outcomes.total(ALLOCATIONS), ALLOCATIONS), _failures(outcomes)]
    return ", ".join(parts + _trouble(outcomes))


def trouble_words(outcomes: Outcomes) -> str:
    """Rollbacks, stale reservations and reconciliation errors counted; "" when none is."""
    return ", ".join(_trouble(outcomes))


def increase_words(outcomes: Outcomes, seconds: float) -> str:
    """What the counters grew by over ``seconds``, with failures per hour."""
    failures = outcomes.total(FAILURES)
    rate = ""
    if seconds > 0 and failures:
        per_hour = failures / seconds * _SECONDS_PER_HOUR
        rate = f"; {number_style.count(round(per_hour, 1))} failures an hour"
    return lifetime_words(outcomes) + rate
