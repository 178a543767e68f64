"""A cluster in one line: the figures the fleet view and App Home show for each cluster.

GPUs, cores and memory allocated in percent, and free whole GPUs per model, so a person with
many clusters sees at a glance where a job of a given model could start. Computed from the
``Summary`` only (no recomputation from metrics); ``headline_text`` writes it in the summary's
number style.
"""

from __future__ import annotations

from dataclasses import dataclass

from core import number_style
from core.history.snapshot import model_figures
from core.model import Summary
from core.views.names import short_type


@dataclass(frozen=True, slots=True)
class ModelCapacity:
    model: str  # device type as HAMi registers it
    gpus: int
    free_whole: int


@dataclass(frozen=True, slots=True)
class ClusterHeadline:
    nodes: int
    gpus: int
    core_allocated_percent: float
    mem_allocated_percent: float
    free_whole_gpus: int
    pods: int
    inconsistent_gpus: int
    models: tuple[ModelCapacity, ...]  # by model name

    @property
    def allocation_known(self) -> bool:
        """False when the input had no scheduler device series (nothing to count)."""
        return self.gpus > 0


def headline_of(summary: Summary) -> ClusterHeadline:
    c = summary.cluster
    return ClusterHeadline(
        nodes=c.nodes,
        gpus=c.gpus,
        core_allocated_percent=c.core_allocated_percent,
        mem_allocated_percent=c.mem_allocated_percent,
        free_whole_gpus=c.free_whole_gpus,
        pods=c.pods,
        inconsistent_gpus=c.inconsistent_gpus,
        models=tuple(ModelCapacity(m.model, m.gpus, m.free_whole) for m in model_figures(summary)),
    )


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}" + ("" if number == 1 else "s")


def free_per_model_text(headline: ClusterHeadline) -> str:
    """``H100 80GB HBM3 3 of 16, L4 0 of 8``: free whole GPUs of each model, of its total."""
    return ", ".join(
        f"{short_type(m.model)} {m.free_whole:,} of {m.gpus:,}" for m in headline.models
    )


def headline_text(headline: ClusterHeadline) -> str:
    """The figures of one fleet line, e.g. ``64 GPUs on 8 nodes · cores 72.3% · memory
    68.1% · free whole GPUs: H100 80GB HBM3 3 of 16, L4 0 of 8``."""
    if not headline.allocation_known:
        return "no scheduler device series: allocation not known from these metrics"
    parts = [
        f"{_count(headline.gpus, 'GPU')} on {_count(headline.nodes, 'node')}",
        f"cores {number_style.percent(headline.core_allocated_percent)}",
        f"memory {number_style.percent(headline.mem_allocated_percent)}",
        f"free whole GPUs: {free_per_model_text(headline)}",
    ]
    if headline.inconsistent_gpus:
        parts.append(f"{_count(headline.inconsistent_gpus, 'inconsistent GPU')}")
    return " · ".join(parts)
