"""What the conversation reads and writes of the notifier's records: when a digest was last
posted (for ``digests``) and an alert's silence (its Silence buttons).

The records live in the shared store (``bot.notify.records.NotifyRecords``, which has this
shape); ``serve`` and the terminal chat hand them to the ``Conversation``. Where no notifier's
records are handed in, no digest was ever posted and nothing was silenced (``NO_NOTICES``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


class PostedSlot(Protocol):
    """A digest slot that was posted: when, and whether late."""

    @property
    def at(self) -> float: ...

    @property
    def late(self) -> bool: ...


class KeptSilence(Protocol):
    @property
    def until(self) -> float: ...


class Notices(Protocol):
    def last_posted(self, cluster: str, digest: str) -> tuple[str, PostedSlot] | None:
        """The latest posted slot of a cluster's digest (its slot key and record), if any."""

    def silence(
        self, cluster: str, rule: str, seconds: float, by: str, now: float | None = None
    ) -> KeptSilence:
        """Silence an alert rule of a cluster for ``seconds`` from ``now``, by a Slack user."""


@dataclass(frozen=True, slots=True)
class Unkept:
    until: float


class NoNotices:
    """No notifier's records: nothing posted; a silence is kept nowhere (no alert was posted
    to be silenced)."""

    def last_posted(self, cluster: str, digest: str) -> tuple[str, PostedSlot] | None:
        return None

    def silence(
        self, cluster: str, rule: str, seconds: float, by: str, now: float | None = None
    ) -> KeptSilence:
        return Unkept((now or 0.0) + seconds)


NO_NOTICES = NoNotices()
