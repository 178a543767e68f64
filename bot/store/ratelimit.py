"""Per-user and per-channel limits on expensive requests, shared by replicas.

Each user has one allowance for summaries that cost real work: live scrapes (answers from the
scrape cache are free) and pasted or attached metrics. Channels have a second allowance for
live scrapes only, which protects the clusters' API servers.

A fixed window counter: ``INCR`` on ``<prefix>:<subject>:<window number>`` whose TTL is the
window, so every replica counts into the same key and the key disappears with its window. A
fixed window lets a burst of up to twice the limit straddle a boundary; for "10 live scrapes a
minute" that is harmless, and it buys an exact "try again in N s" for the reply.

Windows are numbered from the Unix epoch (wall clock), so replicas agree on them as long as
their clocks agree to within a second or so (NTP).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.store.kv import KeyValueStore


@dataclass(frozen=True, slots=True)
class RateDecision:
    allowed: bool
    retry_after_seconds: float
    limit: int = 0
    window_seconds: float = 0.0
    # Who was limited, for the message: "you" (a user) or "this channel".
    scope: str = "you"
    # What the limit counts, for the message.
    counts: str = "live cluster scrapes"


ALLOWED = RateDecision(allowed=True, retry_after_seconds=0.0)


class RateLimiter:
    """At most ``limit`` checks per ``window_seconds`` for each subject (user id, channel id)."""

    def __init__(
        self,
        kv: KeyValueStore,
        prefix: str,
        limit: int,
        window_seconds: float,
        *,
        scope: str = "you",
        counts: str = "live cluster scrapes",
        clock: Callable[[], float] = time.time,
    ) -> None:
        if limit < 1:
            raise ValueError(f"a rate limit must allow at least 1 request, got {limit}")
        if window_seconds <= 0:
            raise ValueError(f"a rate-limit window must be positive, got {window_seconds}")
        self._kv = kv
        self._prefix = prefix.rstrip(":")
        self.limit = limit
        self.window_seconds = window_seconds
        self.scope = scope
        self.counts = counts
        self._clock = clock

    def check(self, subject: str) -> RateDecision:
        """Count one request by ``subject`` and say whether it may go ahead."""
        now = self._clock()
        window = math.floor(now / self.window_seconds)
        window_ends_at = (window + 1) * self.window_seconds
        count = self._kv.incr(f"{self._prefix}:{subject}:{window}", self.window_seconds)
        if count <= self.limit:
            return RateDecision(True, 0.0, self.limit, self.window_seconds, self.scope, self.counts)
        return RateDecision(
            False,
            max(0.0, window_ends_at - now),
            self.limit,
            self.window_seconds,
            self.scope,
            self.counts,
        )


USER_LIMIT_PREFIX = "rate:user"


def per_user_limiter(kv: KeyValueStore, limit: int, window_seconds: float) -> RateLimiter:
    """The one allowance each user has for live scrapes and pasted metrics together."""
    return RateLimiter(
        kv,
        USER_LIMIT_PREFIX,
        limit,
        window_seconds,
        counts="summaries of live clusters or pasted metrics",
    )


def check_all(limits: Sequence[tuple[RateLimiter, str]]) -> RateDecision:
    """Check each (limiter, subject), e.g. the user's and the channel's; the first refusal wins.

    Stops at the first refusal, so a request refused for the user does not also use up the
    channel's allowance.
    """
    for limiter, subject in limits:
        decision = limiter.check(subject)
        if not decision.allowed:
            return decision
    return ALLOWED


def _per_window(window_seconds: float) -> str:
    """The window as it reads after "per": "minute", "hour", "5 minutes", "30 seconds"."""
    if window_seconds == 60:
        return "minute"
    if window_seconds == 3600:
        return "hour"
    if window_seconds % 60 == 0:
        return f"{int(window_seconds // 60)} minutes"
    return f"{window_seconds:g} seconds"


def _describe_wait(seconds: float) -> str:
    whole = max(1, math.ceil(seconds))
    if whole < 60:
        return f"{whole} second{'s' if whole != 1 else ''}"
    minutes = math.ceil(whole / 60)
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


def rate_limit_message(decision: RateDecision) -> str:
    """The reply to a refused request: what the limit is and when to try again."""
    who = "You have" if decision.scope == "you" else f"{decision.scope.capitalize()} has"
    return (
        f"Sorry, {who[0].lower() + who[1:]} reached the limit of {decision.limit} "
        f"{decision.counts} per {_per_window(decision.window_seconds)}. Please try again in "
        f"{_describe_wait(decision.retry_after_seconds)}."
    )
