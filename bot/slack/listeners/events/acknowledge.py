"""Events are acknowledged at once; the answer is computed by lazy listeners."""

from __future__ import annotations

from slack_bolt import Ack


def acknowledge_event(ack: Ack) -> None:
    ack()
