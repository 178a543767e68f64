"""A vGPU monitor page for a simulated cluster's pods, in the format HAMi's monitor writes
(the families of ``tests/fixtures/vgpumonitor-small.prom``): each allocation's container at
``busy_percent`` SM utilisation using half its memory, or, for the pods named idle, at 0 %
using 1 % of it."""

from __future__ import annotations

from collections.abc import Collection

from core.simulate import SimulatedCluster

MIB = 1024 * 1024


def monitor_exposition(
    cluster: SimulatedCluster, idle_pods: Collection[tuple[str, str]], busy_percent: int = 60
) -> str:
    rows: dict[str, list[str]] = {
        "hami_vgpu_memory_limit_bytes": [],
        "hami_vgpu_memory_used_bytes": [],
        "hami_container_device_utilization_ratio": [],
    }
    for a in cluster.allocations:
        labels = (
            f'{{container="main",device_uuid="{a.device_uuid}",namespace="{a.namespace}",'
            f'pod="{a.pod}",vdevice_index="0",zone="vGPU"}}'
        )
        idle = (a.namespace, a.pod) in idle_pods
        limit = a.mem_mib * MIB
        rows["hami_vgpu_memory_limit_bytes"].append(f"{labels} {limit}")
        rows["hami_vgpu_memory_used_bytes"].append(f"{labels} {limit // (100 if idle else 2)}")
        rows["hami_container_device_utilization_ratio"].append(
            f"{labels} {0 if idle else busy_percent}"
        )
    lines = []
    for family, samples in rows.items():
        lines.append(f"# HELP {family} {family}")
        lines.append(f"# TYPE {family} gauge")
        lines.extend(f"{family}{sample}" for sample in samples)
    return "\n".join(lines) + "\n"
