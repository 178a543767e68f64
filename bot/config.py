"""The bot's settings, read once from the environment (12-factor) into one typed object.

Every variable is read here, and only here (``tests/cli/test_environment_read_once.py``): for
``serve`` and ``chat`` (``load_config``) the Slack tokens, the ports, Redis (``RedisSettings``),
the web server's limits (``HttpSettings``), the notifier's (``NotifySettings``), the registry and
settings files, and the bot's own limits; for the other commands their paths
(``command_settings``), the summary's thresholds (``summary_settings``) and the terminal's width.
Every value has a visible default.
Bad values fail at start-up with a message naming the variable, what was wrong and what to set
instead (``ConfigError``). Secrets are wrapped in ``Secret`` so that printing or logging the
settings never shows them.
"""

from __future__ import annotations

import math
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

from bot.redis_url import RedisUrlError, parse_redis_url
from bot.settings_file import load_settings
from core.settings import DEFAULT_SETTINGS, Settings, SettingsError

if TYPE_CHECKING:
    from pathlib import Path

DEFAULT_SLACK_API_URL = "https://slack.com/api/"
DEFAULT_PORT = 3000
DEFAULT_OPS_PORT = 8080
DEFAULT_REDIS_KEY_PREFIX = "hami-summary"
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


THREADS_VARIABLE = "HAMI_SUMMARY_HTTP_THREADS"
IDLE_TIMEOUT_VARIABLE = "HAMI_SUMMARY_HTTP_IDLE_TIMEOUT_SECONDS"
MAX_BODY_VARIABLE = "HAMI_SUMMARY_HTTP_MAX_BODY_BYTES"
CONNECTION_LIMIT_VARIABLE = "HAMI_SUMMARY_HTTP_CONNECTION_LIMIT"
DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class HttpSettings:
    """Limits of the bot's HTTP server (``bot.web.server``).

    * ``HAMI_SUMMARY_HTTP_THREADS`` (default 8): requests handled at once. Slack's requests are
      acknowledged in milliseconds (the answers are computed on the reply pool,
      ``HAMI_SUMMARY_WORKER_THREADS``), so a few threads serve many replicas' worth of traffic;
      requests beyond them wait in a queue instead of starting a thread each.
    * ``HAMI_SUMMARY_HTTP_IDLE_TIMEOUT_SECONDS`` (default 60): a connection that sends nothing for
      this long, between requests or in the middle of one (a body that never arrives), is closed.
      Idle connections hold no thread, only a socket, until then.
    * ``HAMI_SUMMARY_HTTP_MAX_BODY_BYTES`` (default 4 MiB): larger requests are refused with 413
      before their body is read. Slack's events, commands and interactions are a few kilobytes.
    * ``HAMI_SUMMARY_HTTP_CONNECTION_LIMIT`` (default 1000): open connections beyond this wait in
      the listen queue until others close.
    """

    threads: int = 8
    idle_timeout_seconds: int = 60
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    connection_limit: int = 1000


# What one replica keeps in process memory at most (``bot.store.memory``): room for 30 thread
# pastes at the largest size kept (8 MiB compressed) beside the scrape cache, well inside a
# 1 GiB container.
MEMORY_STORE_DEFAULT_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class RedisSettings:
    """Where the state shared by replicas lives; ``url`` None keeps it in process memory.

    ``url`` is a Secret because a Redis URL may carry a password (redis://:pw@host/0). Every key
    the bot writes sits under ``key_prefix:`` (added by the store, once).
    """

    url: Secret | None = None
    key_prefix: str = DEFAULT_REDIS_KEY_PREFIX
    # Socket and connect timeout of every Redis call (REDIS_TIMEOUT_MS).
    timeout_seconds: float = 0.2
    # How often a store that lost Redis probes it again (REDIS_RETRY_INTERVAL_S).
    retry_interval_seconds: float = 5.0
    # What the in-process store keeps at most, without Redis or while it is away
    # (HAMI_SUMMARY_MEMORY_STORE_MIB).
    memory_max_bytes: int = MEMORY_STORE_DEFAULT_BYTES


DEFAULT_ALERT_INTERVAL_SECONDS = 180.0
DEFAULT_LEASE_SECONDS = 60.0
DEFAULT_TICK_SECONDS = 15.0


