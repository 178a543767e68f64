"""What the notifier keeps in the shared store: digest slots, alert states and silences.

Keys live under ``notify:`` (inside the store's prefix), each with a TTL; values are versioned
(``bot.store.codec``), so an entry another release wrote reads as absent, never misread.

A digest slot's record is what makes it "never two": ``sending`` is written just before the
message goes to Slack, ``posted`` (with the message's ts) right after. A replica that finds
either leaves the slot alone, even when the one that wrote ``sending`` died before it heard
Slack's answer: then nobody knows whether Slack has the message, and posting again could make
two. ``sending`` and the alert states are written durably (``KeyValueStore.put_durably``): a
Redis failover promotes a replica, and a record the replica never got would be gone.
``sending`` is also written only while the record still holds what its writer read
(``KeyValueStore.replace_durably``): leases keep two replicas from composing the same slot,
but a failover can lose a lease, and while Redis is away each replica holds its own in memory;
the compare-and-set is what leaves one of them posting.

An alert's post has the same kind of record (``AlertPost``), one per rule: ``sending`` written
durably before the firing or resolved message goes out, ``posted`` after. The rule's state is
written at the end of the evaluation, so a failover can lose it after the post; the post
record then still says what Slack was last sent, and the message is not sent again.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal

from bot.store import codec
from bot.store.keys import key_part
from bot.store.kv import DurableWrite, KeyValueStore
from core.history.snapshot import Snapshot, SnapshotFormatError, decode_snapshot, encode_snapshot
from core.notify.rule_state import RuleState

SlotState = Literal["sending", "posted", "failed"]
PostState = Literal["sending", "posted"]

# A slot's record outlives the hour in which the slot can still be posted.
SLOT_TTL_SECONDS = 2 * 86_400.0
# The previous digest's snapshot: long enough for a weekly digest.
DIGEST_SNAPSHOT_TTL_SECONDS = 15 * 86_400.0
ALERT_STATE_TTL_SECONDS = 7 * 86_400.0
# Slack refused a digest (the bot not in the channel, say): tried again this much later.
FAILED_RETRY_SECONDS = 300.0


@dataclass(frozen=True, slots=True)
class SlotMark:
    """What is written for one digest slot: sending, posted or failed, when and by whom."""

    state: SlotState
    at: float  # when the state was written
    by: str = ""  # the replica
    ts: str | None = None  # the posted message
    late: bool = False
    error: str | None = None

    def blocks_posting(self, now: float) -> bool:
        """Whether this mark means the slot must not be posted (now)."""
        return self.state != "failed" or now - self.at < FAILED_RETRY_SECONDS


@dataclass(frozen=True, slots=True)
class StoredSlot:
    """A slot's record as read: its mark (None when absent or unreadable) and the bytes behind
    it, which the slot must still hold for a ``sending`` mark to be written (``claim_slot``)."""

    mark: SlotMark | None
    stored: bytes | None

    def blocks_posting(self, now: float) -> bool:
        return self.mark is not None and self.mark.blocks_posting(now)


@dataclass(frozen=True, slots=True)
class RuleRecord:
    """A rule's state, and what was last posted about it."""

    state: RuleState = field(default_factory=RuleState)
    posted_firing: bool = False  # a firing message is out and not resolved yet
    ts: str | None = None  # that message, in ``channel``
    channel: str | None = None
    fired_at: float | None = None  # when the posted firing began


@dataclass(frozen=True, slots=True)
class AlertPost:
    """The last message about a rule sent to Slack, or being sent: its firing message
    (``firing``) or its resolution."""

    firing: bool
    state: PostState
    at: float  # when the record was written
    by: str = ""  # the replica
    ts: str | None = None  # the firing message, in ``channel``
    channel: str | None = None
    fired_at: float | None = None  # when the posted firing began


@dataclass(frozen=True, slots=True)
class StoredPost:
    """A rule's post record as read, and the bytes behind it (see ``StoredSlot``)."""

    post: AlertPost | None
    stored: bytes | None


@dataclass(frozen=True, slots=True)
class ClusterAlerts:
    evaluated_at: float | None = None
    rules: dict[str, RuleRecord] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Silence:
    until: float
    by: str  # Slack user id


