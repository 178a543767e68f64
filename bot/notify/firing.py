"""The firing alerts of a cluster as the alert runner last recorded them in the shared store:
what the fleet view and App Home show beside each cluster (``FiringAlerts``).

Only rules the registry still declares for the cluster are shown, in its order; a rule's
message is what it found (its first firing subjects), else what it watches.
"""

from __future__ import annotations

from bot.clusters.registry import ClusterRegistry
from bot.conversation.alerts import FiringAlert, FiringAlerts
from bot.notify.records import NotifyRecords
from core.notify.rule_state import RuleState
from core.notify.rules import AlertRule

# Firing subjects named in one alert's message; the rest are counted.
SHOWN_SUBJECTS = 2


def _message(rule: AlertRule, state: RuleState) -> str:
    if not state.details:
        return rule.describe()
    shown = "; ".join(state.details[:SHOWN_SUBJECTS])
    more = len(state.details) - SHOWN_SUBJECTS
    return shown + (f"; and {more:,} more" if more > 0 else "")


def recorded_firing_alerts(records: NotifyRecords, registry: ClusterRegistry) -> FiringAlerts:
    """``FiringAlerts`` read from ``records`` (one store read per cluster asked about)."""

    def firing(cluster: str) -> tuple[FiringAlert, ...]:
        entry = registry.get(cluster)
        if entry is None or not entry.alerts:
            return ()
        stored = records.alerts(cluster).rules
        found = []
        for rule in entry.alerts:
            record = stored.get(rule.name)
            if record is not None and record.state.firing:
                found.append(
                    FiringAlert(rule.name, _message(rule, record.state), record.state.firing_since)
                )
        return tuple(found)

    return firing
