"""Namespace classes that mean the same at 6 GPUs and at 8,000: size, shape and spread.

* **Size**, against the whole cluster: a *dominant* tenant holds at least ``dominant_percent``
  of the allocated cores and of the allocated memory (it decides the "concentrated" verdict);
  otherwise its *footprint* (the largest of its shares of the cluster's cores, memory and
  GPUs: a pod on a GPU keeps whole-GPU jobs off it) makes it *major*, *medium* or *small*.
  Shares of the cluster, not of what happens to be allocated, so a tenant on 10 % of the fleet
  is never called small.
* **Shape**: *whole GPUs*, *fractions* of GPUs or *memory only* when that kind is at least
  ``shape_majority_percent`` of its allocations; otherwise *mixed*.
* **Spread**: the nodes its pods run on.
* **Quota**: its highest use of a quota limit, in percent (None without a limit): over it,
  near it (from ``near_quota_percent``), within it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from core.model import QuotaFigure
from core.settings import Thresholds

SIZE_LABELS = {
    "dominant": "dominant tenant",
    "major": "major tenant",
    "medium": "medium tenant",
    "small": "small tenant",
}


@dataclass(frozen=True, slots=True)
class Fleet:
    """The cluster's capacity, which a namespace's footprint is measured against."""

    core_limit: float
    mem_limit_mib: float
    gpus: int


@dataclass(frozen=True, slots=True)
class TenantShape:
    """What one namespace's allocations are made of."""

    allocations: int
    whole: int
    memory_only: int
    nodes: int


QuotaState = Literal["over", "near", "within", "no limit"]


@dataclass(frozen=True, slots=True)
class TenantClass:
    size: str
    shape: str
    footprint_percent: float
    quota_use_percent: float | None
    quota_state: QuotaState

    @property
    def label(self) -> str:
        """``major tenant, fractions`` (``, over quota`` / ``, near quota`` when so): what the
        tables show as the class."""
        quota = f", {self.quota_state} quota" if self.quota_state in ("over", "near") else ""
        return f"{SIZE_LABELS[self.size]}, {self.shape}{quota}"


def _share(part: float, whole: float) -> float:
    return part / whole * 100.0 if whole > 0 else 0.0


def quota_use_percent(quota: Sequence[QuotaFigure]) -> float | None:
    """The highest use of any quota limit, in percent; None when no limit is set."""
    uses = [f.used / f.limit * 100.0 for f in quota if f.limit is not None and f.limit > 0]
    return max(uses) if uses else None


def _shape(shape: TenantShape, t: Thresholds) -> str:
    if not shape.allocations:
        return "no pods"
    majority = shape.allocations * t.shape_majority_percent / 100.0
    fractions = shape.allocations - shape.whole - shape.memory_only
    for name, number in (
        ("whole GPUs", shape.whole),
        ("memory only", shape.memory_only),
        ("fractions", fractions),
    ):
        if number >= majority:
            return name
    return "mixed"


def classify(
    cores: float,
    mem_mib: float,
    gpus_touched: int,
    core_share_percent: float,
    mem_share_percent: float,
    shape: TenantShape,
    quota: Sequence[QuotaFigure],
    fleet: Fleet,
    t: Thresholds,
) -> TenantClass:
    """The class of one namespace (see the module's docstring)."""
    if fleet.gpus:
        footprint = max(
            _share(cores, fleet.core_limit),
            _share(mem_mib, fleet.mem_limit_mib),
            _share(gpus_touched, fleet.gpus),
        )
    else:
        # Without device series the cluster's size is not known: shares of what is allocated
        # are all there is.
        footprint = max(core_share_percent, mem_share_percent)
    if core_share_percent >= t.dominant_percent and mem_share_percent >= t.dominant_percent:
        size = "dominant"
    elif footprint >= t.major_tenant_percent:
        size = "major"
    elif footprint >= t.small_tenant_percent:
        size = "medium"
    else:
        size = "small"
    use = quota_use_percent(quota)
    state: QuotaState = "no limit"
    if use is not None:
        state = "over" if use > 100.0 else "near" if use >= t.near_quota_percent else "within"
    return TenantClass(size, _shape(shape, t), footprint, use, state)
