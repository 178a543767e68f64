"""What a command's acknowledgement decided, handed to its lazy listener.

A command's acknowledgement runs first and its lazy listener after it, in this process (the app
runs with ``process_before_response``, so the record is there when the lazy listener looks;
waiting for it is a safeguard). When the acknowledgement could not decide
access in time it only says "checking access", and the lazy listener must then answer; when it
answered by itself, the lazy listener must stay quiet. The acknowledgement records which
happened; the lazy listener waits for that record.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout

# Records nobody collected (a lazy listener that gave up waiting) are dropped after this.
FORGET_AFTER_SECONDS = 60.0


class AckDecisions:
    """Per delivery: did the acknowledgement leave the answer to the lazy listener?"""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._decisions: dict[str, tuple[float, Future[bool]]] = {}

    def _future(self, key: str) -> Future[bool]:
        now = time.monotonic()
        with self._lock:
            for old in [
                k for k, (at, _) in self._decisions.items() if now - at > FORGET_AFTER_SECONDS
            ]:
                del self._decisions[old]
            if key not in self._decisions:
                self._decisions[key] = (now, Future())
            return self._decisions[key][1]

    def decide(self, key: str, *, deferred: bool) -> None:
        """Called once by the acknowledgement of ``key``."""
        future = self._future(key)
        if not future.done():
            future.set_result(deferred)

    def deferred(self, key: str, timeout_seconds: float) -> bool:
        """Whether the acknowledgement of ``key`` deferred the answer (False when it did not
        say within ``timeout_seconds``: then it has failed, and answered with an error)."""
        try:
            return self._future(key).result(timeout_seconds)
        except FutureTimeout:
            return False
        finally:
            with self._lock:
                self._decisions.pop(key, None)
