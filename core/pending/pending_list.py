"""The pods pending on HAMi's resources, grouped by the reason that holds each one back."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from core.pending.describe import PodDescription
from core.pending.events import NoNodeFits
from core.pending.story import PodStory

NOT_REACHED = "did not reach HAMi"
NO_NODE_FITS = "no node fits (no reason code)"


@dataclass(frozen=True, slots=True)
class PendingPod:
    story: PodStory
    reason: str  # a reason code, NOT_REACHED or NO_NODE_FITS
    waited_seconds: float | None


@dataclass(frozen=True, slots=True)
class ReasonGroup:
    reason: str
    pods: int
    longest_wait_seconds: float | None


@dataclass(frozen=True, slots=True)
class PendingList:
    where: str
    pods: tuple[PendingPod, ...]  # longest waiting first
    groups: tuple[ReasonGroup, ...]  # most pods first


def main_reason(story: PodStory) -> str:
    """The reason that names most nodes; without a code, whether HAMi saw the pod at all."""
    if story.reasons:
        return story.reasons[0].code
    if any(isinstance(reading.reading, NoNodeFits) for reading in story.events):
        return NO_NODE_FITS
    return NOT_REACHED if not story.reached_hami else NO_NODE_FITS


def pending_list(stories: Sequence[PodStory], *, where: str, now: datetime) -> PendingList:
    pods = []
    for story in stories:
        since = story.pod.pending_since
        waited = (now - since).total_seconds() if since is not None else None
        pods.append(PendingPod(story, main_reason(story), waited))
    pods.sort(key=lambda p: (-(p.waited_seconds or 0.0), p.story.pod.ref))
    counts: dict[str, list[PendingPod]] = {}
    for pod in pods:
        counts.setdefault(pod.reason, []).append(pod)
    groups = [
        ReasonGroup(
            reason,
            len(members),
            max((m.waited_seconds for m in members if m.waited_seconds is not None), default=None),
        )
        for reason, members in counts.items()
    ]
    groups.sort(key=lambda g: (-g.pods, g.reason))
    return PendingList(where, tuple(pods), tuple(groups))


@dataclass(frozen=True, slots=True)
class PendingCount:
    """How many pods wait for HAMi's resources, and since when the longest has: read with
    each scrape of a cluster (no events), for the summary's attention list and App Home."""

    pods: int
    oldest_since: datetime | None

    def longest_wait_seconds(self, now: datetime) -> float | None:
        return None if self.oldest_since is None else (now - self.oldest_since).total_seconds()


def count_pending(pods: Sequence[PodDescription]) -> PendingCount:
    since = [pod.pending_since for pod in pods if pod.pending_since is not None]
    return PendingCount(len(pods), min(since, default=None))
