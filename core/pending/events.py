"""The messages HAMi's scheduler and the Kubernetes scheduler write about a pod that does not fit.

HAMi's extender (``pkg/scheduler/score.go``, ``recordFilteringFailures``) records one
``FilteringFailed`` event per reason code when no node fits::

    2 nodes CardInsufficientMemory(node-a,node-b)

Schedulers before v2.9 wrote one free-form event, ``no available node, all node scores do not
meet``; later ones write ``no available node, 3 nodes do not meet`` beside the coded events. The
Kubernetes scheduler adds ``FailedScheduling`` (``0/3 nodes are available: 3 NodeUnfitPod.``), and
the extender's log (``-v=4``) has one line per node::

    "NodeUnfitPod" pod="ns/name" node="node-a" reason="3/8 CardInsufficientMemory, 5/8 Card..."

where the fraction is devices rejected / devices of the type on the node (for
``AllocatedCardsInsufficientRequest``: the devices that passed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

FILTERING_FAILED = "FilteringFailed"
FAILED_SCHEDULING = "FailedScheduling"

# ``2 nodes CardInsufficientMemory(node-a,node-b)``; also the proposal's wording
# ``2 nodes failed: CardInsufficientMemory (node-a,node-b)`` and a list cut short by a paste.
_CODED = re.compile(
    r"^(?P<count>\d++) nodes?+ (?:failed: )?+(?P<code>[A-Za-z]++) ?+"
    r"\((?P<nodes>[^)]*+)(?P<closed>\))?+\s*+$"
)
_NO_NODE = re.compile(
    r"^no available node, (?:all node scores do not meet|(?P<count>\d++) nodes do not meet)"
)
_AVAILABLE = re.compile(r"^(?P<fit>\d++)/(?P<total>\d++) nodes are available: (?P<items>.*+)$")
_ITEM = re.compile(r"^(?P<count>\d++) (?P<what>.++)$")
_ITEM_SEPARATOR = re.compile(r", (?=\d++ )")
_LOG_LINE = re.compile(
    r'"NodeUnfitPod" pod="(?P<pod>[^"]*+)" node="(?P<node>[^"]*+)" reason="(?P<reason>[^"]*+)"'
)
_FRACTION = re.compile(r"^(?P<count>\d++)/(?P<of>\d++) (?P<code>[A-Za-z]++)$")


@dataclass(frozen=True, slots=True)
class CodedReason:
    """One reason code of a ``FilteringFailed`` event: how many nodes gave it, and which."""

    code: str
    node_count: int
    nodes: tuple[str, ...]
    nodes_cut_short: bool = False  # the node list was cut (a truncated paste)


@dataclass(frozen=True, slots=True)
class NoNodeFits:
    """The free-form verdict: no node fits (``nodes`` None when the message gives no count)."""

    nodes: int | None


@dataclass(frozen=True, slots=True)
class SchedulerVerdict:
    """The Kubernetes scheduler's ``0/3 nodes are available: ...``, item by item."""

    fitting: int
    total: int
    items: tuple[tuple[int, str], ...]  # (nodes, what they said), as written


@dataclass(frozen=True, slots=True)
class NodeRejection:
    """One extender log line: a node's reasons with devices rejected / devices of the type."""

    pod: str
    node: str
    reasons: tuple[tuple[str, int, int], ...]  # (code, count, of)


Reading = CodedReason | NoNodeFits | SchedulerVerdict


def read_message(reason: str, message: str) -> Reading | None:
    """What an event's message says, or None when it is none of the known forms."""
    text = message.strip()
    if reason == FILTERING_FAILED:
        coded = _CODED.match(text)
        if coded:
            nodes = tuple(name.strip() for name in coded["nodes"].split(",") if name.strip())
            return CodedReason(
                code=coded["code"],
                node_count=int(coded["count"]),
                nodes=nodes,
                nodes_cut_short=coded["closed"] is None,
            )
        no_node = _NO_NODE.match(text)
        if no_node:
            return NoNodeFits(int(no_node["count"]) if no_node["count"] else None)
        return None
    if reason == FAILED_SCHEDULING:
        return _scheduler_verdict(text)
    return None


def _scheduler_verdict(text: str) -> SchedulerVerdict | None:
    found = _AVAILABLE.match(text)
    if not found:
        return None
    items_text = found["items"].split(" preemption: ", 1)[0].rstrip(". ")
    items: list[tuple[int, str]] = []
    # Items are ``N what``, joined by ", "; HAMi's own reasons hold ", " too (``1/8 A, 7/8 B``),
    # but there the next part starts ``7/8``, not ``7 ``.
    for part in _ITEM_SEPARATOR.split(items_text):
        item = _ITEM.match(part.strip())
        if item:
            items.append((int(item["count"]), item["what"]))
    return SchedulerVerdict(int(found["fit"]), int(found["total"]), tuple(items))


def read_log_line(line: str) -> NodeRejection | None:
    """One ``NodeUnfitPod`` line of the extender's log, or None for any other line."""
    found = _LOG_LINE.search(line)
    if not found:
        return None
    reasons = []
    for part in found["reason"].split(", "):
        fraction = _FRACTION.match(part.strip())
        if fraction:
            reasons.append((fraction["code"], int(fraction["count"]), int(fraction["of"])))
        elif part.strip():
            reasons.append((part.strip(), 0, 0))
    return NodeRejection(found["pod"], found["node"], tuple(reasons))
