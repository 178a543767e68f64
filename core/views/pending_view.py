"""``pending``: one screen at any fleet size (counts per reason, then the longest waiting)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from core import number_style as numbers
from core.json_text import dumps
from core.pending.pending_list import NO_NODE_FITS, NOT_REACHED, PendingList, PendingPod
from core.pending.reasons import reason_words
from core.views.fit_view import UNCUT
from core.views.table_spec import Align, Table, fixed_width
from core.visible_text import visible

_GROUP_WORDS = {
    NOT_REACHED: "no FilteringFailed event: not scheduled by hami-scheduler, or not yet tried",
    NO_NODE_FITS: "HAMi found no node, without a reason code (a scheduler before v2.9)",
}


def reason_group_words(reason: str) -> str:
    """What a reason of the pending list means, in plain words."""
    return _GROUP_WORDS.get(reason) or reason_words(reason)


def _request(pod: PendingPod) -> str:
    shapes = [r.shape.compact() for r in pod.story.requests if r.shape is not None]
    if shapes:
        return ", ".join(shapes)
    written = [f"{name}={value}" for r in pod.story.requests for name, value in r.resources]
    return visible(" ".join(written)) or "-"


POD_HEADER = ("pod", "request", "waiting", "reason")
_POD_ALIGN: tuple[Align, ...] = ("left", "right", "right", "left")


def pod_table_lines(rows: Sequence[tuple[str, ...]]) -> list[str]:
    """The pods' table: names and reasons left-aligned, figures right-aligned, never cut."""
    table = Table(
        "",
        POD_HEADER,
        tuple(rows),
        elastic=(0,),
        align=_POD_ALIGN,
        wrap_last=False,
        tight_gaps=False,
    )
    return fixed_width(table, UNCUT)


def headline(found: PendingList) -> str:
    total = len(found.pods)
    where = visible(found.where)
    if total == 0:
        return f"No pod is pending on HAMi's resources in {where}."
    plural = "s" if total != 1 else ""
    return f"{total:,} pod{plural} pending on HAMi's resources in {where}, by reason:"


def group_lines(found: PendingList) -> list[str]:
    """One line per reason, most pods first: the code, the count, plain words, longest wait."""
    lines = []
    for group in found.groups:
        words = reason_group_words(group.reason)
        longest = numbers.seconds(group.longest_wait_seconds)
        lines.append(f"- {visible(group.reason)}: {group.pods:,} ({words}; longest wait {longest})")
    return lines


def pod_rows(
    pods: Sequence[PendingPod], name: Callable[[str], str] = visible
) -> list[tuple[str, ...]]:
    """The table rows of ``pods``; ``name`` writes the pod's ``namespace/name`` (a surface
    may shorten it)."""
    return [
        (
            name(visible(pod.story.pod.ref)),
            _request(pod),
            numbers.seconds(pod.waited_seconds),
            visible(pod.reason),
        )
        for pod in pods
    ]


def pending_text(found: PendingList, top: int = 15) -> str:
    total = len(found.pods)
    if total == 0:
        return headline(found) + "\n"
    lines = [headline(found), *group_lines(found)]
    shown = found.pods[:top]
    lines.append("")
    lines.append(f"Longest waiting ({len(shown):,} of {total:,}):")
    lines += pod_table_lines(pod_rows(shown))
    if total > len(shown):
        lines.append(f"... and {total - len(shown):,} more (all of them: --format json).")
    lines.append("One pod's whole story: why NAMESPACE/POD.")
    return "\n".join(lines) + "\n"


def pending_document(found: PendingList) -> dict[str, Any]:
    return {
        "where": found.where,
        "pods": [
            {
                "namespace": p.story.pod.namespace,
                "pod": p.story.pod.name,
                "reason": p.reason,
                "waited_seconds": p.waited_seconds,
                "requests": [
                    {"container": r.container, "resources": dict(r.resources)}
                    for r in p.story.requests
                ],
                "reasons": [r.code for r in p.story.reasons],
            }
            for p in found.pods
        ],
        "by_reason": [
            {"reason": g.reason, "pods": g.pods, "longest_wait_seconds": g.longest_wait_seconds}
            for g in found.groups
        ],
    }


def pending_json(found: PendingList) -> str:
    return dumps(pending_document(found))
