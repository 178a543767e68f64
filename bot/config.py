"""The bot's settings, read once from the environment (12-factor) into one typed object.

Every value has a visible default here. Bad values fail at start-up with a message naming the
variable, what was wrong and what to set instead (``ConfigError``). Secrets are wrapped in
``Secret`` so that printing or logging the settings never shows them.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from bot.settings_file import load_settings
from core.settings import DEFAULT_SETTINGS, Settings, SettingsError

DEFAULT_SLACK_API_URL = "https://slack.com/api/"
DEFAULT_PORT = 3000
# A live scrape answers someone waiting in Slack: past a few minutes the answer is useless, and
# an unbounded scrape would hold its cluster's scrape lock (renewed while it runs) for as long.
MAX_SCRAPE_TIMEOUT_SECONDS = 300.0


class ConfigError(Exception):
    """A setting is missing or unusable; ``message`` names the variable and the fix."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Secret:
    """A credential that never shows itself in ``repr``/``str`` (so not in logs or tracebacks)."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The real value, for the one place that must send it (the Slack client)."""
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


@dataclass(frozen=True, slots=True)
class BotConfig:
    """Everything the Slack bot and the chat mode need to start."""

    slack_bot_token: Secret | None = None
    slack_signing_secret: Secret | None = None
    slack_app_token: Secret | None = None
    # Web API base URL: Slack's by default; GovSlack (https://slack-gov.com/api/) and tests
    # point it elsewhere. Always ends with "/" because slack_sdk appends method names to it.
    slack_api_url: str = DEFAULT_SLACK_API_URL
    port: int = DEFAULT_PORT
    # Kept as a Secret because a Redis URL may carry a password (redis://:pw@host/0). The store
    # itself is built by ``bot.store.factory.store_from_env`` (REDIS_KEY_PREFIX, REDIS_TIMEOUT_MS).
    redis_url: Secret | None = None
    clusters_file: Path | None = None
    # Folder scanned for kubeconfigs by the admin command; None: the CLI's default (~/.kube).
    kubeconfig_dir: Path | None = None
    # Slack user ids allowed to use ``/hami-summary admin`` (HAMI_SUMMARY_ADMINS). Empty: nobody.
    admins: frozenset[str] = frozenset()
    # Thresholds and limits of the summary (HAMI_SUMMARY_SETTINGS, HAMI_SUMMARY_MAX_INPUT_MIB).
    summary_settings: Settings = DEFAULT_SETTINGS
    # Follow-ups in a thread use the metrics given there for this long (issue 3: 24 h).
    thread_ttl_seconds: float = 24 * 3600.0
    # Largest compressed metrics text kept for thread follow-ups.
    thread_max_bytes: int = 8 * 1024 * 1024
    # Slack retries an event up to three times over about five minutes; remember ids longer.
    dedupe_ttl_seconds: float = 3600.0
    picker_ttl_seconds: float = 3600.0
    # Largest file or snippet the bot downloads from Slack.
    max_file_bytes: int = 32 * 1024 * 1024
    # Live scrapes per user per minute (issue 5 suggests 10).
    live_requests_per_minute: int = 10
    scrape_timeout_seconds: float = 10.0
    # The fleet view and App Home wait this long for all clusters together; a cluster still
    # collecting then is named as such (its result lands in the cache for the next ask).
    fleet_wait_seconds: float = 8.0
    # Threads that run Bolt listeners (acks and lazy work) in one process.
    worker_threads: int = 16

    def redacted(self) -> dict[str, str]:
        """The settings as text for a start-up log line, with every secret hidden."""
        shown: dict[str, str] = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            shown[name] = "***" if isinstance(value, Secret) else str(value)
        return shown


def _text(environ: Mapping[str, str], name: str) -> str | None:
    value = environ.get(name, "").strip()
    return value or None


def _secret(environ: Mapping[str, str], name: str, prefix: str, what: str) -> Secret | None:
    value = _text(environ, name)
    if value is None:
        return None
    if prefix and not value.startswith(prefix):
        # Only the prefix is named: the value itself is a credential and must not be echoed.
        raise ConfigError(
            f"{name} does not look like {what} (it should start with '{prefix}'). Copy it from "
            "your Slack app's settings page (https://api.slack.com/apps)."
        )
    return Secret(value)


