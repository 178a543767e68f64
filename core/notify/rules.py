"""Alert rules and what each one says about one collection of a cluster.

A rule's condition is a set of *subjects* that are in a bad way now (a GPU model short of free
GPUs, a namespace over its quota, an inconsistent GPU, a pod idling on its GPUs), each with
the words that say why. An empty set means all is well; ``None`` means the collection cannot
tell (it failed, or carries no runtime data), so the rule keeps its state rather than resolve
on missing data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from core.history.changes import quota_percent
from core.history.snapshot import Snapshot
from core.model import RuntimeSection
from core.pending.pending_list import PendingList, PendingPod
from core.views.changes_view import span_text
from core.views.pending_view import reason_group_words

# A firing message names this many pods per reason, then counts the rest.
PODS_NAMED = 5

RuleKind = Literal[
    "free_whole_gpus_below",
    "namespace_quota_above",
    "cores_allocated_above",
    "memory_allocated_above",
    "inconsistent_gpus",
    "scrape_failing",
    "low_utilisation",
    "pods_pending",
]

# subject -> why it is in a bad way
Condition = dict[str, str]


@dataclass(frozen=True, slots=True)
class AlertRule:
    """One declared rule. ``threshold`` is GPUs or percent, as the kind says; a condition
    must hold for ``for_seconds`` before the rule fires (a failing scrape's T is this too)."""

    name: str  # unique within its cluster
    kind: RuleKind
    channel: str
    threshold: float = 0.0
    for_seconds: float = 0.0
    model: str | None = None  # free_whole_gpus_below: part of the device type; None: any
    # namespace_quota_above, pods_pending: one namespace; None: every one
    namespace: str | None = None
    context: str | None = None
    defined_at: str = ""

    @property
    def needs_runtime(self) -> bool:
        """The rule reads the vGPU monitors' utilisation, which only a runtime scrape has."""
        return self.kind == "low_utilisation"

    @property
    def needs_pods(self) -> bool:
        """The rule reads the cluster's pending pods (through its Kubernetes API)."""
        return self.kind == "pods_pending"

    def describe(self) -> str:
        """The rule in words, e.g. "fewer than 2 free whole GPUs of model H100"."""
        number = f"{self.threshold:g}"
        text = {
            "free_whole_gpus_below": (
                f"fewer than {number} free whole GPUs"
                + (f" of model {self.model}" if self.model else "")
            ),
            "namespace_quota_above": (
                f"namespace {self.namespace}" if self.namespace else "a namespace"
            )
            + f" above {number} % of its quota",
            "cores_allocated_above": f"cluster cores allocated above {number} %",
            "memory_allocated_above": f"cluster memory allocated above {number} %",
            "inconsistent_gpus": "any inconsistent GPU",
            "scrape_failing": "collecting the metrics failing",
            "low_utilisation": f"pods holding GPUs at under {number} % utilisation",
            "pods_pending": (
                f"pods pending on HAMi's resources for over {span_text(self.threshold)}"
                + (f" in namespace {self.namespace}" if self.namespace else "")
            ),
        }[self.kind]
        if self.for_seconds > 0:
            text += f" for {span_text(self.for_seconds)}"
        return text


@dataclass(frozen=True, slots=True)
class Observation:
    """One evaluation's view of a cluster: its snapshot, or why it could not be collected."""

    at: float  # Unix seconds
    snapshot: Snapshot | None
    runtime: RuntimeSection | None = None
    failure: str | None = None
    # The pending pods, when a rule asked for them; None: not read, or they could not be.
    pending: PendingList | None = None


def condition(rule: AlertRule, observation: Observation) -> Condition | None:
    """The subjects in a bad way for ``rule`` now; None when this collection cannot tell."""
    if rule.kind == "scrape_failing":
        failure = observation.failure
        return {"scrape": f"collecting the metrics failed: {failure}"} if failure else {}
    if rule.kind == "pods_pending":
        return _pending(rule, observation.pending)
    snapshot = observation.snapshot
    if snapshot is None:
        return None
    if rule.kind == "free_whole_gpus_below":
        return _free_gpus(rule, snapshot)
    if rule.kind == "namespace_quota_above":
        return _quota(rule, snapshot)
    if rule.kind in ("cores_allocated_above", "memory_allocated_above"):
        return _allocated(rule, snapshot)
    if rule.kind == "inconsistent_gpus":
        return {
            f"{g.node}/{g.device_index}": f"GPU {g.device_index} on {g.node} ({g.model}) is "
            "inconsistent (memory without cores or the reverse)"
            for g in snapshot.inconsistent
        }
    return _low_utilisation(rule, snapshot, observation.runtime)


def _free_gpus(rule: AlertRule, snapshot: Snapshot) -> Condition:
    wanted = (rule.model or "").lower()
    models = [m for m in snapshot.models if wanted in m.model.lower()]
    free = sum(m.free_whole for m in models)
    if free >= rule.threshold:
        return {}
    what = f"of model {rule.model} " if rule.model else ""
    found = "" if models or not rule.model else f" (no GPU of model {rule.model} is listed)"
    subject = f"model {rule.model}" if rule.model else "all models"
    return {subject: f"{free} free whole GPU(s) {what}left, below {rule.threshold:g}{found}"}


def _quota(rule: AlertRule, snapshot: Snapshot) -> Condition:
    found: Condition = {}
    for use in snapshot.quotas:
        if rule.namespace is not None and use.namespace != rule.namespace:
            continue
        share = quota_percent(use)
        if share is not None and share > rule.threshold:
            found[f"{use.namespace} {use.resource}"] = (
                f"namespace {use.namespace} uses {share:.0f} % of its {use.resource} quota "
                f"({use.used:,.0f} of {use.limit:,.0f})"
            )
    return found


def _allocated(rule: AlertRule, snapshot: Snapshot) -> Condition:
    totals = snapshot.totals
    if rule.kind == "cores_allocated_above":
        what, used, limit = "cores", totals.core_allocated, totals.core_limit
    else:
        what, used, limit = "memory", totals.mem_allocated_mib, totals.mem_limit_mib
    if limit <= 0:
        return {}
    share = 100.0 * used / limit
    if share <= rule.threshold:
        return {}
    return {what: f"{share:.0f} % of the cluster's GPU {what} are allocated"}


def _low_utilisation(
    rule: AlertRule, snapshot: Snapshot, runtime: RuntimeSection | None
) -> Condition | None:
    if runtime is None:
        return None
    busiest: dict[tuple[str, str], float] = {}
    for container in runtime.containers:
        reading = container.sm_utilization_percent
        if reading is not None:
            key = (container.namespace, container.pod)
            busiest[key] = max(busiest.get(key, 0.0), reading)
    if not busiest:
        return None  # no monitor reported utilisation: nothing to judge by
    found: Condition = {}
    for pod in snapshot.pods:
        reading = busiest.get((pod.namespace, pod.pod))
        if reading is not None and reading < rule.threshold:
            found[f"{pod.namespace}/{pod.pod}"] = (
                f"pod {pod.namespace}/{pod.pod} holds {pod.gpus} GPU(s) at "
                f"{reading:.0f} % utilisation"
            )
    return found


def _pending(rule: AlertRule, pending: PendingList | None) -> Condition | None:
    """One subject per reason: the pods held back by it for longer than the rule allows."""
    if pending is None:
        return None
    late: dict[str, list[PendingPod]] = {}
    for pod in pending.pods:
        if rule.namespace is not None and pod.story.pod.namespace != rule.namespace:
            continue
        if pod.waited_seconds is not None and pod.waited_seconds > rule.threshold:
            late.setdefault(pod.reason, []).append(pod)
    found: Condition = {}
    for reason, pods in sorted(late.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        names = ", ".join(pod.story.pod.ref for pod in pods[:PODS_NAMED])
        more = len(pods) - PODS_NAMED
        names += f" and {more:,} more" if more > 0 else ""
        found[f"reason {reason}"] = (
            f"{len(pods):,} pod(s) pending for over {span_text(rule.threshold)}, {reason} "
            f"({reason_group_words(reason)}): {names}"
        )
    return found
