"""How often the notifier looks, and how long its leases outlive a replica that stopped."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass

from bot.config import ConfigError

DEFAULT_ALERT_INTERVAL_SECONDS = 180.0
DEFAULT_LEASE_SECONDS = 60.0
DEFAULT_TICK_SECONDS = 15.0


@dataclass(frozen=True, slots=True)
class NotifySettings:
    # Alert rules are evaluated this often (by one replica).
    alert_interval_seconds: float = DEFAULT_ALERT_INTERVAL_SECONDS
    # A lease not renewed (its replica stopped) frees its digest or cluster after this long.
    lease_seconds: float = DEFAULT_LEASE_SECONDS
    # How often each replica looks for due digests and alert evaluations.
    tick_seconds: float = DEFAULT_TICK_SECONDS

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> NotifySettings:
        env = os.environ if env is None else env
        return cls(
            alert_interval_seconds=_seconds(
                env,
                "HAMI_SUMMARY_ALERT_INTERVAL_SECONDS",
                DEFAULT_ALERT_INTERVAL_SECONDS,
                low=5.0,
                high=86_400.0,
            ),
            lease_seconds=_seconds(
                env,
                "HAMI_SUMMARY_NOTIFY_LEASE_SECONDS",
                DEFAULT_LEASE_SECONDS,
                low=1.0,
                high=3600.0,
            ),
            tick_seconds=_seconds(
                env,
                "HAMI_SUMMARY_NOTIFY_TICK_SECONDS",
                DEFAULT_TICK_SECONDS,
                low=0.1,
                high=300.0,
            ),
        )


def _seconds(
    env: Mapping[str, str], name: str, default: float, *, low: float, high: float
) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not low <= value <= high:
        raise ConfigError(
            f"{name}={raw!r} is not a number of seconds from {low:g} to {high:g}; "
            f"unset it for the default ({default:g})."
        )
    return value
