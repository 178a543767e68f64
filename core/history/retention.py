"""Which snapshots of a cluster to keep: a recent tier and a daily tier, bounded in number.

* Recent: walking back from the newest, a snapshot is kept when it is at least
  ``min_spacing_minutes`` older than the last one kept, up to ``recent_snapshots`` of them
  (the defaults cover the last eight hours or more).
* Daily: the first snapshot of each of the last ``daily_days`` UTC days (today included). The
  first of a day is chosen, not the last, so a day's pick never changes as later snapshots
  arrive.

So at most ``recent_snapshots + daily_days`` snapshots are kept whatever happens, none older
than ``horizon_seconds``. Pure functions
of a list of times and ``now`` (Unix seconds): callers inject the clock.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.settings import History

SECONDS_PER_DAY = 86_400


def kept_times(times: Sequence[float], now: float, policy: History) -> list[float]:
    """The times among ``times`` to keep, newest first (duplicates count once). Anything older
    than ``horizon_seconds`` goes whatever its tier: its stored copy has expired by then."""
    oldest = now - horizon_seconds(policy)
    ordered = sorted({time for time in times if time >= oldest}, reverse=True)
    spacing = policy.min_spacing_minutes * 60.0
    keep: set[float] = set()
    last_kept: float | None = None
    recent = 0
    for time in ordered:
        if recent >= policy.recent_snapshots:
            break
        if last_kept is None or last_kept - time >= spacing:
            keep.add(time)
            last_kept = time
            recent += 1
    first_day = _day(now) - policy.daily_days + 1
    first_of_day: dict[int, float] = {}
    for time in ordered:  # newest first: the last write per day is the day's earliest time
        day = _day(time)
        if first_day <= day <= _day(now):
            first_of_day[day] = time
    keep.update(first_of_day.values())
    return sorted(keep, reverse=True)


def should_record(times: Sequence[float], now: float, policy: History) -> bool:
    """Whether a snapshot taken at ``now`` adds anything: not when the newest kept one is
    less than ``min_spacing_minutes`` old (it would be dropped again at once)."""
    if not times:
        return True
    newest = max(times)
    return now - newest >= policy.min_spacing_minutes * 60.0 or _day(now) != _day(newest)


def horizon_seconds(policy: History) -> float:
    """How long any kept snapshot can stay: its storage TTL (one day of slack)."""
    recent = policy.recent_snapshots * policy.min_spacing_minutes * 60.0
    return max(recent, (policy.daily_days + 1) * SECONDS_PER_DAY)


def _day(time: float) -> int:
    return int(time // SECONDS_PER_DAY)
