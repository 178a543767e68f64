"""The buttons of an alert the notifier posted: Silence 1 h, Silence 1 day, Open summary.

A button's value carries the cluster and rule names only (``button_value``); a press is
checked against the registry as every answer is: the presser must be allowed to query the
cluster from where they are (``LiveSource.clusters_for``), and the buttons act only in the
channel the rule posts to.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from bot.conversation.context import Context
from bot.conversation.parsing import ClusterCommand
from bot.conversation.replies import ClusterOption, MessageReply
from bot.conversation.rich import Mention, Rich
from core.notify.alert_text import silenced_text
from core.notify.rules import AlertRule

SILENCE_HOUR = "alert_silence_1h"
SILENCE_DAY = "alert_silence_1d"
OPEN_SUMMARY = "alert_summary"
ALERT_ACTIONS = (SILENCE_HOUR, SILENCE_DAY, OPEN_SUMMARY)
SILENCE_SECONDS = {SILENCE_HOUR: 3600.0, SILENCE_DAY: 86_400.0}

NOT_YOURS = MessageReply(
    "You may not query this alert's cluster from here, so its buttons are not for you. An "
    "operator can allow you in the cluster registry (allowed_users, allowed_channels or "
    "allowed_user_groups).",
    title="Not for you",
    tone="problem",
)
RULE_GONE = MessageReply(
    "This alert's rule is no longer in the cluster registry, so there is nothing to silence "
    "or open from here.",
    title="Alert no longer declared",
    tone="problem",
)
ELSEWHERE = MessageReply(
    "This button belongs to an alert of another channel, so I did not act on it. Use the "
    "buttons under the alert itself.",
    title="Not here",
    tone="problem",
)


def button_value(cluster: str, rule: str) -> str:
    return json.dumps({"c": cluster, "r": rule}, separators=(",", ":"))


def read_button_value(value: str) -> tuple[str, str] | None:
    try:
        data = json.loads(value)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    cluster, rule = data.get("c"), data.get("r")
    return (cluster, rule) if isinstance(cluster, str) and isinstance(rule, str) else None


@dataclass(frozen=True, slots=True)
class AlertButtonIntent:
    """``action`` (one of ``ALERT_ACTIONS``) pressed by ``user`` in ``channel``, with the
    button's ``value``."""

    action: str
    value: str
    user: str
    channel: str


@dataclass(frozen=True, slots=True)
class SilenceAlert:
    """A silence the conversation accepted: ``rule`` of ``cluster`` for ``seconds``."""

    cluster: str
    rule: AlertRule
    seconds: float


def _alert_of(
    ctx: Context, intent: AlertButtonIntent
) -> tuple[ClusterOption, AlertRule] | MessageReply:
    """The cluster and rule a press acts on, or why it is refused."""
    names = read_button_value(intent.value)
    if names is None:
        return RULE_GONE
    option = next(
        (o for o in ctx.live.clusters_for(intent.user, intent.channel) if o.name == names[0]),
        None,
    )
    if option is None:
        return NOT_YOURS
    rule = next((r for r in option.alerts if r.name == names[1]), None)
    if rule is None:
        return RULE_GONE
    if rule.channel != intent.channel:
        return ELSEWHERE
    return option, rule


def read_alert_press(
    ctx: Context, intent: AlertButtonIntent
) -> SilenceAlert | ClusterCommand | MessageReply:
    """What a press asks (a silence, or the cluster's summary), or why it is refused."""
    found = _alert_of(ctx, intent)
    if isinstance(found, MessageReply):
        return found
    option, rule = found
    seconds = SILENCE_SECONDS.get(intent.action)
    if seconds is not None:
        return SilenceAlert(option.name, rule, seconds)
    return ClusterCommand(option.name, context=rule.context)


# Where the mention of whoever silenced goes in core's sentence (``silenced_text``).
_WHO = "\x00"


def silence_alert(ctx: Context, silence: SilenceAlert, *, user: str) -> MessageReply:
    """Keep the silence; the note for the alert's thread says until when, and who."""
    kept = ctx.notices.silence(
        silence.cluster, silence.rule.name, silence.seconds, user, ctx.state.now()
    )
    # Core words the sentence; the mention in it is held as data, for each surface to write.
    before, _, after = silenced_text(silence.cluster, silence.rule, kept.until, _WHO).partition(
        _WHO
    )
    return MessageReply(Rich.of((f":no_bell: {before}", Mention("user", user), after)))