@dataclass(frozen=True, slots=True)
class NotifySettings:
    """How often the notifier looks, and how long its leases outlive a replica that stopped."""

    # Alert rules are evaluated this often (by one replica).
    alert_interval_seconds: float = DEFAULT_ALERT_INTERVAL_SECONDS
    # A lease not renewed (its replica stopped) frees its digest or cluster after this long.
    lease_seconds: float = DEFAULT_LEASE_SECONDS
    # How often each replica looks for due digests and alert evaluations.
    tick_seconds: float = DEFAULT_TICK_SECONDS

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> NotifySettings:
        """The notifier's settings from ``env``; raises ``ConfigError``."""
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
    # Socket Mode: the side port of /healthz, /readyz and /metrics (OPS_PORT; 0: none).
    ops_port: int = DEFAULT_OPS_PORT
    # The store is built from these by ``bot.store.factory.store_from_config``.
    redis: RedisSettings = field(default_factory=RedisSettings)
    http: HttpSettings = field(default_factory=HttpSettings)
    notify: NotifySettings = field(default_factory=NotifySettings)
    clusters_file: Path | None = None
    # Folder scanned for kubeconfigs by the admin command; None: the CLI's default (~/.kube).
    kubeconfig_dir: Path | None = None
    # Slack user ids allowed to use ``/hami-summary admin`` (HAMI_SUMMARY_ADMINS). Empty: nobody.
    admins: frozenset[str] = frozenset()
    # Thresholds and limits of the summary (HAMI_SUMMARY_SETTINGS, HAMI_SUMMARY_MAX_INPUT_MIB).
    summary_settings: Settings = DEFAULT_SETTINGS
    # Follow-ups in a thread use the metrics given there for this long: a day, so a thread
    # started one afternoon still answers the next morning.
    thread_ttl_seconds: float = 24 * 3600.0
    # Largest compressed metrics text kept for thread follow-ups.
    thread_max_bytes: int = 8 * 1024 * 1024
    # Slack retries an event up to three times over about five minutes; remember ids longer.
    dedupe_ttl_seconds: float = 3600.0
    picker_ttl_seconds: float = 3600.0
    # Largest file or snippet the bot downloads from Slack.
    max_file_bytes: int = 32 * 1024 * 1024
    # Live scrapes and new pastes per user per minute: enough for someone at work, too few for
    # one user to keep a cluster's API server busy.
    live_requests_per_minute: int = 10
    scrape_timeout_seconds: float = 10.0
    # The fleet view and App Home wait this long for all clusters together; a cluster still
    # collecting then is named as such (its result lands in the cache for the next ask).
    fleet_wait_seconds: float = 8.0
    # Threads that compute and post the answers (Bolt's lazy listeners) in one process; the
    # acknowledgements run on the threads of the web server or the Socket Mode handler.
    worker_threads: int = 16

    def secrets(self) -> tuple[Secret, ...]:
        """Every credential among the settings (for the log redaction)."""
        found = (self.slack_bot_token, self.slack_signing_secret, self.slack_app_token)
        return tuple(secret for secret in (*found, self.redis.url) if secret is not None)

    def redacted(self) -> dict[str, str]:
        """The settings as text for a start-up log line, with every secret hidden."""
        shown: dict[str, str] = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            # A Secret shows as *** here and inside the nested settings (its repr).
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


def _path(raw: str) -> Path:
    # pathlib only when a path is set: ``summarize`` reads its settings here and must not pay
    # for importing pathlib (tests/cli/test_startup_imports.py).
    from pathlib import Path

    return Path(raw).expanduser()


def _existing_file(environ: Mapping[str, str], name: str) -> Path | None:
    raw = _text(environ, name)
    if raw is None:
        return None
    path = _path(raw)
    if not path.is_file():
        raise ConfigError(f"{name}={raw!r}: no such file. Point it at the cluster registry YAML.")
    return path


def _existing_dir(environ: Mapping[str, str], name: str) -> Path | None:
    raw = _text(environ, name)
    if raw is None:
        return None
    path = _path(raw)
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
    try:
        parse_redis_url(raw)
    except RedisUrlError as error:
        # The message never echoes the URL: it may carry a password.
        raise ConfigError(f"{error}; unset it to keep state in the process.") from None
    return Secret(raw)


