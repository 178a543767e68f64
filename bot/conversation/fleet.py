"""``/hami-summary fleet``: one line per cluster the asker may query, collected in parallel.

Each line gives the cluster's GPUs, cores and memory allocated in percent, free whole GPUs per
model and its firing alerts, or why it could not be collected, or that it did not answer in
time (it keeps collecting; its result is then in the scrape cache). App Home shows the same
lines with buttons. Only clusters the registry lets the asker query appear, so nothing of the
others is ever shown, not even their names.
"""

from __future__ import annotations

from datetime import UTC, datetime

from bot.conversation.alerts import FiringAlert, FiringAlerts
from bot.conversation.clusters import LiveOutcome, LiveRequest, LiveSource
from bot.conversation.replies import ClusterOption, FleetLine, FleetReply
from bot.conversation.rich import Span, Strong
from core.headline import headline_of, headline_text
from core.views.changes_view import span_text
from core.views.pending_attention import pending_line

# How long the fleet view and App Home wait for all clusters together.
DEFAULT_WAIT_SECONDS = 8.0


def _line(option: ClusterOption, outcome: LiveOutcome, alerts: FiringAlerts) -> FleetLine:
    request = outcome.request
    if outcome.result is None:
        return FleetLine(
            option,
            request.context,
            problem=outcome.problem,
            timed_out=outcome.timed_out,
            alerts=tuple(alerts(option.name)),
        )
    summary = outcome.result.summary
    fetched = summary.source.fetched_at
    return FleetLine(
        option,
        outcome.result.context,
        headline=headline_of(summary),
        age_seconds=outcome.result.age_seconds,
        scraped_at=fetched.timestamp() if fetched is not None else None,
        alerts=tuple(alerts(option.name)),
        pending=outcome.result.pending,
    )


def fleet_reply(
    live: LiveSource,
    *,
    user: str | None,
    channel: str | None,
    alerts: FiringAlerts,
    wait_seconds: float = DEFAULT_WAIT_SECONDS,
) -> FleetReply:
    """Every cluster ``user`` may query in ``channel``, collected within ``wait_seconds``."""
    options = live.clusters_for(user, channel)
    if not options:
        return FleetReply((), wait_seconds, hint=live.setup_hint())
    chosen = [o for o in options if len(o.contexts) <= 1]
    requests = [
        LiveRequest(o.name, o.contexts[0] if o.contexts else None, user=user, channel=channel)
        for o in chosen
    ]
    outcomes = {
        outcome.request.cluster: outcome
        for outcome in live.summarize_many(requests, wait_seconds=wait_seconds)
    }
    lines = [
        _line(o, outcomes[o.name], alerts) if o.name in outcomes else FleetLine(o) for o in options
    ]
    return FleetReply(tuple(lines), wait_seconds)


def alerts_text(alerts: tuple[FiringAlert, ...]) -> str:
    """``2 alerts firing: free-h100 (2 of 16 free, below 4); quota-team-a (93%)``."""
    shown = "; ".join(f"{a.rule} ({a.message})" for a in alerts[:3])
    more = f"; and {len(alerts) - 3} more" if len(alerts) > 3 else ""
    noun = "alert" if len(alerts) == 1 else "alerts"
    return f"{len(alerts)} {noun} firing: {shown}{more}"


def status_text(line: FleetLine, wait_seconds: float) -> str:
    """What the line says after the cluster's name: its figures, or why there are none."""
    if line.needs_context:
        contexts = ", ".join(f"`{c}`" for c in line.option.contexts)
        return (
            f"several contexts ({contexts}); not collected here: ask `/hami-summary "
            f"{line.option.name} context=NAME`"
        )
    if line.timed_out:
        return (
            f"no answer within {wait_seconds:g} s; still collecting, ask again in a minute for "
            "its figures"
        )
    if line.headline is None:
        return f"could not collect: {line.problem or 'no reason given'}"
    text = headline_text(line.headline)
    if line.pending is not None and line.pending.pods:
        ask = f"`/hami-summary {line.option.name} pending` gives the reasons"
        line_words = pending_line(line.pending, datetime.now(UTC), ask)
        text += f" · {line_words[0].plain()}"
    if line.age_seconds is not None:
        text += f" · scraped {span_text(line.age_seconds)} ago"
    return text


def fleet_line(line: FleetLine, wait_seconds: float) -> tuple[Span, ...]:
    """The whole line: name (standing out; then its display name), status, alerts."""
    option = line.option
    shown = f" ({option.display_name})" if option.display_name != option.name else ""
    text = f"{shown}: {status_text(line, wait_seconds)}"
    if line.alerts:
        text += f" · {alerts_text(line.alerts)}"
    return (Strong(option.name), text)
