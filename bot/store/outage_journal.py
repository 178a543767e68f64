"""What was written to process memory while Redis was away, to be copied to Redis when it is back.

Thread context and picker choices written during an outage live only in the replica that took
them; without a copy, the thread is forgotten the moment Redis answers again (every read goes
to Redis then). The journal keeps the last write of each key (a value with its expiry or a
deletion, either of them possibly only while the key still holds a given value), bounded in
entries and bytes: past either bound the oldest entries are dropped and counted, so a long
outage costs bounded memory and loses only its oldest writes.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

DEFAULT_MAX_ENTRIES = 10_000
DEFAULT_MAX_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class JournalEntry:
    """The last write of one key: ``value`` None for a deletion; ``only_if`` limits the write
    or deletion to while the key holds that value (a released lock, a digest mark or an alert's
    post record taken back); ``expires_at`` on the clock."""

    key: str
    value: bytes | None
    expires_at: float
    only_if: bytes | None = None


class OutageJournal:
    """Last write per key, oldest first, bounded by ``max_entries`` and ``max_bytes``."""

    def __init__(
        self,
        clock: Callable[[], float],
        *,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        self._clock = clock
        self._max_entries = max_entries
        self._max_bytes = max_bytes
        self._entries: OrderedDict[str, JournalEntry] = OrderedDict()
        self._bytes = 0
        self._dropped = 0
        self._lock = threading.Lock()

    def record_put(self, key: str, value: bytes, ttl_seconds: float) -> None:
        self._record(JournalEntry(key, value, self._clock() + ttl_seconds))

    def record_delete(self, key: str) -> None:
        # A deletion matters for as long as the value it removes could live; an hour covers
        # the bot's thread and picker keys' usual lifetimes well enough to be worth replaying.
        self._record(JournalEntry(key, None, self._clock() + 3600.0))

    def record_delete_if_equals(self, key: str, value: bytes) -> None:
        """A compare-and-delete: copied as one, so it never removes what another replica wrote
        to the key meanwhile."""
        self._record(JournalEntry(key, None, self._clock() + 3600.0, only_if=value))

    def record_put_if_equals(
        self, key: str, expected: bytes, value: bytes, ttl_seconds: float
    ) -> None:
        """A compare-and-set: copied as one, so it never overwrites what another replica
        wrote to the key meanwhile."""
        self._record(JournalEntry(key, value, self._clock() + ttl_seconds, only_if=expected))

    def _record(self, entry: JournalEntry) -> None:
        with self._lock:
            self._discard(entry.key)
            self._entries[entry.key] = entry
            self._bytes += _size(entry)
            while self._entries and (
                len(self._entries) > self._max_entries or self._bytes > self._max_bytes
            ):
                oldest = next(iter(self._entries))
                self._discard(oldest)
                self._dropped += 1

    def _discard(self, key: str) -> None:
        old = self._entries.pop(key, None)
        if old is not None:
            self._bytes -= _size(old)

    def take(self) -> tuple[list[JournalEntry], int]:
        """Every live entry, oldest first, and how many were dropped; the journal is emptied."""
        with self._lock:
            entries = list(self._entries.values())
            dropped = self._dropped
            self._entries.clear()
            self._bytes = 0
            self._dropped = 0
        now = self._clock()
        return [e for e in entries if e.expires_at > now], dropped

    def give_back(self, entries: list[JournalEntry], dropped: int = 0) -> None:
        """Put back entries a replay could not write (and the count of those dropped before);
        newer writes of the same keys win."""
        with self._lock:
            self._dropped += dropped
            for entry in reversed(entries):
                if entry.key in self._entries:
                    continue
                if len(self._entries) >= self._max_entries or (
                    self._bytes + _size(entry) > self._max_bytes
                ):
                    self._dropped += 1
                    continue
                self._entries[entry.key] = entry
                self._entries.move_to_end(entry.key, last=False)
                self._bytes += _size(entry)

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)


def _size(entry: JournalEntry) -> int:
    return len(entry.key) + len(entry.value or b"") + len(entry.only_if or b"")