def _positive(environ: Mapping[str, str], name: str, default: float, scale: float) -> float:
    """A positive number given in some unit (``scale`` turns it into seconds)."""
    raw = _text(environ, name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0 or not math.isfinite(value):
        raise ConfigError(f"{name} must be a positive number, got {raw!r}.")
    return value * scale


def redis_settings(environ: Mapping[str, str]) -> RedisSettings:
    """The Redis part of the settings alone; raises ``ConfigError``."""
    prefix = (_text(environ, "REDIS_KEY_PREFIX") or DEFAULT_REDIS_KEY_PREFIX).rstrip(":")
    if not prefix:
        raise ConfigError(
            "REDIS_KEY_PREFIX must name the bot's keys (e.g. hami-summary), not only ':'; "
            "unset it for the default."
        )
    default = RedisSettings()
    return RedisSettings(
        url=_redis_url(environ),
        key_prefix=prefix,
        timeout_seconds=_positive(environ, "REDIS_TIMEOUT_MS", default.timeout_seconds, 0.001),
        retry_interval_seconds=_positive(
            environ, "REDIS_RETRY_INTERVAL_S", default.retry_interval_seconds, 1.0
        ),
        memory_max_bytes=_whole(
            environ, "HAMI_SUMMARY_MEMORY_STORE_MIB", default.memory_max_bytes >> 20, 16, 65536
        )
        << 20,
    )


def _whole(environ: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    raw = _text(environ, name)
    if raw is None:
        return default
    if not (raw.isascii() and raw.isdigit()) or not low <= int(raw) <= high:
        raise ConfigError(
            f"{name}={raw!r} must be a whole number from {low} to {high} (default {default})."
        )
    return int(raw)


def http_settings(environ: Mapping[str, str]) -> HttpSettings:
    """The web server's limits alone; raises ``ConfigError``."""
    default = HttpSettings()
    return HttpSettings(
        threads=_whole(environ, THREADS_VARIABLE, default.threads, 1, 256),
        idle_timeout_seconds=_whole(
            environ, IDLE_TIMEOUT_VARIABLE, default.idle_timeout_seconds, 1, 3600
        ),
        max_body_bytes=_whole(
            environ, MAX_BODY_VARIABLE, default.max_body_bytes, 1024, 64 * 1024 * 1024
        ),
        connection_limit=_whole(
            environ, CONNECTION_LIMIT_VARIABLE, default.connection_limit, 10, 100_000
        ),
    )


def _ops_port(environ: Mapping[str, str]) -> int:
    raw = _text(environ, "OPS_PORT")
    if raw is None:
        return DEFAULT_OPS_PORT
    try:
        return int(raw)
    except ValueError:
        raise ConfigError(
            f"OPS_PORT={raw!r} is not a port number; set e.g. 8080, or 0 to turn it off."
        ) from None


# Read once by ``load_config``, then taken out of the environment by ``serve``
# (``forget_secret_environment``): child processes (kubeconfig ``exec`` credential plugins, which
# the Kubernetes client starts with this process's environment) never see them, and Bolt, which
# falls back to SLACK_BOT_TOKEN when no token is passed, gets the token only through the Web API
# client we give it (otherwise it warns "As you gave `client` as well, `token` will be unused."
# on every start).
SECRET_VARIABLES = ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN", "REDIS_URL")


def forget_secret_environment() -> None:
    """Drop the credentials from the process environment once ``load_config`` has read them."""
    for name in SECRET_VARIABLES:
        os.environ.pop(name, None)


def terminal_columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size`` finds it: ``$COLUMNS``, else the
    width of the terminal behind standard output, else 80 (without importing ``shutil``, which
    imports the bz2, lzma and zlib modules on every command)."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def process_environment() -> dict[str, str]:
    """A copy of the process environment, for the child processes of ``bot.quickstart``.

    Standard library only, as is every module-level import of this module: quick start runs it
    with the bare system Python before the dependencies are installed.
    """
    return dict(os.environ)


@dataclass(frozen=True, slots=True)
class CommandSettings:
    """What the CLI commands read from the environment, as given (unchecked): the commands
    report a missing folder or a bad registry in their own words instead of refusing to start.
    """

    # KUBECONFIG_DIR: the folder of kubeconfigs ``clusters`` scans; None: ~/.kube.
    kubeconfig_dir: Path | None = None
    # HAMI_CLUSTERS_FILE: the cluster registry ``clusters`` shows.
    clusters_file: str | None = None


def command_settings(environ: Mapping[str, str] | None = None) -> CommandSettings:
    """The CLI commands' settings from ``environ`` (default: the process environment)."""
    env = os.environ if environ is None else environ
    kubeconfig_dir = env.get("KUBECONFIG_DIR")
    return CommandSettings(
        kubeconfig_dir=_path(kubeconfig_dir) if kubeconfig_dir else None,
        clusters_file=env.get("HAMI_CLUSTERS_FILE") or None,
    )


def summary_settings(
    path: str | None = None,
    environ: Mapping[str, str] | None = None,
    max_input_mib: float | None = None,
) -> Settings:
    """The summary's thresholds and limits for a CLI command: ``path`` (its ``--settings``) or
    the file HAMI_SUMMARY_SETTINGS names, then HAMI_SUMMARY_MAX_INPUT_MIB or the command's
    ``--max-input-mib``.

    Raises ``SettingsError`` (the commands print it as they always have).
    """
    return load_settings(os.environ if environ is None else environ, path, max_input_mib)


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
        ops_port=_ops_port(env),
        redis=redis_settings(env),
        http=http_settings(env),
        notify=NotifySettings.from_env(env),
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
        raise ConfigError(f"{error}. See docs/numbers.md for the thresholds and limits.") from None
