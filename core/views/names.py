"""How GPUs, models and pods are named in every view."""

from __future__ import annotations

# Words that open most ``device_type`` labels and tell the reader nothing in a table: the
# scheduler writes "NVIDIA A100-PCIE-40GB", the vGPU monitor "NVIDIA-NVIDIA A100-PCIE-40GB",
# older drivers "NVIDIA-Tesla T4".
_PREFIXES = ("NVIDIA-", "NVIDIA ", "Tesla ", "Ascend-")


def short_type(device_type: str) -> str:
    """``NVIDIA A100-PCIE-40GB`` -> ``A100-PCIE-40GB``, ``NVIDIA-Tesla T4`` -> ``T4``.

    What remains is still a part of the label, so ``fit 1xA100-PCIE-40GB`` matches it.
    """
    name = device_type
    changed = True
    while changed:
        changed = False
        for prefix in _PREFIXES:
            if name.startswith(prefix) and len(name) > len(prefix):
                name = name[len(prefix) :]
                changed = True
    return name


def gpu_name(node: str, device_index: int) -> str:
    """``gpu-node-01/0``: a GPU by its node and index (easier to find than its UUID); ``?/0``
    when no series names its node (the Ascend device plugin's monitor writes none)."""
    return f"{node or '?'}/{device_index}"


def pod_name(namespace: str, pod: str) -> str:
    return f"{namespace}/{pod}"
