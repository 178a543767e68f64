"""A lease in the shared store: ``SET NX`` with an expiry, renewed while its holder works.

Only the holder acts on what the lease names (a digest slot, a cluster's alert rules). A holder
that dies stops renewing, so the lease expires ``ttl_seconds`` later and another replica takes
over; a holder only renews or releases while the store still holds its own token, never a
lease another replica took after its own expired. The token starts with the host name and
process id, so an operator (or a test) can tell who holds it.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from types import TracebackType

from bot.store.kv import KeyValueStore

log = logging.getLogger("hami_summary.notify")


def replica_id() -> str:
    """``host:pid``: which replica holds a lease."""
    return f"{socket.gethostname()}:{os.getpid()}"


class Lease:
    def __init__(self, kv: KeyValueStore, key: str, ttl_seconds: float) -> None:
        self._kv = kv
        self.key = key
        self.ttl_seconds = ttl_seconds
        self.token = f"{replica_id()}:{uuid.uuid4().hex}".encode()
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def acquire(self) -> bool:
        """True when this call took the lease; renewals start at once."""
        if not self._kv.put_if_absent(self.key, self.token, self.ttl_seconds):
            return False
        self._thread = threading.Thread(target=self._renew, name="hami-notify-lease", daemon=True)
        self._thread.start()
        return True

    def held(self) -> bool:
        """Whether the store still holds this lease's token (checked before posting)."""
        return self._kv.get(self.key) == self.token

    def _renew(self) -> None:
        while not self._stopped.wait(self.ttl_seconds / 3):
            try:
                if not self._kv.extend_if_equals(self.key, self.token, self.ttl_seconds):
                    log.warning("lost the lease %s (it expired before it was renewed)", self.key)
                    return
            except Exception as error:  # a store hiccup: the next renewal may succeed
                log.warning("could not renew the lease %s: %s", self.key, error)

    def release(self) -> None:
        self._stopped.set()
        if self._thread is not None:
            self._thread.join()
        try:
            self._kv.delete_if_equals(self.key, self.token)
        except Exception as error:  # it expires by itself
            log.warning("could not release the lease %s: %s", self.key, error)

    def __enter__(self) -> Lease:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.release()
