"""Evaluating each cluster's alert rules every interval, by one replica, on the shared cache.

Every replica calls ``AlertRunner.tick``. For a cluster whose rules are due (last evaluated an
interval ago, on any replica), the replica that takes the cluster's lease collects it through
the scrape cache (a cached collection serves; otherwise one scrape, shared with any answer in
flight), advances each rule (``core.notify.rule_state``) and posts only what changed since the
last post: the firing message, then the resolution in its thread. A silenced rule posts
nothing until the silence ends; then whatever differs from the last post is posted. Each post
is announced first in a durable post record (``bot.notify.records.AlertPost``), so a failover
that loses the states cannot make a message sent twice. Each tick also puts the shared states
on ``/metrics``, on every replica.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime

from slack_sdk import WebClient

from bot.clusters.registry import ClusterEntry, ClusterRegistry
from bot.conversation.clusters import LiveRequest, LiveSource
from bot.notify.alert_messages import firing_message, resolved_message
from bot.notify.lease import Lease, replica_id
from bot.notify.metrics import show_alert
from bot.notify.records import AlertPost, ClusterAlerts, NotifyRecords, RuleRecord
from bot.slack.delivery import Delivery
from core.errors import InputError
from core.history.snapshot import snapshot_of, summary_time
from core.notify.alert_text import firing_text, resolved_text
from core.notify.rule_state import advance
from core.notify.rules import AlertRule, Observation, condition
from core.pending.pending_list import PendingList, pending_list
from core.pending.story import pod_story

log = logging.getLogger("hami_summary.notify")


class AlertRunner:
    def __init__(
        self,
        registry: ClusterRegistry,
        records: NotifyRecords,
        live: LiveSource,
        client: WebClient,
        *,
        interval_seconds: float,
        lease_seconds: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.registry = registry
        self.records = records
        self.live = live
        self.interval_seconds = interval_seconds
        self.lease_seconds = lease_seconds
        self.clock = clock
        self.delivery = Delivery(client, log)

    def tick(self) -> list[str]:
        """The clusters evaluated by this replica in this tick."""
        evaluated = []
        for entry in self.registry.entries:
            if not entry.alerts:
                continue
            try:
                if self._due(entry) and self._evaluate_with_lease(entry):
                    evaluated.append(entry.name)
                self.show(entry)
            except Exception:  # a bug must not stop the other clusters
                log.exception("evaluating the alert rules of %s failed", entry.name)
        return evaluated

    def _due(self, entry: ClusterEntry) -> bool:
        last = self.records.alerts(entry.name).evaluated_at
        return last is None or self.clock() - last >= self.interval_seconds

    def _evaluate_with_lease(self, entry: ClusterEntry) -> bool:
        lease = Lease(self.records.kv, self.records.alert_lease_key(entry.name), self.lease_seconds)
        if not lease.acquire():
            return False
        with lease:
            if not self._due(entry):  # another replica evaluated between our look and lease
                return False
            self.evaluate(entry)
            return True

    def show(self, entry: ClusterEntry) -> None:
        """Put the shared state of ``entry``'s rules on ``/metrics``."""
        alerts = self.records.alerts(entry.name)
        now = self.clock()
        for rule in entry.alerts:
            record = alerts.rules.get(rule.name)
            silenced = self.records.active_silence(entry.name, rule.name, now) is not None
            show_alert(
                entry.name,
                rule.name,
                firing=record is not None and record.state.firing,
                silenced=silenced,
            )

    def observe(
        self, entry: ClusterEntry, context: str | None, runtime: bool, pods: bool = False
    ) -> Observation:
        now = self.clock()
        request = LiveRequest(entry.name, context, user=None, channel=None, runtime=runtime)
        pending = self._pending(entry, request) if pods else None
        try:
            summary = self.live.summarize(request).summary
        except InputError as error:
            return Observation(now, None, failure=error.message, pending=pending)
        taken_at = summary_time(summary) or now
        return Observation(now, snapshot_of(summary, taken_at), summary.runtime, pending=pending)

    def _pending(self, entry: ClusterEntry, request: LiveRequest) -> PendingList | None:
        """The cluster's pending pods (every namespace its entry allows); None when they cannot
        be read (RBAC, no Kubernetes API), so the rule can not tell rather than resolve."""
        try:
            pods = self.live.pending_pods(request)
        except InputError as error:
            log.warning("pending pods of %s cannot be read: %s", entry.name, error.message)
            return None
        stories = [pod_story(pod) for pod in pods]
        return pending_list(stories, where=f"cluster {entry.name}", now=datetime.now(UTC))

    def evaluate(self, entry: ClusterEntry) -> ClusterAlerts:
        """One evaluation of every rule of ``entry``; posts what changed, keeps the states."""
        before = self.records.alerts(entry.name)
        observations: dict[str | None, Observation] = {}
        for context in sorted({r.context or "" for r in entry.alerts}):
            wanted = [r for r in entry.alerts if (r.context or "") == context]
            runtime = any(r.needs_runtime for r in wanted)
            pods = any(r.needs_pods for r in wanted)
            observations[context or None] = self.observe(entry, context or None, runtime, pods)
        rules: dict[str, RuleRecord] = {}
        for rule in entry.alerts:
            observation = observations[rule.context]
            old = before.rules.get(rule.name, RuleRecord())
            state = advance(
                old.state, condition(rule, observation), observation.at, rule.for_seconds
            )
            rules[rule.name] = self._post_change(entry, rule, replace(old, state=state))
        after = ClusterAlerts(self.clock(), rules)
        if not self.records.keep_alerts(entry.name, after):
            log.warning(
                "alert states of %s did not reach a Redis replica in time: a failover now "
                "could lose them (the post records keep a message from being sent twice)",
                entry.name,
            )
        return after

    def _post_change(self, entry: ClusterEntry, rule: AlertRule, record: RuleRecord) -> RuleRecord:
        """``record`` after posting what differs from the last post (unless silenced)."""
        last = self.records.stored_alert_post(entry.name, rule.name)
        record = self._as_last_posted(entry, rule, record, last.post)
        state = record.state
        if state.firing == record.posted_firing:
            return record
        now = self.clock()
        if self.records.active_silence(entry.name, rule.name, now) is not None:
            return record
        if state.firing:
            intent = AlertPost(
                True,
                "sending",
                now,
                replica_id(),
                channel=rule.channel,
                fired_at=state.firing_since,
            )
        else:
            intent = AlertPost(False, "sending", now, replica_id())
        claimed = self.records.claim_alert_post(entry.name, rule.name, intent, last)
        if claimed == "changed":
            log.info(
                "alert %s of %s: another replica is posting it (a lease lost in a Redis "
                "failover); leaving it to that one",
                rule.name,
                entry.name,
            )
            return record
        if claimed == "unreplicated":
            # Posting now, a Redis failover could lose the record and the message be sent
            # twice. Nothing was sent: the next evaluation tries again (late at worst).
            self.records.restore_alert_post(entry.name, rule.name, intent, last)
            log.warning(
                "alert %s of %s waits: its post record did not reach a Redis replica in time "
                "(or Redis is away), and a failover could lose it; trying again at the next "
                "evaluation",
                rule.name,
                entry.name,
            )
            return record
        try:
            posted = self._post(entry, rule, record, now)
        except Exception:
            # Not marked as posted: the next evaluation posts it again.
            self.records.restore_alert_post(entry.name, rule.name, intent, last)
            log.exception("alert %s of %s: posting the change failed", rule.name, entry.name)
            return record
        if posted is None:
            self.records.restore_alert_post(entry.name, rule.name, intent, last)
            return record
        self.records.mark_alert_post(
            entry.name,
            rule.name,
            replace(intent, state="posted", ts=posted.ts, at=self.clock()),
        )
        return posted

    def _post(
        self, entry: ClusterEntry, rule: AlertRule, record: RuleRecord, now: float
    ) -> RuleRecord | None:
        """Send the firing message or the resolution; ``record`` as posted, or None when the
        bot may not post in the rule's channel."""
        state = record.state
        if state.firing:
            text = firing_text(entry.name, rule, state)
            ts = self.delivery.post(
                rule.channel, None, firing_message(text, entry.name, rule.name, rule.defined_at)
            )
            if ts is None:
                log.warning(
                    "alert %s of %s: the bot may not post in %s; invite it there",
                    rule.name,
                    entry.name,
                    rule.channel,
                )
                return None
            log.info("alert %s of %s fired", rule.name, entry.name)
            return replace(
                record,
                posted_firing=True,
                ts=ts,
                channel=rule.channel,
                fired_at=state.firing_since,
            )
        text = resolved_text(entry.name, rule, record.fired_at, now)
        channel = record.channel or rule.channel
        self.delivery.post(channel, record.ts, resolved_message(text))
        log.info("alert %s of %s resolved", rule.name, entry.name)
        return replace(record, posted_firing=False, ts=None, channel=None, fired_at=None)

    def _as_last_posted(
        self, entry: ClusterEntry, rule: AlertRule, record: RuleRecord, last: AlertPost | None
    ) -> RuleRecord:
        """``record`` with what was last sent as the rule's post record says.

        The post record is written durably before a message goes out and the rule's state only
        at the end of the evaluation, so when the two disagree a failover (or another
        release's state) lost the state, and the post record is right. A ``sending`` record
        left by a replica that stopped counts as sent: nobody knows whether Slack has it, and
        sending again could make two.
        """
        if last is None or last.firing == record.posted_firing:
            return record
        what = "firing message" if last.firing else "resolution"
        if last.state == "posted":
            log.warning(
                "alert %s of %s: its state was lost after %s posted its %s; not posting it again",
                rule.name,
                entry.name,
                last.by or "a replica",
                what,
            )
        else:
            log.warning(
                "alert %s of %s: %s began posting its %s and stopped before Slack answered; "
                "not posting it again (Slack may have it)",
                rule.name,
                entry.name,
                last.by or "a replica",
                what,
            )
        if last.firing:
            return replace(
                record, posted_firing=True, ts=last.ts, channel=last.channel, fired_at=last.fired_at
            )
        return replace(record, posted_firing=False, ts=None, channel=None, fired_at=None)
