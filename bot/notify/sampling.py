"""Collections kept for GPU-hours: a cluster with a ``gpu-hours`` digest is collected once per
history spacing by whichever replica looks first, so its report counts the hours nobody asked
about. The collection goes through the shared scrape cache (one scrape however many replicas
look) and is recorded by the history like any answer (one snapshot per spacing, under its
lock). Where the registry allows runtime scrapes (``runtime_allowed``), the vGPU monitors are
read too, so the report can count idle-allocated hours. A Prometheus-sourced cluster needs
none: Prometheus keeps its past.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from bot.clusters.registry import ClusterRegistry
from bot.conversation.clusters import LiveRequest
from bot.live import RegistryLiveSource
from core.errors import InputError

log = logging.getLogger("hami_summary.notify")


class UsageSampler:
    def __init__(
        self,
        registry: ClusterRegistry,
        live: RegistryLiveSource,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.registry = registry
        self.live = live
        self.clock = clock

    def tick(self) -> list[tuple[str, str | None]]:
        """The (cluster, context) pairs collected in this tick."""
        collected = []
        for entry in self.registry.entries:
            if entry.source_kind == "prometheus":
                continue
            contexts = {d.context for d in entry.digests if d.report == "gpu-hours"}
            for context in sorted(contexts, key=lambda c: c or ""):
                if not self.live.history.wants(entry.name, context, self.clock()):
                    continue
                try:
                    request = LiveRequest(
                        entry.name,
                        context,
                        user=None,
                        channel=None,
                        # A metrics URL has no monitors to read (Prometheus is not sampled).
                        runtime=entry.runtime_allowed and entry.source_kind != "metrics-url",
                    )
                    self.live.summarize(request)
                    collected.append((entry.name, context))
                except InputError as error:
                    log.warning("cannot collect %s for GPU-hours: %s", entry.name, error.message)
                except Exception:  # a bug must not stop the other clusters
                    log.exception("collecting %s for GPU-hours failed", entry.name)
        return collected
