"""HAMi's filter reason codes, in plain words.

The codes are those of HAMi's ``pkg/device/common/common.go``; the words say what the scheduler
checked (``pkg/device/nvidia/device.go``, ``Fit``; ``pkg/scheduler/score.go``) and what a user can
change. A code not listed here is shown as written, never dropped.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ReasonCode:
    code: str
    words: str  # what the scheduler found, of one GPU or node
    advice: str  # what would change the answer


REASON_CODES: dict[str, ReasonCode] = {
    reason.code: reason
    for reason in (
        ReasonCode(
            "CardInsufficientMemory",
            "not enough free GPU memory on the GPU for the memory asked per GPU",
            "ask for less memory per GPU (nvidia.com/gpumem) or wait for memory to be freed",
        ),
        ReasonCode(
            "CardInsufficientCore",
            "not enough free GPU cores on the GPU for the cores asked per GPU",
            "ask for fewer cores per GPU (nvidia.com/gpucores) or wait for cores to be freed",
        ),
        ReasonCode(
            "CardTimeSlicingExhausted",
            "the GPU already runs as many tasks as it may share (HAMi's deviceSplitCount)",
            "wait for a task to end, or raise deviceSplitCount in HAMi's device config",
        ),
        ReasonCode(
            "CardComputeUnitsExhausted",
            "all of the GPU's cores are allocated, and a request of 0 cores cannot go on it",
            "ask for some cores (nvidia.com/gpucores) or wait for cores to be freed",
        ),
        ReasonCode(
            "CardTypeMismatch",
            "the GPU's model is not one the pod allows (nvidia.com/use-gputype, nouse-gputype)",
            "check the pod's use-gputype / nouse-gputype annotations against the models present",
        ),
        ReasonCode(
            "CardUuidMismatch",
            "the GPU is excluded by the pod's nvidia.com/use-gpuuuid or nouse-gpuuuid annotation",
            "check the UUIDs in the pod's annotations against the GPUs present",
        ),
        ReasonCode(
            "CardNotHealth",
            "the GPU is reported unhealthy by the device plugin",
            "look at the node's device plugin and the GPU (nvidia-smi, Xid errors)",
        ),
        ReasonCode(
            "CardCordoned",
            "the GPU is cordoned in HAMi",
            "uncordon the GPU, or use another one",
        ),
        ReasonCode(
            "NumaNotFit",
            "the GPUs that would fit are not on one NUMA node, and the pod asks for NUMA binding",
            "ask for fewer GPUs, or drop the hami.io/numa-bind annotation",
        ),
        ReasonCode(
            "ExclusiveDeviceAllocateConflict",
            "the GPU is in use and the request needs it to itself (100 cores, or exclusive mode)",
            "ask for fewer than 100 cores per GPU, or wait for the GPU to empty",
        ),
        ReasonCode(
            "CardNotFoundCustomFilterRule",
            "no GPU passes the device's extra placement rule",
            "check the device's mode and the pod's vendor annotations",
        ),
        ReasonCode(
            "CardMigTopologyInfeasible",
            "no MIG layout of the GPU can hold the request next to what runs on it",
            "ask for a MIG size that fits the free layout, or wait for MIG instances to free",
        ),
        ReasonCode(
            "NodeInsufficientDevice",
            "the node has fewer GPUs of the type than the pod asks for",
            "ask for fewer GPUs per container (nvidia.com/gpu): a container's GPUs share one node",
        ),
        ReasonCode(
            "AllocatedCardsInsufficientRequest",
            "some GPUs of the node fit, but fewer than the pod asks for",
            "ask for fewer GPUs per container, or less per GPU, so enough GPUs of one node fit",
        ),
        ReasonCode(
            "ResourceQuotaNotFit",
            "the namespace's GPU quota would be exceeded",
            "free quota in the namespace, or ask its owner to raise the quota",
        ),
        ReasonCode(
            "ModeNotFit",
            "the GPU's mode (hami-core, mig, mps) is not the one the pod asks for",
            "check the pod's nvidia.com/vgpu-mode annotation against the GPUs' modes",
        ),
        ReasonCode(
            "NodeUnfitPod",
            "the node cannot take the pod (HAMi's per-node verdict)",
            "see the reason codes of the same pod for the cause",
        ),
    )
}


def reason_words(code: str) -> str:
    """The plain words for ``code``; an unknown code is shown as written."""
    known = REASON_CODES.get(code)
    return known.words if known else f"{code} (a reason code this version does not know)"
