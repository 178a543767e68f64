"""Reading the values of digest and alert declarations: times of day, time zones, weekdays,
durations and thresholds.

Each reader takes what YAML gave and returns the value, or raises ``NotifyValueError`` whose
message says what was wrong and what to write instead; the registry adds the file, line and
field.
"""

from __future__ import annotations

import difflib
import math
import re
import zoneinfo
from datetime import time
from functools import cache

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_DAY_NAMES = {
    **{day: index for index, day in enumerate(WEEKDAYS)},
    **{
        name: index
        for index, name in enumerate(
            ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
        )
    },
}
_CLOCK = re.compile(r"([01]?[0-9]|2[0-3]):([0-5][0-9])")
_DURATION = re.compile(r"([0-9]{1,6})(s|m|min|h|d)")
_DURATION_UNITS = {"s": 1, "m": 60, "min": 60, "h": 3600, "d": 86_400}
# Longer than any history the bot keeps: a rule that waits longer could never fire.
MAX_DURATION_SECONDS = 14 * 86_400


# A GPU-hours digest reports over at most as long as the usage records are kept by default.
MAX_REPORT_SPAN_SECONDS = 35 * 86_400
DIGEST_REPORTS = ("summary", "gpu-hours")


class NotifyValueError(ValueError):
    """A declared value the bot cannot use; ``message`` is written for whoever edits the file."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def clock_time(raw: object) -> time:
    """``"09:00"`` (24-hour, local to the digest's time zone)."""
    match = _CLOCK.fullmatch(raw.strip()) if isinstance(raw, str) else None
    if match is None:
        raise NotifyValueError(
            f"{raw!r} is not a time of day; write it as HH:MM in 24-hour time, in quotes, "
            'e.g. "09:00" or "17:30"'
        )
    return time(int(match.group(1)), int(match.group(2)))


@cache
def _zone_names() -> tuple[str, ...]:
    return tuple(sorted(zoneinfo.available_timezones()))


def time_zone(raw: object) -> zoneinfo.ZoneInfo:
    """An IANA time zone name such as ``Europe/Berlin`` or ``UTC``."""
    if not isinstance(raw, str) or not raw.strip():
        raise NotifyValueError(
            f"{raw!r} is not a time zone; give an IANA name such as Europe/Berlin, "
            "America/New_York or UTC"
        )
    name = raw.strip()
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        pass
    close = difflib.get_close_matches(name, _zone_names(), n=1)
    if not close:
        close = [z for z in _zone_names() if z.lower() == name.lower()]
    hint = f' (did you mean "{close[0]}"?)' if close else ""
    raise NotifyValueError(
        f'"{name}" is not a time zone I know{hint}; give an IANA name such as Europe/Berlin, '
        "America/New_York or UTC"
    )


def _day(word: str, raw: object) -> int:
    index = _DAY_NAMES.get(word.strip().lower())
    if index is None:
        raise NotifyValueError(
            f"{word.strip()!r} in {raw!r} is not a weekday; use mon, tue, wed, thu, fri, sat, "
            'sun, a range such as "mon-fri", or "daily"'
        )
    return index


def weekdays(raw: object) -> frozenset[int]:
    """Days the digest is posted on (0 = Monday): a list of names, ``"mon-fri"`` or
    ``"daily"``."""
    if isinstance(raw, str):
        text = raw.strip().lower()
        if text in ("daily", "every day", "*"):
            return frozenset(range(7))
        if text == "weekdays":
            return frozenset(range(5))
        words = text.replace(",", " ").split()
    elif isinstance(raw, list) and raw and all(isinstance(w, str) for w in raw):
        words = [w.lower() for w in raw]
    else:
        raise NotifyValueError(
            f"{raw!r} is not a list of weekdays; write e.g. [mon, tue, wed, thu, fri], "
            '"mon-fri" or "daily"'
        )
    days: set[int] = set()
    for word in words:
        first, sep, last = word.partition("-")
        if sep:
            start, end = _day(first, raw), _day(last, raw)
            if end < start:
                raise NotifyValueError(
                    f"{word!r} in {raw!r} runs backwards; write the earlier day first, "
                    'e.g. "mon-fri"'
                )
            days.update(range(start, end + 1))
        else:
            days.add(_day(word, raw))
    return frozenset(days)


def duration_seconds(raw: object) -> float:
    """``"90s"``, ``"10m"``, ``"1h"``, ``"2d"``, or a number of seconds; more than 0."""
    seconds: float | None = None
    if isinstance(raw, int | float) and not isinstance(raw, bool) and math.isfinite(raw):
        seconds = float(raw)
    elif isinstance(raw, str):
        match = _DURATION.fullmatch(raw.strip().lower())
        if match is not None:
            seconds = float(int(match.group(1)) * _DURATION_UNITS[match.group(2)])
    if seconds is None or not 0 < seconds <= MAX_DURATION_SECONDS:
        raise NotifyValueError(
            f"{raw!r} is not a duration from 1 s to 14 days; write e.g. 90s, 10m, 1h or 2d"
        )
    return seconds


def digest_report(raw: object) -> str:
    """What a digest posts: ``summary`` (the default) or ``gpu-hours``."""
    if isinstance(raw, str) and raw.strip().lower() in DIGEST_REPORTS:
        return raw.strip().lower()
    raise NotifyValueError(f"{raw!r} is not a digest report; write summary or gpu-hours")


def report_span(raw: object) -> float:
    """How far back a GPU-hours digest reaches: ``"24h"``, ``"7d"``, ``"30d"`` (1 h to 35
    days)."""
    match = _DURATION.fullmatch(raw.strip().lower()) if isinstance(raw, str) else None
    seconds = int(match.group(1)) * _DURATION_UNITS[match.group(2)] if match else 0
    if not 3600 <= seconds <= MAX_REPORT_SPAN_SECONDS:
        raise NotifyValueError(
            f"{raw!r} is not a span from 1 h to 35 days; write e.g. 24h, 7d or 30d"
        )
    return float(seconds)


def percent(raw: object) -> float:
    """A threshold in percent, above 0 and at most 100 (``90`` or ``"90%"``)."""
    value: float | None = None
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        value = float(raw)
    elif isinstance(raw, str) and raw.strip().endswith("%"):
        try:
            value = float(raw.strip()[:-1])
        except ValueError:
            value = None
    if value is None or not math.isfinite(value) or not 0 < value <= 100:
        raise NotifyValueError(
            f'{raw!r} is not a percentage above 0 and at most 100; write e.g. 90 or "90%"'
        )
    return value


def gpu_count(raw: object) -> int:
    """A whole number of GPUs, at least 1."""
    if not isinstance(raw, int) or isinstance(raw, bool) or not 1 <= raw <= 1_000_000:
        raise NotifyValueError(f"{raw!r} is not a whole number of GPUs of at least 1; e.g. 2")
    return raw
