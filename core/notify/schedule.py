"""When digests are due: one slot per declared day at a local time of day, in a time zone.

A slot is named by its local date and time (``2024-06-03T0900``), so every replica names the
same slot the same way whatever its own clock's zone. A slot stays postable for
``LATE_WINDOW_SECONDS`` after its time: a replica that was down then posts it late, saying so;
after that it is missed. A local time that a daylight-saving change skips (02:30 on the night
the clocks go forward) falls at the same offset as before the change, one hour later on the
clock; a time that occurs twice (the night they go back) is the first of the two.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from core.notify.values import WEEKDAYS

# A digest posted later than this after its time says that it is late.
LATE_AFTER_SECONDS = 300.0
# After this long a slot is not posted any more.
LATE_WINDOW_SECONDS = 3600.0


@dataclass(frozen=True, slots=True)
class DigestSchedule:
    at: time
    zone: ZoneInfo
    days: frozenset[int]  # 0 = Monday

    def describe(self) -> str:
        """``09:00 Europe/Berlin, mon-fri`` (how the registry would say it)."""
        return f"{self.at.strftime('%H:%M')} {self.zone.key}, {describe_days(self.days)}"


@dataclass(frozen=True, slots=True)
class Digest:
    """A digest declared in the registry: where, when, and for which context."""

    name: str  # unique within its cluster; part of every key of its slots
    channel: str
    schedule: DigestSchedule
    context: str | None = None
    defined_at: str = ""  # "file:line" of the declaration
    report: str = "summary"  # or "gpu-hours" (``core.notify.values.DIGEST_REPORTS``)
    span_seconds: float = 7 * 86_400.0  # how far back a gpu-hours digest reaches

    def describe(self) -> str:
        """``09:00 Europe/Berlin, mon-fri``, after ``GPU-hours of 7.0 days, `` for a usage
        report."""
        if self.report == "gpu-hours":
            days = self.span_seconds / 86_400
            span = f"{days:g} days" if days >= 1 else f"{self.span_seconds / 3600:g} h"
            return f"GPU-hours of the last {span}, {self.schedule.describe()}"
        return self.schedule.describe()


@dataclass(frozen=True, slots=True)
class Slot:
    due_at: float  # Unix seconds
    key: str  # local date and time, e.g. "2024-06-03T0900" (no ":", readable in store keys)


def describe_days(days: frozenset[int]) -> str:
    if days == frozenset(range(7)):
        return "daily"
    ordered = sorted(days)
    if ordered == list(range(ordered[0], ordered[-1] + 1)) and len(ordered) > 2:
        return f"{WEEKDAYS[ordered[0]]}-{WEEKDAYS[ordered[-1]]}"
    return ", ".join(WEEKDAYS[d] for d in ordered)


def slot_on(schedule: DigestSchedule, day: date) -> Slot | None:
    """The slot of local ``day``, or None when the digest is not posted that weekday."""
    if day.weekday() not in schedule.days:
        return None
    local = datetime.combine(day, schedule.at, tzinfo=schedule.zone)
    return Slot(local.astimezone(UTC).timestamp(), f"{day.isoformat()}T{schedule.at:%H%M}")


def _local_day(schedule: DigestSchedule, moment: float) -> date:
    return datetime.fromtimestamp(moment, schedule.zone).date()


def due_slot(
    schedule: DigestSchedule, now: float, window_seconds: float = LATE_WINDOW_SECONDS
) -> Slot | None:
    """The latest slot whose time has come and is less than ``window_seconds`` ago."""
    today = _local_day(schedule, now)
    candidates = [slot_on(schedule, today - timedelta(days=back)) for back in (0, 1)]
    due = [s for s in candidates if s is not None and s.due_at <= now]
    if not due:
        return None
    latest = max(due, key=lambda s: s.due_at)
    return latest if now - latest.due_at < window_seconds else None


def next_slot(schedule: DigestSchedule, now: float) -> Slot:
    """The first slot after ``now`` (for listings)."""
    today = _local_day(schedule, now)
    for ahead in range(9):
        slot = slot_on(schedule, today + timedelta(days=ahead))
        if slot is not None and slot.due_at > now:
            return slot
    raise ValueError("a schedule without weekdays")  # the registry refuses one


def is_late(slot: Slot, posted_at: float) -> bool:
    return posted_at - slot.due_at > LATE_AFTER_SECONDS


def local_clock(schedule: DigestSchedule, moment: float) -> str:
    """``moment`` on the digest's clock: ``09:23 Europe/Berlin``."""
    return f"{datetime.fromtimestamp(moment, schedule.zone):%H:%M} {schedule.zone.key}"
