"""What the Slack bot remembers between requests, on top of any ``KeyValueStore``.

- Thread context: the metrics (or the cluster) a thread's follow-ups refer to, so that
  ``ns team-a`` in a thread works without re-pasting. TTL 24 h by default; texts above a size
  cap are not kept (the reply says so). A cluster target also remembers whether real usage
  (nvidia-smi) was asked, so follow-ups keep it.
- Deliveries seen: Slack retries an event (same ``event_id``, header ``X-Slack-Retry-Num``) when
  it did not get a 200 within 3 s; interactions are keyed by (command or action, trigger_id).
  Recording the first sighting atomically (``put_if_absent``) means every replica sharing the
  store answers each delivery once.
- Picker choices: the cluster/context/namespace a user picked in the ephemeral picker, kept
  until they press Confirm (nothing is collected before that).

Every key lives under ``prefix`` (inside the store's own prefix, e.g. Redis's
``REDIS_KEY_PREFIX``) and has a TTL; values are versioned (``bot.store.codec``).
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from bot.store import codec
from bot.store.kv import KeyValueStore

PastedKind = Literal["paste", "file"]


@dataclass(frozen=True, slots=True)
class PastedMetrics:
    """Metrics text given in a thread (pasted, or an attached file/snippet)."""

    text: str
    label: str
    kind: PastedKind
    given_at: float  # Unix time the text was given


@dataclass(frozen=True, slots=True)
class ClusterTarget:
    """A registered cluster a thread's summary came from; follow-ups ask it again (cached).

    ``runtime`` / ``usage``: the summary had vGPU monitor metrics / real usage from nvidia-smi,
    so every follow-up keeps them (answered from the same cached collection).
    """

    cluster: str
    context: str | None
    runtime: bool = False
    usage: bool = False


ThreadSubject = PastedMetrics | ClusterTarget


@dataclass(frozen=True, slots=True)
class PickerChoice:
    cluster: str | None = None
    context: str | None = None
    namespace: str | None = None


def _key_part(value: str) -> str:
    # Slack ids and timestamps are short and safe; anything else is hashed so keys stay bounded.
    if len(value) <= 64 and all(ch.isalnum() or ch in "._-/" for ch in value):
        return value
    return "h" + hashlib.sha256(value.encode("utf-8")).hexdigest()[:32]


class BotState:
    """The bot's own state; ``kv`` is a ``MemoryStore`` locally or Redis for replicas."""

    def __init__(
        self,
        kv: KeyValueStore,
        *,
        prefix: str = "bot:",
        thread_ttl_seconds: float = 24 * 3600.0,
        thread_max_bytes: int = 8 * 1024 * 1024,
        dedupe_ttl_seconds: float = 3600.0,
        picker_ttl_seconds: float = 3600.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.kv = kv
        self.prefix = prefix
        self.thread_ttl_seconds = thread_ttl_seconds
        self.thread_max_bytes = thread_max_bytes
        self.dedupe_ttl_seconds = dedupe_ttl_seconds
        self.picker_ttl_seconds = picker_ttl_seconds
        self._clock = clock

    # -- thread context ------------------------------------------------------------------

    def thread_key(self, kind: str, channel: str, thread_ts: str) -> str:
        """The key of what the bot keeps of ``kind`` for one thread (under ``prefix``)."""
        return f"{self.prefix}{kind}:{_key_part(channel)}:{_key_part(thread_ts)}"

    def _thread_key(self, channel: str, thread_ts: str) -> str:
        return self.thread_key("thread", channel, thread_ts)

    def remember_thread(self, channel: str, thread_ts: str, subject: ThreadSubject) -> bool:
        """Keep ``subject`` for the thread's follow-ups; False when the text is over the cap."""
        if isinstance(subject, PastedMetrics):
            value = codec.encode(
                "thread",
                {
                    "type": "metrics",
                    "text": subject.text,
                    "label": subject.label,
                    "kind": subject.kind,
                    "given_at": subject.given_at,
                },
                compress=True,
            )
        else:
            value = codec.encode(
                "thread",
                {
                    "type": "cluster",
                    "cluster": subject.cluster,
                    "context": subject.context,
                    "runtime": subject.runtime,
                    "usage": subject.usage,
                },
            )
        key = self._thread_key(channel, thread_ts)
        if len(value) > self.thread_max_bytes:
            # An older, smaller paste must not answer for the new one.
            self.kv.delete(key)
            return False
        self.kv.put(key, value, self.thread_ttl_seconds)
        return True

    def thread_subject(self, channel: str, thread_ts: str) -> ThreadSubject | None:
        payload = codec.decode("thread", self.kv.get(self._thread_key(channel, thread_ts)))
        if payload is None:
            return None
        try:
            if payload["type"] == "metrics":
                kind: PastedKind = "file" if payload["kind"] == "file" else "paste"
                return PastedMetrics(
                    text=str(payload["text"]),
                    label=str(payload["label"]),
                    kind=kind,
                    given_at=float(payload["given_at"]),
                )
            if payload["type"] == "cluster":
                context = payload.get("context")
                return ClusterTarget(
                    cluster=str(payload["cluster"]),
                    context=None if context is None else str(context),
                    runtime=bool(payload.get("runtime", False)),
                    # Entries written before real usage was remembered have no "usage": they
                    # were allocation threads (the codec version stays 1, so replicas of both
                    # releases can share one store).
                    usage=bool(payload.get("usage", False)),
                )
        except (KeyError, TypeError, ValueError):
            return None
        return None

    def _previous_key(self, channel: str, thread_ts: str) -> str:
        return f"{self.prefix}thread-previous:{_key_part(channel)}:{_key_part(thread_ts)}"

    def remember_previous_snapshot(self, channel: str, thread_ts: str, snapshot: bytes) -> None:
        """Keep the snapshot of the paste a newer one replaced, for ``changes`` in the thread
        (``core.history.snapshot.encode_snapshot`` bytes, already compressed)."""
        self.kv.put(self._previous_key(channel, thread_ts), snapshot, self.thread_ttl_seconds)

    def previous_snapshot(self, channel: str, thread_ts: str) -> bytes | None:
        return self.kv.get(self._previous_key(channel, thread_ts))

    # -- deliveries seen -----------------------------------------------------------------

    def first_sighting(self, delivery_id: str) -> bool:
        """True the first time ``delivery_id`` is seen (on any replica sharing the store)."""
        key = f"{self.prefix}seen:{_key_part(delivery_id)}"
        return self.kv.put_if_absent(key, b"1", self.dedupe_ttl_seconds)

    # -- App Home ------------------------------------------------------------------------

    def _home_key(self, user: str) -> str:
        return f"{self.prefix}home:{_key_part(user)}"

    def home_published_at(self, user: str) -> float | None:
        """When ``user``'s Home tab was last published (on any replica), if still known."""
        payload = codec.decode("home", self.kv.get(self._home_key(user)))
        at = payload.get("published_at") if payload is not None else None
        return float(at) if isinstance(at, int | float) and not isinstance(at, bool) else None

    def remember_home_published(self, user: str, at: float, ttl_seconds: float) -> None:
        self.kv.put(self._home_key(user), codec.encode("home", {"published_at": at}), ttl_seconds)

    def claim_home_refresh(self, user: str, ttl_seconds: float) -> bytes | None:
        """A token while this replica refreshes ``user``'s Home tab; None when another one
        is doing it right now (two opens at once publish once)."""
        token = secrets.token_hex(8).encode("ascii")
        key = f"{self.prefix}home-lock:{_key_part(user)}"
        return token if self.kv.put_if_absent(key, token, ttl_seconds) else None

    def release_home_refresh(self, user: str, token: bytes) -> None:
        self.kv.delete_if_equals(f"{self.prefix}home-lock:{_key_part(user)}", token)

    # -- picker choices ------------------------------------------------------------------

    def _picker_key(self, user: str, channel: str) -> str:
        return f"{self.prefix}picker:{_key_part(channel)}:{_key_part(user)}"

    def remember_picker(self, user: str, channel: str, choice: PickerChoice) -> None:
        value = codec.encode(
            "picker",
            {"cluster": choice.cluster, "context": choice.context, "namespace": choice.namespace},
        )
        self.kv.put(self._picker_key(user, channel), value, self.picker_ttl_seconds)

    def picker_choice(self, user: str, channel: str) -> PickerChoice:
        payload = codec.decode("picker", self.kv.get(self._picker_key(user, channel)))
        if payload is None:
            return PickerChoice()

        def text(name: str) -> str | None:
            value = payload.get(name)
            return value if isinstance(value, str) and value else None

        return PickerChoice(
            cluster=text("cluster"), context=text("context"), namespace=text("namespace")
        )

    def forget_picker(self, user: str, channel: str) -> None:
        self.kv.delete(self._picker_key(user, channel))

    def now(self) -> float:
        return self._clock()
