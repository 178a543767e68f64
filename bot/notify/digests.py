"""Posting each digest slot exactly once, whichever replica gets there first.

Every replica calls ``DigestRunner.tick`` every few seconds. For each declared digest whose
slot is due (its time has come, less than an hour ago), a replica takes the slot's lease, looks
at the slot's record, and if nothing was sent yet, composes the digest, marks the slot
``sending`` (only while the record is still what it read: a failover can lose a lease, and two
replicas then compose the same slot, but only one marks it), posts, and marks it ``posted``
(``bot.notify.records``). A replica that stopped
while holding the lease loses it when the lease expires and the next one takes over; one that
comes up after the slot's time posts it late, saying so, until the hour is over.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.clusters.registry import ClusterEntry, ClusterRegistry
from bot.conversation.clusters import LiveSource
from bot.conversation.service import Conversation
from bot.notify.digest_message import DigestPost, compose_digest
from bot.notify.lease import Lease, replica_id
from bot.notify.records import NotifyRecords, SlotMark, StoredSlot
from bot.slack.delivery import Delivery
from core.notify.schedule import LATE_WINDOW_SECONDS, Digest, Slot, due_slot, is_late

log = logging.getLogger("hami_summary.notify")


@dataclass(frozen=True, slots=True)
class SlotOutcome:
    cluster: str
    digest: str
    slot: str
    # posted, posted-late, busy (another replica holds it), done (recorded already), failed,
    # uncertain (Slack's answer to the post never came), missed, slack-unreachable,
    # unreplicated (the sending mark could be lost in a Redis failover: not posted yet), error
    outcome: str


class DigestRunner:
    def __init__(
        self,
        registry: ClusterRegistry,
        records: NotifyRecords,
        conversation: Conversation,
        live: LiveSource,
        client: WebClient,
        *,
        lease_seconds: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.registry = registry
        self.records = records
        self.conversation = conversation
        self.live = live
        self.client = client
        self.lease_seconds = lease_seconds
        self.clock = clock
        self.delivery = Delivery(client, log)

    def tick(self) -> list[SlotOutcome]:
        outcomes = []
        for entry in self.registry.entries:
            for digest in entry.digests:
                slot = due_slot(digest.schedule, self.clock())
                if slot is None:
                    continue
                try:
                    outcome = self.run_slot(entry, digest, slot)
                except Exception:  # a bug must not stop the other digests
                    log.exception("digest %s of %s failed", slot.key, entry.name)
                    outcome = "error"
                outcomes.append(SlotOutcome(entry.name, digest.name, slot.key, outcome))
        return outcomes

    def run_slot(self, entry: ClusterEntry, digest: Digest, slot: Slot) -> str:
        if self.records.slot(entry.name, digest.name, slot.key).blocks_posting(self.clock()):
            return "done"
        lease = Lease(
            self.records.kv,
            self.records.digest_lease_key(entry.name, digest.name, slot.key),
            self.lease_seconds,
        )
        if not lease.acquire():
            return "busy"
        with lease:
            # The holder before us may have finished between our look and our lease.
            stored = self.records.slot(entry.name, digest.name, slot.key)
            if stored.blocks_posting(self.clock()):
                return "done"
            return self._post(entry, digest, slot, lease, stored)

    def _post(
        self, entry: ClusterEntry, digest: Digest, slot: Slot, lease: Lease, stored: StoredSlot
    ) -> str:
        try:
            self.client.auth_test()
        except Exception as error:  # nothing was sent: the next tick tries again
            log.warning(
                "digest %s of %s waits: Slack is not reachable (%s)", slot.key, entry.name, error
            )
            return "slack-unreachable"
        now = self.clock()
        late_at = now if is_late(slot, now) else None
        post = compose_digest(
            self.conversation,
            self.live,
            entry.name,
            digest,
            slot,
            previous=self.records.previous_snapshot(entry.name, digest.name),
            late_at=late_at,
        )
        if self.clock() - slot.due_at >= LATE_WINDOW_SECONDS:
            log.warning(
                "digest %s of %s missed: its hour was over before it was ready",
                slot.key,
                entry.name,
            )
            return "missed"
        if not lease.held():
            return "busy"  # expired while composing (a stalled store); the new holder posts
        mark = SlotMark("sending", self.clock(), replica_id(), late=late_at is not None)
        claimed = self.records.claim_slot(entry.name, digest.name, slot.key, mark, stored)
        if claimed == "changed":
            log.info(
                "digest %s of %s: another replica marked it while this one composed it "
                "(a lease lost in a Redis failover); leaving it to that one",
                slot.key,
                entry.name,
            )
            return "done"
        if claimed == "unreplicated":
            # Posting now, a Redis failover could lose the mark and another replica post the
            # digest again. Nothing was sent: the next tick tries again (late, and says so).
            self.records.release_claim(entry.name, digest.name, slot.key, mark)
            log.warning(
                "digest %s of %s waits: its sending mark did not reach a Redis replica in "
                "time (or Redis is away), and a failover could lose it; trying again at the "
                "next tick",
                slot.key,
                entry.name,
            )
            return "unreplicated"
        return self._send(entry, digest, slot, post, mark)

    def _send(
        self, entry: ClusterEntry, digest: Digest, slot: Slot, post: DigestPost, mark: SlotMark
    ) -> str:
        try:
            ts = self.delivery.post(digest.channel, None, post.top)
        except SlackApiError as error:
            # Slack answered: nothing was posted, so a later tick may try again.
            code = str(error.response.get("error"))
            self._failed(entry, digest, slot, mark, code)
            return "failed"
        except Exception:
            log.exception(
                "digest %s of %s: Slack's answer to the post never came; not posting "
                "it again (it may be there already)",
                slot.key,
                entry.name,
            )
            return "uncertain"
        if ts is None:
            self._failed(entry, digest, slot, mark, "the bot may not post in the channel")
            return "failed"
        posted = SlotMark("posted", self.clock(), mark.by, ts, mark.late)
        self.records.mark_slot(entry.name, digest.name, slot.key, posted)
        log.info(
            "posted digest %s of %s to %s%s",
            slot.key,
            entry.name,
            digest.channel,
            " (late)" if mark.late else "",
        )
        self._thread(entry, digest, post, ts)
        return "posted-late" if mark.late else "posted"

    def _failed(
        self, entry: ClusterEntry, digest: Digest, slot: Slot, mark: SlotMark, reason: str
    ) -> None:
        log.warning(
            "digest %s of %s not posted to %s: %s (invite the bot to the channel, or "
            "fix the registry at %s); trying again in 5 min",
            slot.key,
            entry.name,
            digest.channel,
            reason,
            digest.defined_at,
        )
        failed = SlotMark("failed", self.clock(), mark.by, late=mark.late, error=reason)
        self.records.mark_slot(entry.name, digest.name, slot.key, failed)

    def _thread(self, entry: ClusterEntry, digest: Digest, post: DigestPost, ts: str) -> None:
        """The changes and files in the digest's thread; the digest stands without them."""
        try:
            for message in post.thread:
                self.delivery.post(digest.channel, ts, message)
            if post.files:
                self.delivery.upload(digest.channel, ts, post.files)
        except Exception:
            log.exception("digest of %s: posting its thread failed", entry.name)
        if post.snapshot is not None:
            self.records.keep_snapshot(entry.name, digest.name, post.snapshot)