class NotifyRecords:
    def __init__(self, kv: KeyValueStore) -> None:
        self.kv = kv
        self._base = "notify"

    def _key(self, kind: str, *parts: str) -> str:
        return ":".join([self._base, kind, *(key_part(p) for p in parts)])

    # -- digests ---------------------------------------------------------------------------

    def digest_lease_key(self, cluster: str, digest: str, slot: str) -> str:
        return self._key("digest-lease", cluster, digest, slot)

    def slot(self, cluster: str, digest: str, slot: str) -> StoredSlot:
        stored = self.kv.get(self._key("digest-slot", cluster, digest, slot))
        return StoredSlot(_slot_mark(codec.decode("digest-slot", stored)), stored)

    def claim_slot(
        self, cluster: str, digest: str, slot: str, sending: SlotMark, over: StoredSlot
    ) -> DurableWrite:
        """Mark the slot ``sending``, durably, only while it still holds ``over`` (what the
        caller read): ``changed`` means another replica marked it first."""
        return self.kv.replace_durably(
            self._key("digest-slot", cluster, digest, slot),
            over.stored,
            _encoded_slot(sending),
            SLOT_TTL_SECONDS,
        )

    def release_claim(self, cluster: str, digest: str, slot: str, sending: SlotMark) -> None:
        """Take back our ``sending`` (nothing was sent), unless another replica's replaced it."""
        self.kv.delete_if_equals(
            self._key("digest-slot", cluster, digest, slot), _encoded_slot(sending)
        )

    def mark_slot(self, cluster: str, digest: str, slot: str, record: SlotMark) -> None:
        """Write what became of the slot after its ``sending`` (``posted`` or ``failed``)."""
        encoded = _encoded_slot(record)
        self.kv.put(self._key("digest-slot", cluster, digest, slot), encoded, SLOT_TTL_SECONDS)
        if record.state == "posted":
            last = {"slot": slot, **_slot_payload(record)}
            self.kv.put(
                self._key("digest-last", cluster, digest),
                codec.encode("digest-last", last),
                DIGEST_SNAPSHOT_TTL_SECONDS,
            )

    def last_posted(self, cluster: str, digest: str) -> tuple[str, SlotMark] | None:
        """The latest posted slot of a digest and its record (for listings)."""
        payload = codec.decode(
            "digest-last", self.kv.get(self._key("digest-last", cluster, digest))
        )
        if payload is None:
            return None
        try:
            record = SlotMark(
                "posted",
                float(payload["at"]),
                str(payload.get("by") or ""),
                payload.get("ts"),
                bool(payload.get("late")),
            )
            return str(payload["slot"]), record
        except (KeyError, TypeError, ValueError):
            return None

    def previous_snapshot(self, cluster: str, digest: str) -> Snapshot | None:
        data = self.kv.get(self._key("digest-snapshot", cluster, digest))
        if data is None:
            return None
        try:
            return decode_snapshot(data)
        except SnapshotFormatError:
            return None

    def keep_snapshot(self, cluster: str, digest: str, snapshot: Snapshot) -> None:
        self.kv.put(
            self._key("digest-snapshot", cluster, digest),
            encode_snapshot(snapshot),
            DIGEST_SNAPSHOT_TTL_SECONDS,
        )

    # -- alerts ----------------------------------------------------------------------------

    def alert_lease_key(self, cluster: str) -> str:
        return self._key("alerts-lease", cluster)

    def alerts(self, cluster: str) -> ClusterAlerts:
        payload = codec.decode("alerts", self.kv.get(self._key("alerts", cluster)))
        if payload is None:
            return ClusterAlerts()
        rules: dict[str, RuleRecord] = {}
        for name, raw in (payload.get("rules") or {}).items():
            try:
                rules[str(name)] = RuleRecord(
                    state=RuleState.from_json(raw["state"]),
                    posted_firing=bool(raw["posted_firing"]),
                    ts=raw.get("ts"),
                    channel=raw.get("channel"),
                    fired_at=raw.get("fired_at"),
                )
            except (KeyError, TypeError, ValueError):
                continue  # another release's shape: that rule starts afresh
        evaluated = payload.get("evaluated_at")
        return ClusterAlerts(
            float(evaluated) if isinstance(evaluated, int | float) else None, rules
        )

    def keep_alerts(self, cluster: str, alerts: ClusterAlerts) -> bool:
        """Write the alert states durably; False when a failover could lose them."""
        payload = {
            "evaluated_at": alerts.evaluated_at,
            "rules": {
                name: {
                    "state": r.state.to_json(),
                    "posted_firing": r.posted_firing,
                    "ts": r.ts,
                    "channel": r.channel,
                    "fired_at": r.fired_at,
                }
                for name, r in alerts.rules.items()
            },
        }
        return self.kv.put_durably(
            self._key("alerts", cluster),
            codec.encode("alerts", payload, compress=True),
            ALERT_STATE_TTL_SECONDS,
        )

    def alert_post(self, cluster: str, rule: str) -> AlertPost | None:
        return self.stored_alert_post(cluster, rule).post

    def stored_alert_post(self, cluster: str, rule: str) -> StoredPost:
        stored = self.kv.get(self._key("alert-post", cluster, rule))
        return StoredPost(_alert_post(codec.decode("alert-post", stored)), stored)

    def claim_alert_post(
        self, cluster: str, rule: str, sending: AlertPost, over: StoredPost
    ) -> DurableWrite:
        """Write the rule's ``sending`` post record, durably, only while it still holds
        ``over`` (what the caller read): ``changed`` means another replica is posting."""
        return self.kv.replace_durably(
            self._key("alert-post", cluster, rule),
            over.stored,
            _encoded_post(sending),
            ALERT_STATE_TTL_SECONDS,
        )

    def mark_alert_post(self, cluster: str, rule: str, post: AlertPost) -> None:
        """Write the rule's post record (``posted``, once Slack has the message)."""
        self.kv.put(
            self._key("alert-post", cluster, rule), _encoded_post(post), ALERT_STATE_TTL_SECONDS
        )

    def restore_alert_post(
        self, cluster: str, rule: str, sending: AlertPost, previous: StoredPost
    ) -> None:
        """Put back the record our ``sending`` replaced, when nothing was sent after all (and
        only while the record is still ours)."""
        key = self._key("alert-post", cluster, rule)
        if previous.stored is None:
            self.kv.delete_if_equals(key, _encoded_post(sending))
        else:
            self.kv.replace_if_equals(
                key, _encoded_post(sending), previous.stored, ALERT_STATE_TTL_SECONDS
            )

    # -- silences --------------------------------------------------------------------------

    def silence(
        self, cluster: str, rule: str, seconds: float, by: str, now: float | None = None
    ) -> Silence:
        start = time.time() if now is None else now
        silence = Silence(start + seconds, by)
        self.kv.put(
            self._key("silence", cluster, rule),
            codec.encode("silence", {"until": silence.until, "by": by}),
            seconds,
        )
        return silence

    def active_silence(self, cluster: str, rule: str, now: float) -> Silence | None:
        payload = codec.decode("silence", self.kv.get(self._key("silence", cluster, rule)))
        if payload is None:
            return None
        try:
            silence = Silence(float(payload["until"]), str(payload["by"]))
        except (KeyError, TypeError, ValueError):
            return None
        return silence if silence.until > now else None


