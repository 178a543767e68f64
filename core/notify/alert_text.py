"""What an alert says when it fires and when it resolves, as plain text.

Cluster, rule and subject names come from the registry and the metrics; the Slack layer
encodes them (``bot.slack.markup``) like any other text.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.notify.rule_state import RuleState
from core.notify.rules import AlertRule
from core.views.changes_view import span_text, stamp

# Subjects listed in a firing message; the rest are counted.
SHOWN_DETAILS = 10


@dataclass(frozen=True, slots=True)
class AlertText:
    title: str
    body: str


def firing_text(cluster: str, rule: AlertRule, state: RuleState) -> AlertText:
    details = list(state.details[:SHOWN_DETAILS])
    more = len(state.details) - len(details)
    if more > 0:
        details.append(f"and {more:,} more")
    since = f"Firing since {stamp(state.firing_since)}." if state.firing_since else ""
    lines = [f"Rule: {rule.describe()}.", *(f"• {d}" for d in details), since]
    return AlertText(
        title=f"Alert firing: {cluster} / {rule.name}",
        body="\n".join(line for line in lines if line),
    )


def resolved_text(cluster: str, rule: AlertRule, fired_at: float | None, now: float) -> AlertText:
    lasted = f" after {span_text(now - fired_at)}" if fired_at is not None else ""
    return AlertText(
        title=f"Resolved: {cluster} / {rule.name}",
        body=f"{rule.describe()[:1].upper()}{rule.describe()[1:]}: no longer the case{lasted} "
        f"(checked {stamp(now)}).",
    )


def silenced_text(cluster: str, rule: AlertRule, until: float, by: str) -> str:
    """``by`` is the Slack mention of whoever silenced it."""
    return (
        f"Silenced {cluster} / {rule.name} until {stamp(until)} ({by}). Changes of this "
        "alert are not posted until then; the state stays on /metrics."
    )
