"""Live summaries of registered clusters: rate limit, cache with single-flight, collect, summarise.

This is the glue between the conversation (``bot.conversation.clusters.LiveSource``) and the
cluster access of ``bot.clusters``: who may query which cluster (the registry), how often
(``bot.store.ratelimit``), how one scrape serves many requests (``bot.clusters.scrape_cache``),
and ``core.api.summarize_text`` on what was collected.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Protocol

from bot.clusters.cluster_pods import entry_pending_pods, entry_pod
from bot.clusters.collect import CollectedMetrics, collect_metrics
from bot.clusters.errors import ClusterError
from bot.clusters.prometheus_history import PrometheusHistory
from bot.clusters.registry import EVERYONE, ClusterEntry, ClusterRegistry
from bot.clusters.scrape_cache import ScrapeCache
from bot.conversation.clusters import (
    REGISTRY_HINT,
    LiveOutcome,
    LiveRequest,
    LiveResult,
    UsageHistory,
    nvidia_smi_refusal,
)
from bot.conversation.replies import ClusterOption, new_error_id
from bot.live_batch import run_within
from bot.store.history import SnapshotHistory
from bot.store.kv import KeyValueStore
from bot.store.ratelimit import (
    RateDecision,
    RateLimiter,
    check_all,
    per_user_limiter,
    rate_limit_message,
)
from bot.store.summary_memo import SUMMARIES
from core.api import filter_summary, summarize_text
from core.errors import InputError
from core.history.snapshot import Snapshot
from core.model import Summary
from core.pending.describe import PodDescription
from core.settings import DEFAULT_SETTINGS, Settings

Collect = Callable[..., CollectedMetrics]
# Asked once before a real scrape: may this requester cause one now?
Admission = Callable[[], RateDecision]

log = logging.getLogger("hami_summary.live")

RATE_WINDOW_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class LiveLimits:
    per_user_per_minute: int = 10
    # Per channel: a busy channel must not starve the cluster's API server either.
    per_channel_per_minute: int = 30


class UserGroupDirectory(Protocol):
    """Who is in which user group (Slack user groups, read by ``bot.slack.usergroups``)."""

    def groups_of(self, user: str, groups: Collection[str]) -> frozenset[str]:
        """The groups among ``groups`` that ``user`` belongs to. A group whose members cannot
        be read counts as one the user is not in (access stays closed). May raise when the
        caller limited how long it waits (``bot.slack.usergroups.MembershipPending``): the
        answer then comes from asking again later."""

    def problems(self, groups: Collection[str]) -> tuple[str, ...]:
        """Recent failures to read ``groups``, worded for whoever runs the bot."""


def user_groups_named(registry: ClusterRegistry) -> frozenset[str]:
    """Every user group some entry names; "*" is none (it lets everyone in, no lookup)."""
    return frozenset(
        group
        for entry in registry.entries
        for group in entry.allowed_user_groups
        if group != EVERYONE
    )


def option_of(entry: ClusterEntry) -> ClusterOption:
    return ClusterOption(
        name=entry.name,
        display_name=entry.display_name,
        contexts=entry.contexts,
        runtime_allowed=entry.runtime_allowed,
        nvidia_smi_allowed=entry.nvidia_smi_allowed,
        defined_at=entry.defined_at,
        digests=entry.digests,
        alerts=entry.alerts,
    )


class OnceAdmission:
    """One rate-limit check for a whole batch (the fleet view): the first real scrape counts
    once against the limits, every later one in the batch shares that decision."""

    def __init__(self, limits: Sequence[tuple[RateLimiter, str]]) -> None:
        self._limits = limits
        self._lock = threading.Lock()
        self._decision: RateDecision | None = None

    def __call__(self) -> RateDecision:
        with self._lock:
            if self._decision is None:
                self._decision = check_all(self._limits)
            return self._decision


def collection_variant(request: LiveRequest) -> str:
    """The scrape-cache variant of a request: collections that differ in content are kept
    apart, so a request is never answered with less (or more) than it asked for."""
    parts = [
        name for name, wanted in (("runtime", request.runtime), ("usage", request.usage)) if wanted
    ]
    return "-".join(parts)


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
        user_groups: UserGroupDirectory | None = None,
        history: SnapshotHistory | None = None,
    ) -> None:
        self.registry = registry
        self.settings = settings
        self.timeout_seconds = timeout_seconds
        self._collect = collect
        self._user_groups = user_groups
        self._registry_groups = user_groups_named(registry)
        self.cache = ScrapeCache(kv)
        self.history = (
            history if history is not None else SnapshotHistory(kv, policy=settings.history)
        )
        self._user_limit = per_user_limiter(kv, limits.per_user_per_minute, RATE_WINDOW_SECONDS)
        self._channel_limit = RateLimiter(
            kv,
            "rate:channel",
            limits.per_channel_per_minute,
            RATE_WINDOW_SECONDS,
            scope="this channel",
        )

    def _visible(self, user: str | None, channel: str | None) -> list[ClusterEntry]:
        if user is None:
            return list(self.registry.entries)  # the local operator in chat mode
        groups: frozenset[str] = frozenset()
        if self._user_groups is not None:
            # Membership is read only for entries the channel and user lists do not open
            # already, so most requests cost no user-group lookup at all.
            wanted = {
                group
                for entry in self.registry.entries
                if entry.allowed_user_groups and not entry.allows(user, channel)
                for group in entry.allowed_user_groups
                if group != EVERYONE
            }
            if wanted:
                groups = self._user_groups.groups_of(user, sorted(wanted))
        return self.registry.visible_to(user, channel, groups)

    def clusters_for(self, user: str | None, channel: str | None) -> list[ClusterOption]:
        return [option_of(entry) for entry in self._visible(user, channel)]

    def setup_hint(self) -> str:
        if not self.registry.entries:
            return REGISTRY_HINT
        return (
            "None of the registered clusters may be queried by you in this channel. An operator "
            "can allow this channel or you for a cluster in the registry "
            "(allowed_channels / allowed_users / allowed_user_groups). Meanwhile, paste HAMi "
            "/metrics text in a message that mentions me."
        )

    def access_notes(self, user: str | None, channel: str | None) -> tuple[str, ...]:
        if user is None or self._user_groups is None or not self._registry_groups:
            return ()
        return self._user_groups.problems(sorted(self._registry_groups))

    def _entry(self, request: LiveRequest) -> ClusterEntry:
        """The registry entry of a cluster the requester may query; else ``InputError``,
        worded the same whether the cluster exists or not."""
        entry = next(
            (e for e in self._visible(request.user, request.channel) if e.name == request.cluster),
            None,
        )
        if entry is None:
            raise InputError(f"'{request.cluster}' is not a cluster you may query here.")
        return entry

    def _prometheus_history(self, entry: ClusterEntry) -> PrometheusHistory:
        return PrometheusHistory(
            entry, settings=self.settings, timeout_seconds=self.timeout_seconds
        )

    def snapshot_before(self, request: LiveRequest, moment: float) -> Snapshot | None:
        entry = self._entry(request)
        if entry.source_kind == "prometheus":
            try:
                return self._prometheus_history(entry).at_or_before(moment)
            except ClusterError as error:
                raise InputError(error.message) from None
        return self.history.at_or_before(request.cluster, request.context, moment)

    def kept_snapshots(self, request: LiveRequest, series_hint: int = 0) -> list[Snapshot]:
        entry = self._entry(request)
        if entry.source_kind == "prometheus":
            try:
                return self._prometheus_history(entry).snapshots(series_hint)
            except ClusterError as error:
                # Only the chart goes without: the changes themselves were answered already.
                log.warning("no trend for cluster %s: %s", entry.name, error.message)
                return []
        return self.history.snapshots(request.cluster, request.context)

    def usage_history(self, request: LiveRequest, since: float, until: float) -> UsageHistory:
        entry = self._entry(request)
        if entry.source_kind != "prometheus":
            cluster, context = request.cluster, request.context
            kept = self.history.snapshots(cluster, context)
            usage = self.history.usage_snapshots(cluster, context, since, until, kept)
            return UsageHistory(usage, pod_snapshots=kept)
        try:
            states, step = self._prometheus_history(entry).usage_snapshots(since, until)
        except ClusterError as error:
            raise InputError(error.message) from None
        return UsageHistory(states, step)

    def _limits(self, request: LiveRequest) -> list[tuple[RateLimiter, str]]:
        limits: list[tuple[RateLimiter, str]] = []
        if request.user is not None:  # the local operator in chat mode is not limited
            limits.append((self._user_limit, request.user))
            if request.channel:
                limits.append((self._channel_limit, request.channel))
        return limits

    def summarize(self, request: LiveRequest) -> LiveResult:
        limits = self._limits(request)
        return self._summarize(request, lambda: check_all(limits))

    def _summarize(self, request: LiveRequest, admit: Admission) -> LiveResult:
        entry = self._entry(request)
        if request.usage and not entry.nvidia_smi_allowed:
            # Refused before the rate limit and the cache: nothing is collected for it.
            raise InputError(nvidia_smi_refusal(entry.name, entry.defined_at))
        return live_summary(
            request,
            entry=entry,
            cache=self.cache,
            admit=admit,
            collect=self._collect,
            timeout_seconds=self.timeout_seconds,
            settings=self.settings,
            # Prometheus keeps a cluster's past itself (read back with range queries).
            history=None if entry.source_kind == "prometheus" else self.history,
        )

    def _pod_entry(self, request: LiveRequest) -> ClusterEntry:
        """The entry of a cluster whose pods the requester may read now (access, then rate)."""
        entry = self._entry(request)
        decision = check_all(self._limits(request))
        if not decision.allowed:
            raise InputError(rate_limit_message(decision))
        return entry

    def pending_pods(self, request: LiveRequest) -> tuple[PodDescription, ...]:
        entry = self._pod_entry(request)
        try:
            return entry_pending_pods(entry, request.context, request.namespace)
        except ClusterError as error:
            raise InputError(error.message) from None

    def pod(self, request: LiveRequest, name: str) -> PodDescription:
        entry = self._pod_entry(request)
        try:
            return entry_pod(entry, request.context, request.namespace, name)
        except ClusterError as error:
            raise InputError(error.message) from None

    def summarize_many(
        self, requests: Sequence[LiveRequest], *, wait_seconds: float
    ) -> list[LiveOutcome]:
        if not requests:
            return []
        admit = OnceAdmission(self._limits(requests[0]))
        calls = [(lambda request=request: self._summarize(request, admit)) for request in requests]
        outcomes = []
        for request, finished in zip(requests, run_within(calls, wait_seconds), strict=True):
            if finished is None:
                outcomes.append(LiveOutcome(request, timed_out=True))
            elif isinstance(finished.error, InputError):
                outcomes.append(LiveOutcome(request, problem=finished.error.message))
            elif finished.error is not None:
                error_id = new_error_id()
                log.error(
                    "error %s collecting cluster %s in a batch",
                    error_id,
                    request.cluster,
                    exc_info=finished.error,
                )
                outcomes.append(
                    LiveOutcome(request, problem=f"internal error (error id `{error_id}`)")
                )
            else:
                outcomes.append(LiveOutcome(request, result=finished.value))
        return outcomes


def summary_of(
    collected: CollectedMetrics,
    settings: Settings,
    namespace: str | None = None,
    node: str | None = None,
) -> Summary:
    """The summary of a collection; the scrape cache hands out one object per collection, so
    it is built once per process, and each filter of it once (from the whole summary)."""
    if namespace is not None or node is not None:
        return SUMMARIES.get_or_build(
            collected,
            (namespace, node, settings),
            lambda: filter_summary(summary_of(collected, settings), namespace=namespace, node=node),
        )
    return SUMMARIES.get_or_build(
        collected,
        (None, None, settings),
        lambda: summarize_text(
            collected.text,
            collected.source,
            monitor_texts=collected.monitor_texts,
            missing_monitors=collected.missing_monitors,
            real_usage=collected.real_usage,
            settings=settings,
        ),
    )


def live_summary(
    request: LiveRequest,
    *,
    entry: ClusterEntry,
    cache: ScrapeCache,
    admit: Admission,
    collect: Collect,
    timeout_seconds: float | None,
    settings: Settings,
    history: SnapshotHistory | None = None,
) -> LiveResult:
    """Cache / single-flight -> rate limit -> collect -> ``core.api.summarize_text``.

    Every refusal or failure is an ``InputError`` whose message names the cluster and what to do.
    """

    def scrape() -> CollectedMetrics:
        # Only real scrapes count against the limits ("10 live scrapes a minute"): an answer
        # from the cache or from another request's scrape costs the cluster nothing. The
        # refusal is this requester's alone, so the cache does not share it with others.
        decision = admit()
        if not decision.allowed:
            raise InputError(rate_limit_message(decision))
        return collect(
            entry,
            request.context,
            runtime=request.runtime,
            nvidia_smi=request.usage,
            timeout_seconds=timeout_seconds,
            max_bytes=settings.limits.max_input_bytes,
        )

    try:
        collected, age_seconds = cache.get_or_collect(
            entry.name,
            request.context,
            scrape,
            entry.cache_ttl_seconds,
            fresh=request.fresh,
            # A runtime request needs the vGPU monitors too, a usage request the nvidia-smi
            # readings: never answered from a cached scheduler-only scrape (and an
            # allocation-only request is not slowed by, or shown, exec results).
            variant=collection_variant(request),
        )
    except ClusterError as error:
        raise InputError(error.message) from None
    summary = summary_of(collected, settings, request.namespace, request.node)
    if history is not None:
        history.record_collection(
            entry.name,
            collected.context,
            collected.fetched_at.timestamp(),
            lambda: summary_of(collected, settings),
        )
    return LiveResult(
        summary,
        age_seconds,
        collected.context,
        notes=collected.notes,
        usage_allowed=entry.nvidia_smi_allowed,
        pending=collected.pending,
    )
