"""The firing alerts of a cluster, as the fleet view and App Home show them.

Alert rules are evaluated elsewhere (``bot.notify.alerts``); what those surfaces need is only
"which alerts of this cluster fire now". ``FiringAlerts`` is that question as a function,
handed to the ``Conversation``: ``bot.slack.assembly`` gives it the alert runner's records
(``bot.notify.firing``); where no rules are evaluated (the terminal chat), ``no_firing_alerts``
answers for every cluster: nothing fires.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class FiringAlert:
    """One alert rule of a cluster in the firing state."""

    rule: str  # the rule's name, as its registry entry declares it
    message: str  # what is wrong, in words and numbers ("2 of 16 H100 GPUs free, below 4")
    since: float | None = None  # Unix time it started firing, when known


# cluster name -> its firing alerts (empty when none fire or rules are not evaluated)
FiringAlerts = Callable[[str], Sequence[FiringAlert]]


def no_firing_alerts(cluster: str) -> tuple[FiringAlert, ...]:
    """No alert fires: the answer where no alert rules are evaluated."""
    return ()
