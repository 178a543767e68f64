"""Rate limits on a real Redis, shared by two limiter instances (two replicas)."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from bot.store.memory import MemoryStore
from bot.store.ratelimit import RateDecision, RateLimiter, check_all, rate_limit_message
from bot.store.redis_store import RedisStore
from tests.support.redis_topologies import redis_client


@pytest.fixture
def kv(redis_url: str, redis_key_prefix: str) -> Iterator[RedisStore]:
    store = RedisStore(redis_url, redis_key_prefix)
    yield store
    store.close()


def test_limit_per_user_shared_by_replicas(redis_url: str, redis_key_prefix: str) -> None:
    now = [60 * 16_667 + 20.0]  # 20 s into a one-minute window
    replica_a = RateLimiter(
        RedisStore(redis_url, redis_key_prefix), "rl:user", 10, 60, clock=lambda: now[0]
    )
    replica_b = RateLimiter(
        RedisStore(redis_url, redis_key_prefix), "rl:user", 10, 60, clock=lambda: now[0]
    )
    decisions = [(replica_a if n % 2 else replica_b).check("U123") for n in range(10)]
    assert all(d.allowed for d in decisions)
    refused = replica_a.check("U123")
    assert refused.allowed is False
    assert refused.retry_after_seconds == pytest.approx(40.0)
    # Another user is counted apart.
    assert replica_b.check("U999").allowed
    # The next window starts afresh.
    now[0] += 40.0
    assert replica_a.check("U123").allowed


def test_window_keys_expire_with_the_window(kv: RedisStore, redis_url: str) -> None:
    # A stepped clock, 10 s into a one-minute window: no wall-clock sleep decides the outcome.
    now = [60 * 16_667 + 10.0]
    limiter = RateLimiter(kv, "rl:user", 1, 60, clock=lambda: now[0])
    assert limiter.check("U1").allowed
    assert not limiter.check("U1").allowed
    # The window's counter lives as long as the window: Redis drops it, nobody has to.
    with redis_client(redis_url) as raw:
        remaining_ms = raw.pttl(kv.key("rl:user:U1:16667"))
    assert 0 < remaining_ms <= 60_000
    now[0] += 50.0  # the next window
    assert limiter.check("U1").allowed


def test_concurrent_checks_never_let_more_than_the_limit_through(kv: RedisStore) -> None:
    limiter = RateLimiter(kv, "rl:user", 10, 60)
    allowed: list[bool] = []
    barrier = threading.Barrier(30)

    def ask() -> None:
        barrier.wait()
        allowed.append(limiter.check("U1").allowed)

    threads = [threading.Thread(target=ask) for _ in range(30)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Unless the minute turned during the burst, exactly ten got through.
    assert allowed.count(True) in (10, 20)


def test_user_then_channel_limits() -> None:
    kv = MemoryStore()
    now = [3_600_000.0]
    per_user = RateLimiter(kv, "rl:user", 2, 60, clock=lambda: now[0])
    per_channel = RateLimiter(kv, "rl:channel", 3, 60, scope="this channel", clock=lambda: now[0])
    assert check_all([(per_user, "U1"), (per_channel, "C1")]).allowed
    assert check_all([(per_user, "U1"), (per_channel, "C1")]).allowed
    refused_user = check_all([(per_user, "U1"), (per_channel, "C1")])
    assert not refused_user.allowed and refused_user.scope == "you"
    # U1's refusal did not use up the channel's third request.
    assert check_all([(per_user, "U2"), (per_channel, "C1")]).allowed
    refused_channel = check_all([(per_user, "U3"), (per_channel, "C1")])
    assert not refused_channel.allowed and refused_channel.scope == "this channel"


def test_refusal_message_is_polite_and_says_when() -> None:
    message = rate_limit_message(RateDecision(False, 41.2, 10, 60))
    assert message.startswith(
        "Sorry, you have reached the limit of 10 live cluster scrapes per minute."
    )
    assert "try again in 42 seconds" in message
    channel = rate_limit_message(RateDecision(False, 0.2, 30, 3600, "this channel"))
    assert "this channel has reached the limit of 30 live cluster scrapes per hour" in channel
    assert "try again in 1 second." in channel
    long_wait = rate_limit_message(RateDecision(False, 150, 5, 300))
    assert "per 5 minutes" in long_wait and "try again in 3 minutes" in long_wait


def test_bad_limits_are_rejected() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        RateLimiter(MemoryStore(), "rl", 0, 60)
    with pytest.raises(ValueError, match="positive"):
        RateLimiter(MemoryStore(), "rl", 1, 0)
