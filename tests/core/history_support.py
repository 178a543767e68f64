"""Simulated clusters and their snapshots for the history tests, with the ground truth."""

from __future__ import annotations

from core.api import summarize_text
from core.history.snapshot import Snapshot, snapshot_of
from core.model import SourceInfo, Summary
from core.simulate import SimulatedCluster, render_exposition


def summary_of(cluster: SimulatedCluster, name: str = "sim") -> Summary:
    source = SourceInfo(kind="cluster", label=f"cluster {name}", cluster=name)
    return summarize_text(render_exposition(cluster), source)


def snapshot_at(cluster: SimulatedCluster, taken_at: float, name: str = "sim") -> Snapshot:
    return snapshot_of(summary_of(cluster, name), taken_at)


def pods_of(cluster: SimulatedCluster) -> dict[tuple[str, str], tuple[int, int, int]]:
    """(namespace, pod) -> (GPUs, cores, MiB) straight from the simulated allocations."""
    held: dict[tuple[str, str], tuple[int, int, int]] = {}
    for a in cluster.allocations:
        gpus, cores, mem = held.get((a.namespace, a.pod), (0, 0, 0))
        held[(a.namespace, a.pod)] = (gpus + 1, cores + a.cores, mem + a.mem_mib)
    return held


def free_whole_per_model(cluster: SimulatedCluster) -> dict[str, int]:
    """GPUs with no allocation at all, per device type."""
    totals = cluster.device_totals()
    free: dict[str, int] = {}
    for d in cluster.devices:
        t = totals[d.uuid]
        free.setdefault(d.device_type, 0)
        if t.cores == 0 and t.mem_mib == 0:
            free[d.device_type] += 1
    return free


def inconsistent_uuids(cluster: SimulatedCluster) -> set[str]:
    """GPUs holding memory but no cores (or cores but no memory): HAMi's inconsistent state."""
    return {
        uuid
        for uuid, t in cluster.device_totals().items()
        if (t.mem_mib > 0 and t.cores == 0) or (t.cores > 0 and t.mem_mib == 0)
    }
