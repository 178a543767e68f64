"""The notifier's loop, the same on every replica: look for due digests and alert evaluations
every ``tick_seconds``, and collect clusters with a GPU-hours digest once per history spacing
(``bot.notify.sampling``); the leases decide which replica acts.

It pauses while Redis is degraded: each replica would then take every lease in its own memory
and post the same digest, which "exactly once" forbids; it carries on by itself once Redis
takes writes again (a slot is still posted, late, within its hour).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from bot.clusters.registry import ClusterRegistry
from bot.config import BotConfig, NotifySettings
from bot.conversation.service import Conversation
from bot.live import RegistryLiveSource
from bot.notify.alerts import AlertRunner
from bot.notify.digests import DigestRunner
from bot.notify.records import NotifyRecords
from bot.notify.sampling import UsageSampler
from bot.slack.app import build_web_client
from bot.store.factory import redis_state
from bot.store.kv import KeyValueStore
from bot.store.state import BotState

log = logging.getLogger("hami_summary.notify")


class NotifyLoop:
    def __init__(
        self,
        digests: DigestRunner,
        alerts: AlertRunner,
        *,
        tick_seconds: float,
        store_usable: Callable[[], bool] = lambda: True,
        sampler: UsageSampler | None = None,
    ) -> None:
        self.digests = digests
        self.alerts = alerts
        self.sampler = sampler
        self.tick_seconds = tick_seconds
        self._store_usable = store_usable
        self._paused = False

    def tick(self) -> None:
        if not self._store_usable():
            if not self._paused:
                log.warning(
                    "digests and alerts paused while Redis is degraded (no replica "
                    "could tell whether another one posted)"
                )
            self._paused = True
            return
        if self._paused:
            log.info("digests and alerts resumed: Redis takes writes again")
            self._paused = False
        if self.sampler is not None:
            self.sampler.tick()
        self.digests.tick()
        self.alerts.tick()

    def run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                self.tick()
            except Exception:  # logged, and tried again next tick
                log.exception("the digest and alert loop failed this tick")
            stop.wait(self.tick_seconds)

    def start(self, stop: threading.Event) -> threading.Thread:
        thread = threading.Thread(target=self.run, args=(stop,), name="hami-notify", daemon=True)
        thread.start()
        return thread


def declares_notifications(registry: ClusterRegistry) -> bool:
    return any(entry.digests or entry.alerts for entry in registry.entries)


def build_notify_loop(
    config: BotConfig,
    store: KeyValueStore,
    registry: ClusterRegistry,
    token: str,
    settings: NotifySettings,
    *,
    clock: Callable[[], float] = time.time,
) -> NotifyLoop:
    """The loop with its own Web API client and live source over the shared ``store``: the
    same cache, history and records as the replica's answers."""
    client = build_web_client(token, config.slack_api_url)
    live = RegistryLiveSource(
        registry,
        store,
        settings=config.summary_settings,
        timeout_seconds=config.scrape_timeout_seconds,
    )
    conversation = Conversation(
        BotState(store, clock=clock), live, settings=config.summary_settings
    )
    records = NotifyRecords(store)
    return NotifyLoop(
        DigestRunner(
            registry,
            records,
            conversation,
            live,
            client,
            lease_seconds=settings.lease_seconds,
            clock=clock,
        ),
        AlertRunner(
            registry,
            records,
            live,
            client,
            interval_seconds=settings.alert_interval_seconds,
            lease_seconds=settings.lease_seconds,
            clock=clock,
        ),
        tick_seconds=settings.tick_seconds,
        store_usable=lambda: redis_state(store).state != "degraded",
        sampler=UsageSampler(registry, live, clock=clock),
    )
