"""Digest slots: due at their local time, late within the hour, never after it."""

from __future__ import annotations

from datetime import UTC, datetime, time
from zoneinfo import ZoneInfo

from core.notify.schedule import (
    LATE_WINDOW_SECONDS,
    DigestSchedule,
    describe_days,
    due_slot,
    is_late,
    next_slot,
)

BERLIN = ZoneInfo("Europe/Berlin")
WEEKDAYS = frozenset(range(5))


def at(text: str, zone: ZoneInfo = BERLIN) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=zone).timestamp()


def test_a_slot_is_due_from_its_local_time_for_an_hour() -> None:
    schedule = DigestSchedule(time(9, 0), BERLIN, WEEKDAYS)
    # Monday 2026-03-02, 09:00 in Berlin is 08:00 UTC.
    assert due_slot(schedule, at("2026-03-02T08:59:59")) is None
    slot = due_slot(schedule, at("2026-03-02T09:00:00"))
    assert slot is not None
    assert slot.key == "2026-03-02T0900"
    assert datetime.fromtimestamp(slot.due_at, UTC).hour == 8
    assert due_slot(schedule, at("2026-03-02T09:59:59")) == slot
    assert due_slot(schedule, at("2026-03-02T10:00:00")) is None


def test_late_after_five_minutes() -> None:
    schedule = DigestSchedule(time(9, 0), BERLIN, WEEKDAYS)
    slot = due_slot(schedule, at("2026-03-02T09:20:00"))
    assert slot is not None
    assert not is_late(slot, at("2026-03-02T09:04:59"))
    assert is_late(slot, at("2026-03-02T09:20:00"))


def test_weekends_have_no_slot_of_a_weekday_digest() -> None:
    schedule = DigestSchedule(time(9, 0), BERLIN, WEEKDAYS)
    assert due_slot(schedule, at("2026-03-07T09:10:00")) is None  # a Saturday
    upcoming = next_slot(schedule, at("2026-03-06T10:00:00"))  # Friday after the digest
    assert upcoming.key == "2026-03-09T0900"  # Monday


def test_a_slot_just_before_midnight_is_still_due_after_it() -> None:
    schedule = DigestSchedule(time(23, 50), BERLIN, frozenset(range(7)))
    slot = due_slot(schedule, at("2026-03-03T00:20:00"))
    assert slot is not None and slot.key == "2026-03-02T2350"


def test_daylight_saving_gap_and_overlap() -> None:
    # 2026-03-29 the clocks in Berlin go from 02:00 to 03:00: 02:30 does not exist.
    gap = DigestSchedule(time(2, 30), BERLIN, frozenset(range(7)))
    slot = due_slot(gap, at("2026-03-29T03:45:00"))
    assert slot is not None
    assert datetime.fromtimestamp(slot.due_at, BERLIN).strftime("%H:%M") == "03:30"
    # 2026-10-25 02:30 happens twice: the first one counts, once.
    overlap = DigestSchedule(time(2, 30), BERLIN, frozenset(range(7)))
    first = datetime(2026, 10, 25, 0, 30, tzinfo=UTC).timestamp()  # 02:30 CEST
    slot = due_slot(overlap, first + 60)
    assert slot is not None and slot.due_at == first
    assert due_slot(overlap, first + LATE_WINDOW_SECONDS + 60) is None


def test_each_day_has_its_own_slot_name_in_every_zone() -> None:
    tokyo = DigestSchedule(time(8, 0), ZoneInfo("Asia/Tokyo"), frozenset(range(7)))
    monday = due_slot(tokyo, at("2026-03-02T08:00:00", ZoneInfo("Asia/Tokyo")))
    tuesday = due_slot(tokyo, at("2026-03-03T08:00:00", ZoneInfo("Asia/Tokyo")))
    assert monday is not None and tuesday is not None
    assert monday.key != tuesday.key
    assert tuesday.due_at - monday.due_at == 86_400


def test_days_are_described_as_the_registry_says_them() -> None:
    assert describe_days(frozenset(range(7))) == "daily"
    assert describe_days(WEEKDAYS) == "mon-fri"
    assert describe_days(frozenset({0, 2, 4})) == "mon, wed, fri"
    assert DigestSchedule(time(9, 0), BERLIN, WEEKDAYS).describe() == "09:00 Europe/Berlin, mon-fri"
