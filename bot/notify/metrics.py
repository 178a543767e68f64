"""Alert states on ``/metrics``, so teams can route them through Alertmanager instead.

``hami_summary_alert_firing{cluster,rule}`` is 1 while a rule fires and 0 otherwise;
``hami_summary_alert_silenced{cluster,rule}`` is 1 while someone silenced it in Slack. Every
replica sets them from the shared state each tick, so whichever replica Prometheus scrapes
tells the same. Labels are declared clusters and rule names only: a bounded set.
"""

from __future__ import annotations

from prometheus_client import Gauge

from bot.ops.metrics import METRICS

ALERT_FIRING = Gauge(
    "hami_summary_alert_firing",
    "1 while the alert rule fires, 0 otherwise (rules declared in the cluster registry).",
    ["cluster", "rule"],
    registry=METRICS.registry,
)
ALERT_SILENCED = Gauge(
    "hami_summary_alert_silenced",
    "1 while the alert rule is silenced from Slack (its changes are not posted).",
    ["cluster", "rule"],
    registry=METRICS.registry,
)


def show_alert(cluster: str, rule: str, *, firing: bool, silenced: bool) -> None:
    ALERT_FIRING.labels(cluster=cluster, rule=rule).set(1 if firing else 0)
    ALERT_SILENCED.labels(cluster=cluster, rule=rule).set(1 if silenced else 0)
