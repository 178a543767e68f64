"""What needs attention, counted, with at most three examples each and where the rest is.

Each item is one line of the first page: over quota, inconsistent and overcommitted GPUs,
fragmented nodes, a dominant tenant, failed consistency checks, the scheduler's rollbacks and
stale reservations, idle allocations (where runtime data exists), hot GPUs and GPUs with
uncorrected ECC errors, monitors not reached and pods nvidia-smi could not read. The counts are
tallies of the Summary's rows; the examples are the first rows in the order the full tables
list them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core import number_style
from core.model import HostGpuRuntime, NamespaceSummary, Summary
from core.views.names import gpu_name, pod_name
from core.views.outcome_words import trouble_words

EXAMPLES = 3


@dataclass(frozen=True, slots=True)
class Hints:
    """Where each full list is, in the words of one surface (a button, a command, a file)."""

    gpus: str
    nodes: str
    namespaces: str
    workloads: str
    runtime: str
    everything: str
    fit: str
    # The page's last line, where every list is; by default built from the ones above.
    more: str = ""


@dataclass(frozen=True, slots=True)
class Fact:
    """A phrase with one emphasised part: ``before`` **strong** ``after``."""

    strong: str
    after: str = ""
    before: str = ""

    def plain(self) -> str:
        return f"{self.before}{self.strong}{self.after}"


Line = tuple[Fact, ...]


def examples(names: Sequence[str], total: int, where: str) -> str:
    """``a, b, c and 346 more (GPUs button)``: at most three names, then a count."""
    shown = ", ".join(names[:EXAMPLES])
    rest = total - min(len(names), EXAMPLES)
    return shown + (f" and {number_style.count(rest)} more ({where})" if rest > 0 else "")


def _item(
    total: int, noun: str, plural: str, names: Sequence[str], where: str, note: str = ""
) -> Line:
    """``349 inconsistent GPUs (note): a, b, c and 346 more (where)``."""
    lead = f" ({note})" if note else ""
    return (
        Fact(number_style.counted(total, noun, plural), f"{lead}: {examples(names, total, where)}"),
    )


def _quota_items(summary: Summary, hints: Hints) -> list[Line]:
    over = [ns for ns in summary.namespaces if ns.quota_state == "over"]
    near = [ns for ns in summary.namespaces if ns.quota_state == "near"]
    if not over and not near:
        return []
    over.sort(key=lambda ns: (-(ns.quota_use_percent or 0.0), ns.namespace))
    near.sort(key=lambda ns: (-(ns.quota_use_percent or 0.0), ns.namespace))

    def names(rows: Sequence[NamespaceSummary]) -> list[str]:
        return [f"{ns.namespace} {number_style.percent(ns.quota_use_percent)}" for ns in rows]

    facts: list[Fact] = []
    if over:
        facts.append(
            Fact(
                number_style.counted(len(over), "namespace") + " over quota",
                ": " + examples(names(over), len(over), hints.namespaces),
            )
        )
    if near:
        noun = (
            number_style.counted(len(near), "namespace")
            if not over
            else number_style.count(len(near))
        )
        facts.append(
            Fact(noun + " near quota", ": " + examples(names(near), len(near), hints.namespaces))
        )
    return [tuple(facts)]


def _gpu_items(summary: Summary, hints: Hints, nodes: bool) -> list[Line]:
    items = []
    inconsistent = [g for g in summary.gpus if g.state == "inconsistent"]
    if inconsistent:
        items.append(
            _item(
                len(inconsistent),
                "inconsistent GPU",
                "inconsistent GPUs",
                [gpu_name(g.node, g.device_index) for g in inconsistent],
                hints.gpus,
            )
        )
    over = [g for g in summary.gpus if "overcommitted" in g.flags]
    if over:
        items.append(
            _item(
                len(over),
                "GPU allocated beyond its limit",
                "GPUs allocated beyond their limit",
                [gpu_name(g.node, g.device_index) for g in over],
                hints.gpus,
            )
        )
    fragmented = sorted(
        (n for n in summary.nodes if nodes and n.verdict == "fragmented"),
        key=lambda n: (-n.free_cores, -n.free_mem_mib, n.node),
    )
    if fragmented:
        items.append(
            _item(
                len(fragmented),
                "fragmented node",
                "fragmented nodes",
                [n.node for n in fragmented],
                hints.nodes,
                "free capacity only in slices",
            )
        )
    return items


def _runtime_items(summary: Summary, hints: Hints) -> list[Line]:
    items = []
    idle = summary.idle_allocations
    if idle:
        measured = sorted({i.measured_by for i in idle})
        items.append(
            _item(
                len(idle),
                "idle allocation",
                "idle allocations",
                [pod_name(i.namespace, i.pod) for i in idle],
                hints.runtime,
                f"by {' and '.join(measured)}",
            )
        )
    runtime = summary.runtime
    if runtime is not None:
        items += _health_items(runtime.host_gpus, hints)
    if runtime is not None and runtime.missing_monitors:
        # Each entry is "node: why"; the first says why in full, the others by their node.
        missing = runtime.missing_monitors
        names = [missing[0], *(m.split(":", 1)[0] for m in missing[1:])]
        items.append(
            _item(
                len(missing),
                "vGPU monitor not reached",
                "vGPU monitors not reached",
                names,
                hints.runtime,
                "their GPUs and containers are missing above",
            )
        )
    if runtime is not None and runtime.partial_collections:
        items.append(
            _item(
                len(runtime.partial_collections),
                "vGPU monitor whose last collection partly failed",
                "vGPU monitors whose last collection partly failed",
                list(runtime.partial_collections),
                hints.runtime,
                "the figures there may be incomplete",
            )
        )
    return items


def _health_items(hosts: Sequence[HostGpuRuntime], hints: Hints) -> list[Line]:
    """Hot GPUs (hottest first) and GPUs with uncorrected ECC errors (most first)."""
    items = []
    hot = sorted(
        (h for h in hosts if "hot" in h.health),
        key=lambda h: (-(h.temperature_celsius or 0.0), h.node, h.device_index),
    )
    if hot:
        items.append(
            _item(
                len(hot),
                "hot GPU",
                "hot GPUs",
                [
                    f"{gpu_name(h.node, h.device_index)} "
                    + number_style.measured(h.temperature_celsius, "°C")
                    for h in hot
                ],
                hints.runtime,
            )
        )
    erring = sorted(
        (h for h in hosts if "ecc" in h.health),
        key=lambda h: (-(h.ecc_uncorrected_errors or 0.0), h.node, h.device_index),
    )
    if erring:
        items.append(
            _item(
                len(erring),
                "GPU with uncorrected ECC errors",
                "GPUs with uncorrected ECC errors",
                [
                    f"{gpu_name(h.node, h.device_index)} "
                    + number_style.counted(h.ecc_uncorrected_errors, "error")
                    for h in erring
                ],
                hints.runtime,
                "since the driver loaded",
            )
        )
    return items


def _outcome_items(summary: Summary) -> list[Line]:
    """Bind rollbacks, stale reservations and reconciliation errors the scheduler counted."""
    if summary.outcomes is None or not (trouble := trouble_words(summary.outcomes)):
        return []
    return [(Fact(trouble, " since the scheduler started (its outcome counters)"),)]


def attention(summary: Summary, hints: Hints, *, nodes: bool = True) -> list[Line]:
    """The items that need attention, the most pressing first; empty when none does.
    ``nodes`` False leaves fragmented nodes out."""
    items = _quota_items(summary, hints)
    items += _gpu_items(summary, hints, nodes)
    dominant = [ns.namespace for ns in summary.namespaces if ns.size_class == "dominant"]
    if dominant:
        items.append(
            (
                Fact(
                    "dominant tenant",
                    ": "
                    + ", ".join(dominant)
                    + " (holds half of the allocated cores and memory or more)",
                ),
            )
        )
    failed = [c.name for c in summary.checks if c.status == "warn"]
    if failed:
        items.append(
            _item(
                len(failed),
                "consistency check failed",
                "consistency checks failed",
                failed,
                hints.everything,
                "whole cluster" if summary.filters else "",
            )
        )
    items += _outcome_items(summary)
    items += _runtime_items(summary, hints)
    return items