def _number(
    environ: Mapping[str, str],
    name: str,
    default: float,
    *,
    minimum: float,
    maximum: float = math.inf,
) -> float:
    raw = _text(environ, name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not a number; set it to e.g. {default:g}.") from None
    if not math.isfinite(value):
        raise ConfigError(f"{name}={raw!r} is not a finite number; set it to e.g. {default:g}.")
    if value < minimum:
        raise ConfigError(f"{name}={raw!r} is too small; it must be at least {minimum:g}.")
    if value > maximum:
        raise ConfigError(f"{name}={raw!r} is too large; it must be at most {maximum:g}.")
    return value


def _integer(
    environ: Mapping[str, str], name: str, default: int, *, minimum: int, maximum: int | None = None
) -> int:
    raw = _text(environ, name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(
            f"{name}={raw!r} is not a whole number; set it to e.g. {default}."
        ) from None
    if value < minimum or (maximum is not None and value > maximum):
        upper = f" and at most {maximum}" if maximum is not None else ""
        raise ConfigError(f"{name}={raw!r} is out of range; it must be at least {minimum}{upper}.")
    return value


def _api_url(environ: Mapping[str, str]) -> str:
    raw = _text(environ, "SLACK_API_URL")
    if raw is None:
        return DEFAULT_SLACK_API_URL
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(
            f"SLACK_API_URL={raw!r} is not an http(s) URL; use the Web API base URL, "
            f"e.g. {DEFAULT_SLACK_API_URL} (or https://slack-gov.com/api/ for GovSlack)."
        )
    path = parts.path if parts.path.endswith("/") else parts.path + "/"
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def _existing_file(environ: Mapping[str, str], name: str) -> Path | None:
    raw = _text(environ, name)
    if raw is None:
        return None
    path = Path(raw).expanduser()
    if not path.is_file():
        raise ConfigError(f"{name}={raw!r}: no such file. Point it at the cluster registry YAML.")
    return path


def _existing_dir(environ: Mapping[str, str], name: str) -> Path | None:
    raw = _text(environ, name)
    if raw is None:
        return None
    path = Path(raw).expanduser()
    if not path.is_dir():
        raise ConfigError(f"{name}={raw!r}: no such directory. Point it at your kubeconfig folder.")
    return path


# Slack user ids: U... for users, W... for Enterprise Grid users (https://api.slack.com/changelog/
# 2016-08-11-user-id-format-changes).
_SLACK_USER_ID = re.compile(r"^[UW][A-Z0-9]{2,}+$")


def _user_ids(environ: Mapping[str, str], name: str) -> frozenset[str]:
    raw = _text(environ, name)
    if raw is None:
        return frozenset()
    ids = [part.strip() for part in raw.split(",") if part.strip()]
    bad = [part for part in ids if not _SLACK_USER_ID.match(part)]
    if bad:
        raise ConfigError(
            f"{name}: {bad[0]!r} is not a Slack user id. List member ids separated by commas, "
            "e.g. U0123ABCD,U0456EFGH (in Slack: a person's profile -> ⋮ -> Copy member ID)."
        )
    return frozenset(ids)


def _redis_url(environ: Mapping[str, str]) -> Secret | None:
    raw = _text(environ, "REDIS_URL")
    if raw is None:
        return None
    if urlsplit(raw).scheme not in ("redis", "rediss", "unix"):
        raise ConfigError(
            "REDIS_URL must start with redis://, rediss:// or unix:// "
            "(e.g. redis://127.0.0.1:6379/0); unset it to keep state in the process."
        )
    return Secret(raw)


def load_config(environ: Mapping[str, str] | None = None) -> BotConfig:
    """Read the settings from ``environ`` (default: the process environment).

    Raises ``ConfigError`` for the first bad value.
    """
    env = os.environ if environ is None else environ
    return BotConfig(
        slack_bot_token=_secret(env, "SLACK_BOT_TOKEN", "xoxb-", "a bot token"),
        slack_signing_secret=_secret(env, "SLACK_SIGNING_SECRET", "", "a signing secret"),
        slack_app_token=_secret(env, "SLACK_APP_TOKEN", "xapp-", "an app-level token"),
        slack_api_url=_api_url(env),
        port=_integer(env, "PORT", DEFAULT_PORT, minimum=0, maximum=65535),
        redis_url=_redis_url(env),
        clusters_file=_existing_file(env, "HAMI_CLUSTERS_FILE"),
        kubeconfig_dir=_existing_dir(env, "KUBECONFIG_DIR"),
        admins=_user_ids(env, "HAMI_SUMMARY_ADMINS"),
        thread_ttl_seconds=_number(env, "HAMI_SUMMARY_THREAD_TTL_SECONDS", 24 * 3600.0, minimum=1),
        thread_max_bytes=_integer(
            env, "HAMI_SUMMARY_THREAD_MAX_BYTES", 8 * 1024 * 1024, minimum=1024
        ),
        dedupe_ttl_seconds=_number(env, "HAMI_SUMMARY_DEDUPE_TTL_SECONDS", 3600.0, minimum=60),
        picker_ttl_seconds=_number(env, "HAMI_SUMMARY_PICKER_TTL_SECONDS", 3600.0, minimum=60),
        max_file_bytes=_integer(env, "HAMI_SUMMARY_MAX_FILE_BYTES", 32 * 1024 * 1024, minimum=1024),
        live_requests_per_minute=_integer(env, "HAMI_SUMMARY_LIVE_PER_MINUTE", 10, minimum=1),
        scrape_timeout_seconds=_number(
            env,
            "HAMI_SUMMARY_SCRAPE_TIMEOUT_SECONDS",
            10.0,
            minimum=0.1,
            maximum=MAX_SCRAPE_TIMEOUT_SECONDS,
        ),
        fleet_wait_seconds=_number(
            env,
            "HAMI_SUMMARY_FLEET_WAIT_SECONDS",
            8.0,
            minimum=0.5,
            maximum=MAX_SCRAPE_TIMEOUT_SECONDS,
        ),
        worker_threads=_integer(env, "HAMI_SUMMARY_WORKER_THREADS", 16, minimum=1, maximum=256),
        summary_settings=_summary_settings(env),
    )


def _summary_settings(env: Mapping[str, str]) -> Settings:
    try:
        return load_settings(env)
    except SettingsError as error:
        raise ConfigError(f"{error}. See the README section on thresholds.") from None
