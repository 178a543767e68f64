"""What collected text must contain, and which pods it says hold GPUs.

A live scrape can hit the wrong port (the vGPU monitor, a Go process's own metrics, an HTML error
page of a proxy). ``check_scheduler_text`` tells those apart before the text is summarised, using
the family catalogue of ``core.families``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from bot.clusters.server_text import quoted
from core.families import FAMILIES

MONITOR_FAMILIES: tuple[str, ...] = tuple(
    sorted(name for name, spec in FAMILIES.items() if spec.component == "monitor")
)
# Per-pod allocation series and their (namespace, pod) label names: current families say
# namespace/pod, legacy ones podnamespace/podname.
_POD_FAMILIES = {
    "hami_vgpu_memory_allocated_bytes": ("namespace", "pod"),
    "vGPUMemoryAllocated": ("podnamespace", "podname"),
}
# The lookbehind keeps a search from starting again inside a name it has already read.
_LABEL_PAIR = re.compile(
    r'(?<![a-zA-Z0-9_])([a-zA-Z_][a-zA-Z0-9_]*+)\s*+=\s*+"((?:[^"\\]++|\\.)*+)"'
)
_SAMPLE_NAME = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*+)[{ \t]", re.MULTILINE)


def family_names(text: str) -> list[str]:
    """Distinct metric names of the sample lines, in order of appearance."""
    seen: dict[str, None] = {}
    for match in _SAMPLE_NAME.finditer(text):
        seen.setdefault(match.group(1), None)
    return list(seen)


# How much of a body without metrics is looked at, and how much of it is quoted.
_HEAD_CHARS = 2000
_QUOTED_CHARS = 80


def scheduler_problem(text: str, secrets: Iterable[str] = ()) -> str | None:
    """None when ``text`` holds HAMi scheduler families; otherwise what it holds instead.
    ``secrets``: the request's credentials, which an error page may echo (never quoted)."""
    names = family_names(text)
    if any(name in FAMILIES and FAMILIES[name].component == "scheduler" for name in names):
        return None
    if any(name in MONITOR_FAMILIES for name in names):
        return "it holds HAMi vGPU monitor families only (the monitor's port, not the scheduler's)"
    if not names:
        start = quoted(" ".join(text[:_HEAD_CHARS].split()), secrets)[:_QUOTED_CHARS]
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
    for line in text.splitlines():
        name = line.split("{", 1)[0].strip()
        label_names = _POD_FAMILIES.get(name)
        if label_names is None or "{" not in line:
            continue
        labels = dict(_LABEL_PAIR.findall(line.split("{", 1)[1].rsplit("}", 1)[0]))
        namespace, pod = labels.get(label_names[0], ""), labels.get(label_names[1], "")
        if namespace and pod:
            pods.add((namespace, pod))
    return sorted(pods)
