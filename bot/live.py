"""Live summaries of registered clusters: rate limit, cache with single-flight, collect, summarise.

This is the glue between the conversation (``bot.conversation.clusters.LiveSource``) and the
cluster access of ``bot.clusters``: who may query which cluster (the registry), how often
(``bot.store.ratelimit``), how one scrape serves many requests (``bot.store.scrape_cache``),
and ``core.api.summarize_text`` on what was collected.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.clusters.collect import CollectedMetrics, collect_metrics
from bot.clusters.errors import ClusterError
from bot.clusters.registry import ClusterEntry, ClusterRegistry
from bot.conversation.clusters import REGISTRY_HINT, LiveRequest, LiveResult
from bot.conversation.replies import ClusterOption
from bot.store.kv import KeyValueStore
from bot.store.ratelimit import RateLimiter, check_all, rate_limit_message
from bot.store.scrape_cache import ScrapeCache
from bot.store.summary_memo import SUMMARIES
from core.api import summarize_text
from core.errors import InputError
from core.settings import DEFAULT_SETTINGS, Settings

Collect = Callable[..., CollectedMetrics]

RATE_WINDOW_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class LiveLimits:
    per_user_per_minute: int = 10
    # Per channel: a busy channel must not starve the cluster's API server either.
    per_channel_per_minute: int = 30


def option_of(entry: ClusterEntry) -> ClusterOption:
    return ClusterOption(
        name=entry.name,
        display_name=entry.display_name,
        contexts=entry.contexts,
        runtime_allowed=entry.runtime_allowed,
    )


class RegistryLiveSource:
    """``LiveSource`` over the cluster registry; state (cache, limits) lives in ``kv``."""

    def __init__(
        self,
        registry: ClusterRegistry,
        kv: KeyValueStore,
        *,
        limits: LiveLimits = LiveLimits(),
        settings: Settings = DEFAULT_SETTINGS,
        timeout_seconds: float | None = None,
        collect: Collect = collect_metrics,
    ) -> None:
        self.registry = registry
        self.settings = settings
        self.timeout_seconds = timeout_seconds
        self._collect = collect
        self.cache = ScrapeCache(kv)
        self._user_limit = RateLimiter(
            kv, "hami-summary:rate:user", limits.per_user_per_minute, RATE_WINDOW_SECONDS
        )
        self._channel_limit = RateLimiter(
            kv, "hami-summary:rate:channel", limits.per_channel_per_minute, RATE_WINDOW_SECONDS,
            scope="this channel",
        )

    def _visible(self, user: str | None, channel: str | None) -> list[ClusterEntry]:
        if user is None:
            return list(self.registry.entries)  # the local operator in chat mode
        return self.registry.visible_to(user, channel)

    def clusters_for(self, user: str | None, channel: str | None) -> list[ClusterOption]:
        return [option_of(entry) for entry in self._visible(user, channel)]

    def setup_hint(self) -> str:
        if not self.registry.entries:
            return REGISTRY_HINT
        return (
            "None of the registered clusters may be queried by you in this channel. An operator "
            "can allow this channel or you for a cluster in the registry "
            "(allowed_channels / allowed_users). Meanwhile, paste HAMi /metrics text in a "
            "message that mentions me."
        )

    def summarize(self, request: LiveRequest) -> LiveResult:
        entry = next(
            (e for e in self._visible(request.user, request.channel)
             if e.name == request.cluster),
            None,
        )
        if entry is None:
            raise InputError(f"'{request.cluster}' is not a cluster you may query here.")
        limits: list[tuple[RateLimiter, str]] = []
        if request.user is not None:  # the local operator in chat mode is not limited
            limits.append((self._user_limit, request.user))
            if request.channel:
                limits.append((self._channel_limit, request.channel))
        return live_summary(
            request,
            entry=entry,
            cache=self.cache,
            limits=limits,
            collect=self._collect,
            timeout_seconds=self.timeout_seconds,
            settings=self.settings,
        )


def live_summary(
    request: LiveRequest,
    *,
    entry: ClusterEntry,
    cache: ScrapeCache,
    limits: Sequence[tuple[RateLimiter, str]],
    collect: Collect,
    timeout_seconds: float | None,
    settings: Settings,
) -> LiveResult:
    """Cache / single-flight -> rate limit -> collect -> ``core.api.summarize_text``.

    Every refusal or failure is an ``InputError`` whose message names the cluster and what to do.
    """

    def scrape() -> CollectedMetrics:
        # Only real scrapes count against the limits ("10 live scrapes a minute"): an answer
        # from the cache or from another request's scrape costs the cluster nothing. The
        # refusal is this requester's alone, so the cache does not share it with others.
        decision = check_all(limits)
        if not decision.allowed:
            raise InputError(rate_limit_message(decision))
        return collect(
            entry,
            request.context,
            runtime=request.runtime,
            nvidia_smi=False,
            timeout_seconds=timeout_seconds,
        )

    try:
        collected, age_seconds = cache.get_or_collect(
            entry.name,
            request.context,
            scrape,
            entry.cache_ttl_seconds,
            fresh=request.fresh,
            # A runtime request needs the vGPU monitors too: never answered from a cached
            # scheduler-only scrape.
            variant="runtime" if request.runtime else "",
        )
    except ClusterError as error:
        raise InputError(error.message) from None
    # The scrape cache hands out one object per collection: summarise it once per filter.
    summary = SUMMARIES.get_or_build(
        collected,
        (request.namespace, request.node, settings),
        lambda: summarize_text(
            collected.text,
            collected.source,
            monitor_texts=collected.monitor_texts,
            missing_monitors=collected.missing_monitors,
            real_usage=collected.real_usage,
            namespace=request.namespace,
            node=request.node,
            settings=settings,
        ),
    )
    return LiveResult(summary, age_seconds, collected.context, notes=collected.notes)
