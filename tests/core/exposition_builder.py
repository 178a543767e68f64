"""Small scheduler expositions written line by line, for rule tests that need odd states."""

from __future__ import annotations

from dataclasses import dataclass, field

MIB = 1024 * 1024


@dataclass
class Scheduler:
    lines: list[str] = field(default_factory=list)

    def device(
        self,
        node: str,
        index: int,
        *,
        cores: float,
        mem_mib: float,
        limit_mib: float = 40960,
        core_limit: float = 100,
        shared: int | None = None,
        ratio: float | None = None,
        uuid: str | None = None,
    ) -> str:
        uuid = uuid or f"GPU-{node}-{index}"
        labels = (
            f'device_index="{index}",device_type="NVIDIA A100-PCIE-40GB",'
            f'device_uuid="{uuid}",node="{node}",zone="vGPU"'
        )
        self.lines += [
            f"hami_gpu_core_limit_ratio{{{labels}}} {core_limit:g}",
            f"hami_gpu_core_allocated_ratio{{{labels}}} {cores:g}",
            f"hami_gpu_memory_limit_bytes{{{labels}}} {limit_mib * MIB:g}",
            f"hami_gpu_memory_allocated_bytes{{{labels}}} {mem_mib * MIB:g}",
        ]
        if shared is not None:
            self.lines.append(f"hami_gpu_shared_count{{{labels}}} {shared:g}")
        if ratio is not None:
            self.lines.append(f"hami_node_gpu_memory_allocated_ratio{{{labels}}} {ratio:g}")
        return uuid

    def pod(
        self, namespace: str, pod: str, node: str, uuid: str, *, cores: float, mem_mib: float
    ) -> None:
        labels = (
            f'container_index="0",device_uuid="{uuid}",namespace="{namespace}",node="{node}",'
            f'pod="{pod}",zone="vGPU"'
        )
        self.lines += [
            f"hami_vgpu_core_allocated_ratio{{{labels}}} {cores:g}",
            f"hami_vgpu_memory_allocated_bytes{{{labels}}} {mem_mib * MIB:g}",
        ]

    def quota(
        self, namespace: str, resource: str, used: float, *, limit: float | None = None
    ) -> None:
        label = f"{limit:g}" if limit is not None else "0"
        self.lines.append(
            f'hami_resource_quota_used{{limit="{label}",namespace="{namespace}",'
            f'quota_name="{resource}",zone="vGPU"}} {used:g}'
        )
        if limit is not None:
            self.lines.append(
                f'hami_resource_quota_limit{{namespace="{namespace}",quota_name="{resource}",'
                f'zone="vGPU"}} {limit:g}'
            )

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"
