"""A simulated HAMi scheduler: realistic cluster states and their ``/metrics`` text.

Used for demos (``hami-summary simulate``), property tests and the benchmark. The state is
generated first (``simulate_cluster``: devices, per-pod allocations, quota limits) and is the
ground truth; ``render_exposition`` then writes it exactly as the HAMi scheduler and the Go
Prometheus client would. Everything is deterministic for a given ``seed``; ``t`` applies ``t``
drift steps in which a few pods finish and new ones arrive (more in busy spells, fewer in quiet
ones) while one namespace grows until its quota stops it and then lets go again, so a demo
exporter changes over time the way a shared cluster does.
"""

from __future__ import annotations

from core.simulate.cluster import (
    CORES_PER_GPU,
    GPUCORES_RESOURCE,
    GPUMEM_RESOURCE,
    MIB_BYTES,
    DeviceTotals,
    SimulatedAllocation,
    SimulatedCluster,
    SimulatedDevice,
    SimulatedQuota,
)
from core.simulate.exposition import go_float, render_exposition
from core.simulate.generate import (
    MAX_GPUS_PER_NODE,
    MAX_NODES,
    drift_cluster,
    simulate_cluster,
)

__all__ = [
    "CORES_PER_GPU",
    "GPUCORES_RESOURCE",
    "GPUMEM_RESOURCE",
    "MAX_GPUS_PER_NODE",
    "MAX_NODES",
    "MIB_BYTES",
    "DeviceTotals",
    "SimulatedAllocation",
    "SimulatedCluster",
    "SimulatedDevice",
    "SimulatedQuota",
    "drift_cluster",
    "go_float",
    "render_exposition",
    "simulate_cluster",
    "simulate_exposition",
]


def simulate_exposition(
    nodes: int,
    gpus_per_node: int,
    *,
    seed: int = 0,
    legacy: bool = False,
    both: bool = False,
    t: int = 0,
    replica: str | None = None,
    outcomes: bool = False,
) -> str:
    """The HAMi scheduler ``/metrics`` text of a simulated cluster (see ``simulate_cluster``);
    ``replica``: the replica's own gauges (``REPLICA_STATES``), None for none; ``outcomes``:
    the allocation outcome counters."""
    cluster = simulate_cluster(nodes, gpus_per_node, seed=seed, t=t)
    return render_exposition(cluster, legacy=legacy, both=both, replica=replica, outcomes=outcomes)
