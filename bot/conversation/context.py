"""What every intent's handler works with: one object, built once by ``Conversation``.

Handlers are plain functions of this context and the request (``summary``, ``paste``,
``follow_up``, ``picker``, ``buttons``, ``fit``, ``changes``, ``digests``, ``alert_buttons``);
the context holds the stores and sources they share, and nothing of any one request.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.conversation.admin import AdminAccess
from bot.conversation.alerts import FiringAlerts, no_firing_alerts
from bot.conversation.clusters import LiveSource
from bot.conversation.fleet import DEFAULT_WAIT_SECONDS
from bot.conversation.notices import NO_NOTICES, Notices
from bot.conversation.parsing import strip_code_fences
from bot.store.ratelimit import RateLimiter
from bot.store.state import BotState, PastedMetrics
from core.api import summarize_text
from core.model import SourceInfo, Summary
from core.settings import DEFAULT_SETTINGS, Settings


@dataclass(frozen=True, slots=True)
class Context:
    """``state`` remembers threads and picker choices (and has the clock, ``state.now``);
    ``live`` reaches registered clusters."""

    state: BotState
    live: LiveSource
    settings: Settings = DEFAULT_SETTINGS
    # Who may see the admin report; by default nobody on Slack (the chat's operator may).
    admin: AdminAccess = field(default_factory=AdminAccess)
    # Each user's allowance for summaries that cost work (``per_user_limiter``); a new paste
    # or file counts like a live scrape. None: not limited (the chat's operator).
    paste_limit: RateLimiter | None = None
    # Which alerts of a cluster fire now, for the fleet view and App Home.
    firing_alerts: FiringAlerts = no_firing_alerts
    # How long the fleet view waits for all clusters together.
    fleet_wait_seconds: float = DEFAULT_WAIT_SECONDS
    # The notifier's records: when digests were posted, alert silences.
    notices: Notices = NO_NOTICES

    def summarize_pasted(
        self, pasted: PastedMetrics, *, namespace: str | None = None, node: str | None = None
    ) -> Summary:
        """The summary of metrics given in a thread (pasted or attached)."""
        source = SourceInfo(kind=pasted.kind, label=pasted.label)
        return summarize_text(
            strip_code_fences(pasted.text),
            source,
            namespace=namespace,
            node=node,
            settings=self.settings,
        )
