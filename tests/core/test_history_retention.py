"""Retention keeps a bounded history: a spaced recent tier and one snapshot per UTC day."""

from __future__ import annotations

import itertools
import random

import pytest

from core.history.retention import SECONDS_PER_DAY, horizon_seconds, kept_times, should_record
from core.settings import History, SettingsError, settings_from_mapping

DEFAULT = History()
START = 1_767_225_600.0  # 2026-01-01 00:00 UTC


class Clock:
    """An injectable clock moved by the test."""

    def __init__(self, now: float) -> None:
        self.now = now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def _run(
    clock: Clock, policy: History, steps: int, every: float, rng: random.Random
) -> list[float]:
    """Record at jittered intervals as a replica would: write when allowed, then prune."""
    times: list[float] = []
    for _ in range(steps):
        clock.advance(every * rng.uniform(0.5, 1.5))
        if should_record(times, clock.now, policy):
            times = kept_times([*times, clock.now], clock.now, policy)
        assert len(times) <= policy.recent_snapshots + policy.daily_days
    return times


@pytest.mark.parametrize("every_minutes", [1.0, 7.0, 45.0])
def test_three_weeks_of_collections_stay_within_bounds(every_minutes: float) -> None:
    clock = Clock(START)
    times = _run(
        clock, DEFAULT, int(21 * 24 * 60 / every_minutes), every_minutes * 60, random.Random(4)
    )
    newest_first = sorted(times, reverse=True)
    assert times == newest_first
    # The recent tier: the newest 48 (or more when a day's first sits among them), spaced.
    recent = newest_first[: DEFAULT.recent_snapshots]
    assert all(a - b >= 600 for a, b in itertools.pairwise(recent))
    # The daily tier: exactly one of each of the last 14 days (days with a collection).
    today = int(clock.now // SECONDS_PER_DAY)
    days = {int(t // SECONDS_PER_DAY) for t in times}
    assert set(range(today - 13, today + 1)) <= days
    assert min(days) >= today - 13
    assert len(times) <= DEFAULT.recent_snapshots + DEFAULT.daily_days
    assert clock.now - min(times) < horizon_seconds(DEFAULT)


def test_the_daily_pick_is_the_first_of_its_day_and_never_changes() -> None:
    day = 20_000 * SECONDS_PER_DAY
    times = [day + 3600 * h for h in range(0, 24, 2)]  # twelve in one day, two hours apart
    policy = History(recent_snapshots=3, min_spacing_minutes=10, daily_days=2)
    kept = kept_times(times, day + 23 * 3600, policy)
    assert kept == [day + 22 * 3600, day + 20 * 3600, day + 18 * 3600, day]
    later = kept_times([*kept, day + SECONDS_PER_DAY + 60], day + SECONDS_PER_DAY + 60, policy)
    assert day in later and len(later) == 4


def test_spacing_drops_close_snapshots_and_old_days_go() -> None:
    policy = History(recent_snapshots=3, min_spacing_minutes=10, daily_days=2)
    now = 30_000 * SECONDS_PER_DAY + 12 * 3600
    close = [now - 60 * m for m in (0, 3, 6, 9, 12, 30)]
    old_day = now - 3 * SECONDS_PER_DAY
    kept = kept_times([*close, old_day], now, policy)
    assert kept == [now, now - 720, now - 1800]  # today's first (now - 30 min) is also recent
    assert old_day not in kept


def test_should_record_waits_for_the_spacing() -> None:
    now = 40_000 * SECONDS_PER_DAY + 3600
    assert should_record([], now, DEFAULT)
    assert not should_record([now - 599], now, DEFAULT)
    assert should_record([now - 600], now, DEFAULT)
    # A new UTC day always records: it becomes that day's kept snapshot.
    midnight = 40_000 * SECONDS_PER_DAY
    assert should_record([midnight - 60], midnight + 1, DEFAULT)


def test_history_settings_are_read_and_checked() -> None:
    settings = settings_from_mapping({"history": {"recent_snapshots": 10, "daily_days": 3}})
    assert settings.history == History(recent_snapshots=10, min_spacing_minutes=10.0, daily_days=3)
    with pytest.raises(SettingsError, match=r"history\.daily_days must be at least 1"):
        settings_from_mapping({"history": {"daily_days": 0}})
    with pytest.raises(SettingsError, match="unknown field 'days'"):
        settings_from_mapping({"history": {"days": 3}})
