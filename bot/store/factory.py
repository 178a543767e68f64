"""The bot's store, built from its Redis settings (``bot.config.RedisSettings``).

No Redis URL: an in-process ``MemoryStore`` (one replica, local use). A Redis URL: Redis shared
by all replicas, every key under the configured prefix, behind ``ResilientStore`` so the bot
keeps answering while Redis is away. The settings are read and checked by ``bot.config``; only
what the Redis client itself refuses is reported from here.
"""

from __future__ import annotations

import logging

from bot.config import ConfigError, RedisSettings
from bot.store.kv import KeyValueStore
from bot.store.memory import MemoryStore
from bot.store.redis_store import RedisStore, StoreUnavailableError
from bot.store.resilient import RedisHealth, ResilientStore

log = logging.getLogger("hami_summary.store")


def store_from_config(settings: RedisSettings) -> KeyValueStore:
    """The store the bot should use; raises ``ConfigError`` when the Redis client refuses
    the URL or prefix."""
    if settings.url is None:
        return MemoryStore(max_bytes=settings.memory_max_bytes)
    try:
        redis_store = RedisStore(
            settings.url.reveal(), settings.key_prefix, timeout_seconds=settings.timeout_seconds
        )
    except ValueError as error:
        raise ConfigError(f"REDIS_URL or REDIS_KEY_PREFIX is unusable: {error}") from None
    log.info("state in %s, keys under %s:", redis_store.target.describe, settings.key_prefix)
    return ResilientStore(
        redis_store,
        MemoryStore(max_bytes=settings.memory_max_bytes),
        retry_interval_seconds=settings.retry_interval_seconds,
    )


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
