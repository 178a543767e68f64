"""``why``: one pending pod's story as text (terminal, Slack) and as a JSON document."""

from __future__ import annotations

from typing import Any

from core.fit_shape import Shape
from core.json_text import dumps
from core.pending.events import CodedReason, NoNodeFits, SchedulerVerdict
from core.pending.reasons import REASON_CODES, reason_words
from core.pending.story import PodStory
from core.visible_text import visible

NODES_SHOWN = 5


def _nodes(reason: CodedReason) -> str:
    shown = [visible(name) for name in reason.nodes[:NODES_SHOWN]]
    more = reason.node_count - len(shown)
    if more > 0:
        shown.append(f"+{more:,} more")
    return ", ".join(shown)


def _shape_text(shape: Shape | None, resources: tuple[tuple[str, str], ...]) -> str:
    written = " ".join(f"{visible(name)}={visible(value)}" for name, value in resources)
    if shape is None:
        return written
    return f"{shape.describe()} ({written})"


def why_text(story: PodStory) -> str:
    pod = story.pod
    name = visible(pod.ref) or "the pod"
    lines = [f"Why is {name} pending?"]
    if pod.status:
        node = pod.node if pod.node and pod.node != "<none>" else "no node yet"
        lines.append(f"Status: {visible(pod.status)}, {visible(node)}.")
    if story.requests:
        for request in story.requests:
            kind = "init container" if request.init else "container"
            lines.append(
                f"Request, {kind} {visible(request.container)}: "
                f"{_shape_text(request.shape, request.resources)}"
            )
    elif pod.containers:
        lines.append("No container asks for HAMi's resources (nvidia.com/gpu and the like).")
    lines.append("")
    lines += _verdict_lines(story)
    if story.checked_against is not None:
        lines.append("")
        lines.append(f"Checked against the allocation now ({visible(story.checked_against)}):")
        if not story.findings:
            lines.append("- nothing to check for these reasons.")
        for finding in story.findings:
            mark = " (contradicts HAMi)" if finding.contradicts else ""
            lines.append(f"- {finding.code}{mark}:")
            lines += [f"  {line}" for line in finding.lines]
    return "\n".join(lines) + "\n"


def _verdict_lines(story: PodStory) -> list[str]:
    lines: list[str] = []
    if story.reasons:
        lines.append("HAMi's reasons (one FilteringFailed event per reason):")
        for reason in story.reasons:
            count = f"{reason.node_count:,} node" + ("s" if reason.node_count != 1 else "")
            cut = " (node list cut short)" if reason.nodes_cut_short else ""
            lines.append(f"- {visible(reason.code)} on {count}: {_nodes(reason)}{cut}")
            lines.append(f"  {reason_words(reason.code)}.")
            known = REASON_CODES.get(reason.code)
            if known:
                lines.append(f"  To change it: {known.advice}.")
    for reading in story.events:
        event = reading.event
        seen = f" (seen {event.times_seen:,} times)" if event.times_seen > 1 else ""
        if isinstance(reading.reading, NoNodeFits):
            lines.append(f"HAMi: no node fits{seen}: {visible(event.message)}")
        elif isinstance(reading.reading, SchedulerVerdict):
            lines.append(f"Kubernetes scheduler{seen}: {visible(event.message)}")
        elif reading.reading is None:
            lines.append(f"{visible(event.reason)}{seen}, as written: {visible(event.message)}")
    if not story.events:
        if story.pod.events_shown:
            lines.append(
                "No scheduling event: the pod did not reach HAMi's scheduler. Check its "
                "schedulerName (hami-scheduler) and that HAMi's admission webhook set it; events "
                "also expire after an hour."
            )
        else:
            lines.append(
                "No events in the text: paste the whole `kubectl describe pod` output, "
                "Events section included."
            )
    elif not story.reached_hami and "default-scheduler" in story.schedulers:
        lines.append(
            "The pod was handled by default-scheduler, not hami-scheduler, so HAMi never "
            "filtered it: set schedulerName: hami-scheduler, or check that HAMi's admission "
            "webhook sets it."
        )
    elif not story.reached_hami:
        lines.append(
            "No FilteringFailed event from HAMi: the pod may not have reached HAMi's filter "
            "(schedulerName, admission webhook), or the scheduler predates v2.9's reason codes."
        )
    return lines


def why_document(story: PodStory) -> dict[str, Any]:
    pod = story.pod
    return {
        "pod": {"namespace": pod.namespace, "name": pod.name, "status": pod.status},
        "requests": [
            {
                "container": r.container,
                "init": r.init,
                "resources": dict(r.resources),
                "gpus": r.shape.gpus if r.shape else None,
            }
            for r in story.requests
        ],
        "reasons": [
            {
                "code": r.code,
                "nodes": r.node_count,
                "node_names": list(r.nodes),
                "words": reason_words(r.code),
            }
            for r in story.reasons
        ],
        "reached_hami": story.reached_hami,
        "events": [
            {
                "type": e.event.type,
                "reason": e.event.reason,
                "age": e.event.age,
                "message": e.event.message,
            }
            for e in story.events
        ],
        "checked_against": story.checked_against,
        "findings": [
            {"code": f.code, "lines": list(f.lines), "contradicts": f.contradicts}
            for f in story.findings
        ],
    }


def why_json(story: PodStory) -> str:
    return dumps(why_document(story))
