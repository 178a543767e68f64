"""Whether a summary button was pressed where its summary was given.

A summary of pasted metrics carries, in each button's value, the channel and thread the metrics
were given in; the metrics are looked up there. Slack signs the payload, but the value is
whatever the message held: a crafted message (or payload) could name another channel's thread
and have its pasted workloads posted here. So the stored channel and thread must be the ones of
the message the button sits under (``channel.id``, ``container.thread_ts`` / ``message``).
"""

from __future__ import annotations

from typing import Any

from bot.conversation.replies import SummaryRef
from bot.slack.listeners.events.direct_message import TOP_LEVEL
from core.errors import InputError

ELSEWHERE = (
    "This button belongs to a summary from another conversation, so I did not act on it. "
    "Use the buttons under the summary itself, or paste the metrics here."
)


def _thread_of(body: dict[str, Any]) -> str | None:
    container = body.get("container") or {}
    message = body.get("message") or {}
    thread = container.get("thread_ts") or message.get("thread_ts")
    return str(thread) if thread else None


def _message_ts(body: dict[str, Any]) -> str | None:
    container = body.get("container") or {}
    message = body.get("message") or {}
    ts = container.get("message_ts") or message.get("ts")
    return str(ts) if ts else None


def origin_problem(body: dict[str, Any], value: str) -> str | None:
    """Why this press must be refused, or None when the button's own channel and thread (if it
    names any) are where it was pressed. A value that cannot be read is left to the
    conversation, which explains that itself."""
    try:
        ref = SummaryRef.from_value(value)
    except InputError:
        return None
    channel = str((body.get("channel") or {}).get("id") or "")
    if ref.channel is not None and ref.channel != channel:
        return ELSEWHERE
    if ref.thread_ts is None:
        return None
    thread = _thread_of(body)
    if ref.thread_ts == TOP_LEVEL:
        # Pasted at the top of a DM: the summary is a top-level message (its own thread root
        # once someone replies under it).
        return None if thread in (None, _message_ts(body)) else ELSEWHERE
    return None if thread == ref.thread_ts else ELSEWHERE
