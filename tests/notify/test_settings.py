"""The notifier's settings from the environment: defaults, and bad values named."""

from __future__ import annotations

import pytest

from bot.config import ConfigError, NotifySettings


def test_defaults_and_values() -> None:
    assert NotifySettings.from_env({}) == NotifySettings(180.0, 60.0, 15.0)
    given = NotifySettings.from_env(
        {
            "HAMI_SUMMARY_ALERT_INTERVAL_SECONDS": "30",
            "HAMI_SUMMARY_NOTIFY_LEASE_SECONDS": "5",
            "HAMI_SUMMARY_NOTIFY_TICK_SECONDS": "0.5",
        }
    )
    assert given == NotifySettings(30.0, 5.0, 0.5)


@pytest.mark.parametrize(
    ("name", "raw"),
    [
        ("HAMI_SUMMARY_ALERT_INTERVAL_SECONDS", "1"),
        ("HAMI_SUMMARY_ALERT_INTERVAL_SECONDS", "5m"),
        ("HAMI_SUMMARY_NOTIFY_LEASE_SECONDS", "0"),
        ("HAMI_SUMMARY_NOTIFY_TICK_SECONDS", "nan"),
    ],
)
def test_bad_values_name_the_variable(name: str, raw: str) -> None:
    with pytest.raises(ConfigError) as caught:
        NotifySettings.from_env({name: raw})
    assert caught.value.message.startswith(f"{name}={raw!r} is not a number of seconds from")
    assert "unset it for the default" in caught.value.message