def _slot_payload(record: SlotMark) -> dict[str, Any]:
    return {
        "state": record.state,
        "at": record.at,
        "by": record.by,
        "ts": record.ts,
        "late": record.late,
        "error": record.error,
    }


def _encoded_slot(record: SlotMark) -> bytes:
    return codec.encode("digest-slot", _slot_payload(record))


def _slot_mark(payload: dict[str, Any] | None) -> SlotMark | None:
    if payload is None:
        return None
    try:
        return SlotMark(
            state=payload["state"],
            at=float(payload["at"]),
            by=str(payload.get("by") or ""),
            ts=payload.get("ts"),
            late=bool(payload.get("late")),
            error=payload.get("error"),
        )
    except (KeyError, TypeError, ValueError):
        return None


def _encoded_post(post: AlertPost) -> bytes:
    return codec.encode(
        "alert-post",
        {
            "firing": post.firing,
            "state": post.state,
            "at": post.at,
            "by": post.by,
            "ts": post.ts,
            "channel": post.channel,
            "fired_at": post.fired_at,
        },
    )


def _alert_post(payload: dict[str, Any] | None) -> AlertPost | None:
    if payload is None:
        return None
    try:
        state = payload["state"]
        if state not in ("sending", "posted"):
            return None
        return AlertPost(
            firing=bool(payload["firing"]),
            state=state,
            at=float(payload["at"]),
            by=str(payload.get("by") or ""),
            ts=payload.get("ts"),
            channel=payload.get("channel"),
            fired_at=payload.get("fired_at"),
        )
    except (KeyError, TypeError, ValueError):
        return None
