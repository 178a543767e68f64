"""The one storage interface the bot's state goes through.

Every key has a TTL: the bot never keeps state forever. Values are bytes; callers version and
encode them (see ``bot.store.codec``) so an upgrade never misreads an older entry.
"""

from __future__ import annotations

from typing import Literal, Protocol

# What a durable compare-and-set did: ``kept`` (written, and no failover can lose it),
# ``unreplicated`` (written, but a failover could lose it: the caller takes it back), or
# ``changed`` (the key no longer held what the caller read: nothing written).
DurableWrite = Literal["kept", "unreplicated", "changed"]


class KeyValueStore(Protocol):
    def get(self, key: str) -> bytes | None:
        """The value, or None when absent or expired."""

    def put(self, key: str, value: bytes, ttl_seconds: float) -> None:
        """Store ``value`` under ``key`` for ``ttl_seconds``."""

    def put_durably(self, key: str, value: bytes, ttl_seconds: float) -> bool:
        """``put``, then wait (briefly) until a replica of the Redis holding ``key`` has it.

        True when no failover can lose the write: a replica acknowledged it, or none is
        connected (a failover needs one to promote). False when it may be lost: a connected
        replica did not acknowledge it in time, or the store answers from process memory.
        The value is written either way. For the records that keep a post from being made
        twice (a digest slot's ``sending``, alert states).
        """

    def replace_durably(
        self, key: str, expected: bytes | None, value: bytes, ttl_seconds: float
    ) -> DurableWrite:
        """``put_durably``, only while the key holds ``expected`` (None: while it is absent).

        The step that decides who posts: two replicas that both read an empty digest slot (a
        failover lost the lease one of them held, or both worked from process memory while
        Redis was away) cannot both mark it ``sending``. From process memory (Redis away) it
        writes nothing and answers ``unreplicated``: the other replicas could not see it.
        """

    def replace_if_equals(
        self, key: str, expected: bytes, value: bytes, ttl_seconds: float
    ) -> bool:
        """Store ``value`` only while the key holds ``expected``; True when it was stored.

        Putting back what one's own ``sending`` record replaced, when nothing was sent after
        all. Not durable: like ``delete_if_equals``, a take-back that a failover loses leaves
        the ``sending``, which counts as sent (late or missing, never twice). From process
        memory (Redis away) it is kept for Redis as a compare-and-set, never as a plain write.
        """

    def put_if_absent(self, key: str, value: bytes, ttl_seconds: float) -> bool:
        """Store only when the key is absent; True when this call stored it (locks, dedupe)."""

    def delete(self, key: str) -> None:
        """Remove the key if present."""

    def delete_if_equals(self, key: str, value: bytes) -> bool:
        """Remove the key only while it still holds ``value`` (releasing one's own lock)."""

    def incr(self, key: str, ttl_seconds: float) -> int:
        """Add one to a counter; a new counter starts at 1 and expires after ``ttl_seconds``."""

    def ping(self) -> bool:
        """True when the backing store answers."""

    def extend_if_equals(self, key: str, value: bytes, ttl_seconds: float) -> bool:
        """Reset the key's TTL to ``ttl_seconds`` only while it still holds ``value`` (renewing
        one's own lock); False when the key is absent or holds something else."""
