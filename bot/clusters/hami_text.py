"""What collected text must contain, and which pods it says hold GPUs.

A live scrape can hit the wrong port (the vGPU monitor, a Go process's own metrics, an HTML error
page of a proxy). ``check_scheduler_text`` tells those apart before the text is summarised, using
the family catalogue of ``core.families``.
"""

from __future__ import annotations

import re

from core.exposition import parse_exposition
from core.families import FAMILIES

SCHEDULER_FAMILIES: tuple[str, ...] = tuple(
    sorted(name for name, spec in FAMILIES.items() if spec.component == "scheduler")
)
MONITOR_FAMILIES: tuple[str, ...] = tuple(
    sorted(name for name, spec in FAMILIES.items() if spec.component == "monitor")
)
# Per-pod allocation series (current and legacy), with their namespace / pod label names.
_POD_FAMILIES = {
    name: (dict(spec.labels))
    for name, spec in FAMILIES.items()
    if spec.role == "pod_mem_allocated_bytes"
}

_SAMPLE_NAME = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ \t]", re.MULTILINE)


def family_names(text: str) -> list[str]:
    """Distinct metric names of the sample lines, in order of appearance."""
    seen: dict[str, None] = {}
    for match in _SAMPLE_NAME.finditer(text):
        seen.setdefault(match.group(1), None)
    return list(seen)


def scheduler_problem(text: str) -> str | None:
    """None when ``text`` holds HAMi scheduler families; otherwise what it holds instead."""
    names = family_names(text)
    if any(name in FAMILIES and FAMILIES[name].component == "scheduler" for name in names):
        return None
    if any(name in MONITOR_FAMILIES for name in names):
        return "it holds HAMi vGPU monitor families only (the monitor's port, not the scheduler's)"
    if not names:
        start = " ".join(text.strip().split())[:80]
        return f"it holds no metrics at all (it starts with {start!r})" if start else "it is empty"
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    return f"it holds other metrics ({shown})"


def monitor_problem(text: str) -> str | None:
    names = family_names(text)
    if any(name in MONITOR_FAMILIES for name in names):
        return None
    shown = ", ".join(names[:3]) or "no metrics"
    return f"no HAMi vGPU monitor families in the answer (found: {shown})"


def pods_with_allocations(text: str) -> list[tuple[str, str]]:
    """(namespace, pod) of every pod the scheduler lists with allocated GPU memory, sorted."""
    pods: set[tuple[str, str]] = set()
    for sample in parse_exposition(text).samples:
        labels_map = _POD_FAMILIES.get(sample.name)
        if labels_map is None:
            continue
        names = {canonical: own for own, canonical in labels_map.items()}
        namespace = sample.labels.get(names["namespace"], "")
        pod = sample.labels.get(names["pod"], "")
        if namespace and pod:
            pods.add((namespace, pod))
    return sorted(pods)
