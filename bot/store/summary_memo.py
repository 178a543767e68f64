"""In-process memo of summaries, and of the files rendered from them, keyed by identity.

For a large cluster the work after a cache hit dominates a reply: on the simulator's
1,000-node exposition, summarising takes about 0.4 s and the chart about 0.5 s, while a burst
of requests (a channel asking after an incident, Refresh clicks) all concern the same
collected metrics. The scrape cache hands out the *same* ``CollectedMetrics`` object for as long
as its entry is current, so a summary can be keyed by that object's identity plus the filters,
and each file rendered from a summary by the summary's identity plus the file's name: no
hashing of megabytes of text per request.

An entry keeps a reference to its owner object, so the owner's ``id`` cannot be reused by
another object while the entry lives. Concurrent requests for one missing key build it once
(the others wait for it), like the scrape cache's single-flight but within the process.

Not shared through Redis on purpose: a ``Summary`` has no serialised form, and building it once
per replica costs a fraction of a scrape.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from core.model import Summary

V = TypeVar("V")


class IdentityMemo(Generic[V]):
    """At most ``max_entries`` values, each keyed by (an owner object, a hashable key)."""

    def __init__(self, max_entries: int) -> None:
        self._max_entries = max_entries
        self._entries: OrderedDict[tuple[int, Hashable], tuple[object, V]] = OrderedDict()
        self._building: dict[tuple[int, Hashable], threading.Lock] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def _lookup(self, key: tuple[int, Hashable], owner: object) -> tuple[object, V] | None:
        found = self._entries.get(key)
        if found is None or found[0] is not owner:
            return None
        self._entries.move_to_end(key)
        return found

    def get_or_build(self, owner: object, key: Hashable, build: Callable[[], V]) -> V:
        """The value for (``owner``, ``key``), built by ``build`` once per process."""
        full_key = (id(owner), key)
        with self._lock:
            found = self._lookup(full_key, owner)
            if found is not None:
                return found[1]
            building = self._building.setdefault(full_key, threading.Lock())
        with building:
            with self._lock:
                found = self._lookup(full_key, owner)
                if found is not None:
                    return found[1]
            try:
                built = build()
            finally:
                with self._lock:
                    self._building.pop(full_key, None)
            with self._lock:
                self._entries[full_key] = (owner, built)
                while len(self._entries) > self._max_entries:
                    self._entries.popitem(last=False)
            return built


# A summary pins its collected metrics (up to tens of MB of text for a large cluster): few.
SUMMARIES: IdentityMemo[Summary] = IdentityMemo(max_entries=8)
# Rendered files (chart PNG, CSV, tables): a few per summary.
RENDERED_FILES: IdentityMemo[bytes] = IdentityMemo(max_entries=24)


def memoized_render(
    summary: Summary, name: str, render: Callable[[], bytes]
) -> Callable[[], bytes]:
    """``render`` made to run once per (summary, file name) in this process."""
    return lambda: RENDERED_FILES.get_or_build(summary, name, render)
