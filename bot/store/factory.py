"""Choose the bot's store from the environment (12-factor, DESIGN.md "Bot configuration").

``REDIS_URL`` unset: an in-process ``MemoryStore`` (one replica, local use).
``REDIS_URL`` set: Redis shared by all replicas, behind ``ResilientStore`` so the bot keeps
answering while Redis is away. Optional settings:

* ``REDIS_KEY_PREFIX`` (default ``hami-summary``): every key lives under ``<prefix>:``;
* ``REDIS_TIMEOUT_MS`` (default 200): socket and connect timeout of every Redis call;
* ``REDIS_RETRY_INTERVAL_S`` (default 5): how often a degraded store probes Redis again.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from urllib.parse import urlsplit

from bot.store.kv import KeyValueStore
from bot.store.memory import MemoryStore
from bot.store.redis_store import (
    DEFAULT_PREFIX,
    DEFAULT_TIMEOUT_SECONDS,
    RedisStore,
    StoreUnavailableError,
)
from bot.store.resilient import DEFAULT_RETRY_INTERVAL_SECONDS, RedisHealth, ResilientStore


class StoreConfigError(ValueError):
    """A Redis setting in the environment is unusable; ``message`` says which and why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _positive_number(env: Mapping[str, str], name: str, default: float, scale: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if value <= 0:
        raise StoreConfigError(f"{name} must be a positive number, got {raw!r}.")
    return value * scale


def _check_redis_url(url: str) -> None:
    scheme = urlsplit(url).scheme
    if scheme not in ("redis", "rediss", "unix"):
        # Never echo the URL: it may carry a password.
        raise StoreConfigError(
            f"REDIS_URL must start with redis://, rediss:// or unix:// (got scheme {scheme!r}); "
            "for example redis://redis:6379/0, or unset it to keep state in process memory."
        )


def store_from_env(env: Mapping[str, str] | None = None) -> KeyValueStore:
    """The store the bot should use, built from ``env`` (default ``os.environ``)."""
    env = os.environ if env is None else env
    url = env.get("REDIS_URL", "").strip()
    if not url:
        return MemoryStore()
    _check_redis_url(url)
    prefix = env.get("REDIS_KEY_PREFIX", "").strip() or DEFAULT_PREFIX
    timeout_seconds = _positive_number(env, "REDIS_TIMEOUT_MS", DEFAULT_TIMEOUT_SECONDS, 0.001)
    retry_interval_seconds = _positive_number(
        env, "REDIS_RETRY_INTERVAL_S", DEFAULT_RETRY_INTERVAL_SECONDS, 1.0
    )
    try:
        redis_store = RedisStore(url, prefix.rstrip(":"), timeout_seconds=timeout_seconds)
    except ValueError as error:
        raise StoreConfigError(f"REDIS_URL or REDIS_KEY_PREFIX is unusable: {error}") from None
    return ResilientStore(redis_store, retry_interval_seconds=retry_interval_seconds)


def redis_state(store: KeyValueStore) -> RedisHealth:
    """``ok`` / ``degraded`` (with the reason) for a Redis-backed store, ``disabled`` for the
    in-process one.

    For the readiness probe: it is the store's chance to notice an outage, a Redis that
    refuses writes, or a recovery, even when no request comes in (a write probe at most once
    an interval, bounded by the Redis timeout).
    """
    if isinstance(store, ResilientStore):
        return store.check_health()
    if isinstance(store, RedisStore):
        try:
            store.probe_writes()
        except StoreUnavailableError as error:
            return RedisHealth("degraded", error.reason)
        return RedisHealth("ok")
    return RedisHealth("disabled")
