"""A pending pod's GPU request, per container, in HAMi's terms (``core.fit_shape.Shape``)."""

from __future__ import annotations

from dataclasses import dataclass

from core.fit_shape import Shape
from core.pending.describe import ContainerResources, PodDescription, quantity

GPU = "nvidia.com/gpu"
CORES = "nvidia.com/gpucores"
MEMORY = "nvidia.com/gpumem"
MEMORY_PERCENT = "nvidia.com/gpumem-percentage"
USE_TYPE = "nvidia.com/use-gputype"
NO_USE_TYPE = "nvidia.com/nouse-gputype"
USE_UUID = "nvidia.com/use-gpuuuid"
NO_USE_UUID = "nvidia.com/nouse-gpuuuid"


@dataclass(frozen=True, slots=True)
class ContainerRequest:
    container: str
    init: bool
    shape: Shape | None  # None: no NVIDIA GPU asked (another vendor's resources, shown as written)
    resources: tuple[tuple[str, str], ...]  # HAMi's resources as written


def annotation_list(pod: PodDescription, key: str) -> tuple[str, ...]:
    """A comma-separated annotation (``A100,H100``) as its parts; () when not set."""
    value = pod.annotations.get(key, "")
    return tuple(part.strip() for part in value.split(",") if part.strip())


def container_requests(pod: PodDescription) -> tuple[ContainerRequest, ...]:
    """The containers that ask for HAMi's resources, in the order described."""
    found = []
    for container in pod.containers:
        resources = container.hami_resources()
        if resources:
            found.append(
                ContainerRequest(
                    container.name, container.init, _shape(container), tuple(resources.items())
                )
            )
    return tuple(found)


def _shape(container: ContainerResources) -> Shape | None:
    resources = container.hami_resources()
    gpus = quantity(resources.get(GPU, ""))
    if not gpus:
        return None
    cores = quantity(resources.get(CORES, ""))
    memory = quantity(resources.get(MEMORY, ""))  # HAMi reads gpumem as a number of MiB
    percent = quantity(resources.get(MEMORY_PERCENT, ""))
    text = " ".join(f"{name}={value}" for name, value in resources.items())
    return Shape(text=text, gpus=gpus, cores=cores, mem_mib=memory, mem_percent=percent)
