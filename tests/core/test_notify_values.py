"""Reading digest and alert values: what is taken, and what is refused with which words."""

from __future__ import annotations

from datetime import time

import pytest

from core.notify import values
from core.notify.values import NotifyValueError


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("09:00", time(9, 0)), ("9:30", time(9, 30)), (" 23:59 ", time(23, 59)), ("0:05", time(0, 5))],
)
def test_times_of_day(raw: str, expected: time) -> None:
    assert values.clock_time(raw) == expected


@pytest.mark.parametrize("raw", ["24:00", "9", "09:60", "9am", 540, None, "09:00:00"])
def test_bad_times_of_day_say_how_to_write_one(raw: object) -> None:
    with pytest.raises(NotifyValueError, match=r'HH:MM in 24-hour time, in quotes, e\.g\. "09:00"'):
        values.clock_time(raw)


def test_time_zones_by_iana_name() -> None:
    assert values.time_zone("Europe/Berlin").key == "Europe/Berlin"
    assert values.time_zone(" UTC ").key == "UTC"


@pytest.mark.parametrize(
    ("raw", "hint"),
    [("Europe/Berln", "Europe/Berlin"), ("america/new_york", "America/New_York")],
)
def test_a_misspelt_time_zone_gets_the_closest_name(raw: str, hint: str) -> None:
    with pytest.raises(NotifyValueError) as caught:
        values.time_zone(raw)
    assert f'did you mean "{hint}"?' in caught.value.message


@pytest.mark.parametrize("raw", ["CEST", "../etc/passwd", "", 3, "Mars/Olympus_Mons"])
def test_unknown_time_zones_are_refused(raw: object) -> None:
    with pytest.raises(NotifyValueError, match="IANA name such as Europe/Berlin"):
        values.time_zone(raw)


@pytest.mark.parametrize(
    ("raw", "days"),
    [
        ("daily", set(range(7))),
        ("weekdays", {0, 1, 2, 3, 4}),
        ("mon-fri", {0, 1, 2, 3, 4}),
        ("sat, sun", {5, 6}),
        (["Mon", "wednesday", "fri"], {0, 2, 4}),
        (["mon-wed", "sun"], {0, 1, 2, 6}),
    ],
)
def test_weekdays(raw: object, days: set[int]) -> None:
    assert values.weekdays(raw) == days


def test_weekday_errors_name_the_word() -> None:
    with pytest.raises(NotifyValueError, match=r"'fry' in .* is not a weekday"):
        values.weekdays(["mon", "fry"])
    with pytest.raises(NotifyValueError, match="runs backwards"):
        values.weekdays("fri-mon")
    with pytest.raises(NotifyValueError, match="not a list of weekdays"):
        values.weekdays([])


@pytest.mark.parametrize(
    ("raw", "seconds"),
    [("90s", 90), ("10m", 600), ("10min", 600), ("1h", 3600), ("2d", 172800), (45, 45)],
)
def test_durations(raw: object, seconds: float) -> None:
    assert values.duration_seconds(raw) == seconds


@pytest.mark.parametrize("raw", ["0s", "15d", "1 hour", -5, True, "h"])
def test_bad_durations(raw: object) -> None:
    with pytest.raises(NotifyValueError, match="not a duration from 1 s to 14 days"):
        values.duration_seconds(raw)


def test_percentages_and_gpu_counts() -> None:
    assert values.percent(90) == 90.0
    assert values.percent("85.5%") == 85.5
    for bad in (0, 101, "90", "x%", True, float("nan")):
        with pytest.raises(NotifyValueError, match="not a percentage above 0 and at most 100"):
            values.percent(bad)
    assert values.gpu_count(2) == 2
    for bad in (0, 1.5, "2", True):
        with pytest.raises(NotifyValueError, match="not a whole number of GPUs"):
            values.gpu_count(bad)


def test_time_zones_come_from_the_tzdata_package_where_the_os_has_none() -> None:
    import tomllib
    import zoneinfo
    from pathlib import Path

    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert any(d.startswith("tzdata") for d in pyproject["project"]["dependencies"])
    zoneinfo.reset_tzpath(to=[])  # as on an image without /usr/share/zoneinfo
    try:
        assert values.time_zone("Pacific/Chatham").key == "Pacific/Chatham"
        assert zoneinfo.TZPATH == ()
    finally:
        zoneinfo.reset_tzpath()
