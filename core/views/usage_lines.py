"""Pods nvidia-smi could not read, grouped by cause, in words every surface shows."""

from __future__ import annotations

from core.model import ExecFailure, PodRealUsage, Summary
from core.views.names import pod_name


def usage_failures_by_cause(summary: Summary) -> list[tuple[ExecFailure, list[PodRealUsage]]]:
    """Pods that could not be read, grouped by cause (the fix differs per cause), largest group
    first."""
    groups: dict[ExecFailure, list[PodRealUsage]] = {}
    for usage in summary.real_usage or ():
        if usage.failure is not None:
            groups.setdefault(usage.failure, []).append(usage)
    return sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))


def usage_failure_lines(summary: Summary, *, pods_shown: int = 6) -> list[str]:
    """``cause (n): pods — detail`` per failure cause, plain text (no markup)."""
    lines = []
    for cause, pods in usage_failures_by_cause(summary):
        names = ", ".join(pod_name(u.namespace, u.pod) for u in pods[:pods_shown])
        if len(pods) > pods_shown:
            names += f" and {len(pods) - pods_shown:,} more"
        detail = next((u.detail for u in pods if u.detail), "")
        if detail:
            # Details name the pod's container or namespace: one stands for the group.
            names += f" — {'e.g. ' if len(pods) > 1 else ''}{detail}"
        lines.append(f"{cause} ({len(pods):,}): {names}")
    return lines
