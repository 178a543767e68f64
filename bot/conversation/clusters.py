"""What the conversation needs from live clusters, as a small interface.

``bot.live.RegistryLiveSource`` implements it on top of the cluster registry, the scrape
cache and the rate limiter (with an empty registry when none is configured).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from bot.clusters.errors import nvidia_smi_not_allowed, runtime_not_allowed
from bot.conversation.replies import ClusterOption
from core.history.snapshot import Snapshot
from core.model import Summary
from core.pending.describe import PodDescription
from core.pending.pending_list import PendingCount

REGISTRY_HINT = (
    "No clusters are registered for this channel yet. An operator adds them to the cluster "
    "registry (the YAML file named by HAMI_CLUSTERS_FILE) with the channels and users allowed "
    "to query each one. Meanwhile, paste HAMi /metrics text (or attach a .prom/.txt file) in a "
    "message that mentions me, and I will summarise it."
)


@dataclass(frozen=True, slots=True)
class LiveRequest:
    cluster: str
    context: str | None
    user: str | None  # None: the local operator in chat mode (sees every cluster)
    channel: str | None
    namespace: str | None = None
    node: str | None = None
    runtime: bool = False
    fresh: bool = False
    usage: bool = False  # also exec nvidia-smi in the pods (real usage)


@dataclass(frozen=True, slots=True)
class LiveResult:
    summary: Summary
    age_seconds: float | None
    context: str | None
    notes: tuple[str, ...] = ()  # how the metrics were reached (fallback routes, skipped parts)
    # The registry entry allows nvidia-smi exec (real usage can be offered for this cluster).
    usage_allowed: bool = False
    # The pods pending on HAMi's resources at scrape time (None: not known).
    pending: PendingCount | None = None


@dataclass(frozen=True, slots=True)
class LiveOutcome:
    """One cluster of a batch (``LiveSource.summarize_many``): its result, why it could not be
    collected, or that it did not answer within the batch's wait (it keeps collecting, and the
    scrape cache gets its result)."""

    request: LiveRequest
    result: LiveResult | None = None
    problem: str | None = None
    timed_out: bool = False


@dataclass(frozen=True, slots=True)
class UsageHistory:
    """The states a GPU-hours report integrates, oldest first, with the spacing they were
    read at (Prometheus range queries) or None (the snapshots the bot keeps, whose usual
    spacing sets the gap limit). ``pod_snapshots``: where the pods are counted from when
    ``snapshots`` do not all hold them (the bot keeps pods with its recent snapshots only)."""

    snapshots: list[Snapshot]
    step_seconds: float | None = None
    pod_snapshots: list[Snapshot] | None = None


class LiveSource(Protocol):
    def clusters_for(self, user: str | None, channel: str | None) -> list[ClusterOption]:
        """The clusters ``user`` may query in ``channel`` (every one when user is None)."""

    def summarize(self, request: LiveRequest) -> LiveResult:
        """A summary of the cluster; raises ``core.errors.InputError`` with the reason."""

    def summarize_many(
        self, requests: Sequence[LiveRequest], *, wait_seconds: float
    ) -> list[LiveOutcome]:
        """Every request collected in parallel through the scrape cache, one outcome each (in
        order), within ``wait_seconds`` in all: a slow cluster never holds up the others. The
        batch counts once against the requester's rate limit, and only if it scrapes."""

    def setup_hint(self) -> str:
        """What to do when ``clusters_for`` is empty."""

    def access_notes(self, user: str | None, channel: str | None) -> tuple[str, ...]:
        """For whoever runs the bot: access rules that could not be checked for ``user``
        (e.g. Slack user groups without the ``usergroups:read`` scope). Empty when all is well."""

    def snapshot_before(self, request: LiveRequest, moment: float) -> Snapshot | None:
        """The cluster's kept snapshot taken at or before ``moment`` (else its oldest), for a
        requester who may query it; None without history. Raises ``InputError`` when the
        history cannot be read (Prometheus unreachable, nothing kept that far back)."""

    def kept_snapshots(self, request: LiveRequest, series_hint: int = 0) -> list[Snapshot]:
        """Every kept snapshot of the cluster, oldest first, for a requester who may query it.
        ``series_hint``: how many series one collection of it holds (history read back from
        Prometheus asks for fewer points of a larger cluster)."""

    def usage_history(self, request: LiveRequest, since: float, until: float) -> UsageHistory:
        """The cluster's states over [``since``, ``until``] for a requester who may query it:
        kept snapshots, or range queries at a step chosen from the span for a Prometheus
        source. Raises ``InputError`` when Prometheus cannot answer."""

    def pending_pods(self, request: LiveRequest) -> tuple[PodDescription, ...]:
        """The pods of the cluster pending on HAMi's resources, in ``request.namespace`` (every
        namespace its registry entry allows when None), with their events. Counts against the
        requester's rate limit like a scrape; raises ``InputError`` with the reason."""

    def pod(self, request: LiveRequest, name: str) -> PodDescription:
        """One pod and its events, in ``request.namespace`` (else the one namespace holding a
        pod of that name); ``InputError`` when it cannot be read or may not be."""


def nvidia_smi_refusal(cluster: str, defined_at: str) -> str:
    """Why ``usage`` is refused for a cluster whose registry entry does not allow nvidia-smi:
    the collector's own message (``bot.clusters.errors``), then what to ask instead."""
    return (
        nvidia_smi_not_allowed(cluster, defined_at)
        + " Ask without `usage` for the allocation summary."
    )


def runtime_refusal(cluster: str, defined_at: str) -> str:
    """Why ``runtime`` is refused for a cluster whose registry entry does not allow vGPU
    monitor scrapes: the collector's own message, then what to ask instead."""
    return (
        runtime_not_allowed(cluster, defined_at)
        + " Ask without `runtime` for the allocation summary."
    )
