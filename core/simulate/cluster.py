"""The ground truth of a simulated HAMi cluster: devices, per-pod allocations, quotas.

Property tests compare a summary of the rendered text against these objects.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

MIB_BYTES: Final = 1024 * 1024
CORES_PER_GPU: Final = 100  # HAMi: an NVIDIA GPU's Totalcore is deviceCoreScaling x 100
GPUMEM_RESOURCE: Final = "nvidia.com/gpumem"
GPUCORES_RESOURCE: Final = "nvidia.com/gpucores"


@dataclass(frozen=True, slots=True)
class SimulatedDevice:
    """One GPU as HAMi registered it (``Totalcore`` / ``Totalmem``)."""

    node: str
    index: int
    uuid: str
    device_type: str
    core_limit: int
    mem_limit_mib: int


@dataclass(frozen=True, slots=True)
class SimulatedAllocation:
    """One (pod, device) entry: what one ``hami_vgpu_*`` series pair reports.

    HAMi collapses a pod's containers to one entry per GPU, so ``container_index`` is always
    ``"0"`` (HAMi v2.10's scheduler metrics).
    """

    namespace: str
    pod: str
    node: str
    device_uuid: str
    cores: int
    mem_mib: int


@dataclass(frozen=True, slots=True)
class SimulatedQuota:
    """HAMi's quota accounting for one (namespace, resource)."""

    namespace: str
    resource: str
    used: int
    limit: int | None  # None: no ResourceQuota limit set (HAMi prints limit="0")


@dataclass(frozen=True, slots=True)
class DeviceTotals:
    cores: int
    mem_mib: int
    shared_count: int


@dataclass(frozen=True, slots=True)
class SimulatedCluster:
    """The ground truth behind a simulated exposition."""

    devices: tuple[SimulatedDevice, ...]
    allocations: tuple[SimulatedAllocation, ...]
    # Namespaces HAMi keeps quota entries for (it never deletes them once created).
    quota_namespaces: tuple[str, ...]
    # (namespace, resource) -> limit, only where a ResourceQuota sets ``limits.<resource>``.
    quota_limits: tuple[tuple[str, str, int], ...]
    seed: int = 0
    step: int = 0

    def device_totals(self) -> dict[str, DeviceTotals]:
        """Per device UUID: summed cores and MiB, and the number of pods (task slots)."""
        cores: dict[str, int] = {d.uuid: 0 for d in self.devices}
        mem: dict[str, int] = dict.fromkeys(cores, 0)
        pods: dict[str, int] = dict.fromkeys(cores, 0)
        for a in self.allocations:
            cores[a.device_uuid] += a.cores
            mem[a.device_uuid] += a.mem_mib
            pods[a.device_uuid] += 1
        return {u: DeviceTotals(cores[u], mem[u], pods[u]) for u in cores}

    def namespace_totals(self) -> dict[str, tuple[int, int]]:
        """Per namespace with allocations: (cores, MiB) summed over all its pods and devices."""
        totals: dict[str, tuple[int, int]] = {}
        for a in self.allocations:
            cores, mem = totals.get(a.namespace, (0, 0))
            totals[a.namespace] = (cores + a.cores, mem + a.mem_mib)
        return totals

    def quotas(self) -> tuple[SimulatedQuota, ...]:
        """``hami_resource_quota_used`` rows: used = namespace sums, limit where set."""
        totals = self.namespace_totals()
        limits = {(ns, res): lim for ns, res, lim in self.quota_limits}
        rows: list[SimulatedQuota] = []
        for ns in self.quota_namespaces:
            cores, mem = totals.get(ns, (0, 0))
            rows.append(
                SimulatedQuota(ns, GPUCORES_RESOURCE, cores, limits.get((ns, GPUCORES_RESOURCE)))
            )
            rows.append(SimulatedQuota(ns, GPUMEM_RESOURCE, mem, limits.get((ns, GPUMEM_RESOURCE))))
        return tuple(rows)

    @property
    def nodes(self) -> tuple[str, ...]:
        return tuple(sorted({d.node for d in self.devices}))

    @property
    def pods(self) -> tuple[tuple[str, str], ...]:
        return tuple(sorted({(a.namespace, a.pod) for a in self.allocations}))
