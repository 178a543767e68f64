"""Realistic HAMi cluster states, deterministic per seed, drifting slowly step by step."""

from __future__ import annotations

import math
import random
import uuid
from dataclasses import dataclass
from typing import Final

from core.simulate.cluster import (
    CORES_PER_GPU,
    GPUCORES_RESOURCE,
    GPUMEM_RESOURCE,
    SimulatedAllocation,
    SimulatedCluster,
    SimulatedDevice,
)

MAX_NODES: Final = 10_000
MAX_GPUS_PER_NODE: Final = 64

# (device_type as HAMi registers it, Totalmem in MiB as NVML reports it, share of nodes).
# HAMi prefixes "NVIDIA-" to NVML names that do not already start with NVIDIA.
DEVICE_MODELS: Final[tuple[tuple[str, int, float], ...]] = (
    ("NVIDIA A100-PCIE-40GB", 40960, 0.25),
    ("NVIDIA A100-SXM4-80GB", 81920, 0.15),
    ("NVIDIA H100 80GB HBM3", 81559, 0.20),
    ("NVIDIA-Tesla T4", 15360, 0.20),
    ("NVIDIA L4", 23034, 0.12),
    ("NVIDIA-Tesla V100-SXM2-32GB", 32768, 0.08),
)

# Namespaces, the apps that run in them, and their relative weight when a pod is placed.
NAMESPACE_POOL: Final[tuple[tuple[str, tuple[str, ...], int], ...]] = (
    ("ml-training", ("ddp-worker", "train-llama", "finetune-job"), 9),
    ("llm-serving", ("vllm-serve", "tgi-infer", "embed-svc"), 8),
    ("team-a", ("llm-infer", "train-full"), 5),
    ("team-b", ("embed-svc", "notebook"), 4),
    ("ml-batch", ("batch-infer", "ddp-worker"), 4),
    ("research", ("notebook", "jupyter-lab"), 3),
    ("cv-pipeline", ("yolo-detect", "ocr-worker"), 3),
    ("recsys", ("ranker", "feature-embed"), 2),
    ("speech", ("whisper-asr", "tts-serve"), 2),
    ("data-science", ("rapids-job", "notebook"), 2),
    ("ci-gpu", ("gpu-smoke-test",), 1),
    ("sandbox", ("playground",), 1),
)

# Kubernetes generateName suffixes use this alphabet (no vowels, no confusable digits).
_NAME_ALPHABET: Final = "bcdfghjklmnpqrstvwxz2456789"


@dataclass(slots=True)
class _Pod:
    namespace: str
    name: str
    node: str
    entries: list[tuple[str, int, int]]  # (device uuid, cores, mem MiB)


class _State:
    """Mutable working copy of a cluster while it is generated or drifted."""

    def __init__(
        self,
        devices: tuple[SimulatedDevice, ...],
        quota_namespaces: list[str],
        quota_limits: dict[tuple[str, str], int],
    ) -> None:
        self.devices = devices
        self.by_node: dict[str, list[SimulatedDevice]] = {}
        for d in devices:
            self.by_node.setdefault(d.node, []).append(d)
        self.used_cores: dict[str, int] = {d.uuid: 0 for d in devices}
        self.used_mem: dict[str, int] = {d.uuid: 0 for d in devices}
        self.pods: dict[tuple[str, str], _Pod] = {}
        self.ns_cores: dict[str, int] = {}
        self.ns_mem: dict[str, int] = {}
        self.quota_namespaces = quota_namespaces
        self.quota_limits = quota_limits

    def free(self, d: SimulatedDevice) -> tuple[int, int]:
        return d.core_limit - self.used_cores[d.uuid], d.mem_limit_mib - self.used_mem[d.uuid]

    def quota_allows(self, namespace: str, cores: int, mem_mib: int) -> bool:
        # HAMi refuses to schedule a pod whose request would exceed the namespace's limit.
        core_limit = self.quota_limits.get((namespace, GPUCORES_RESOURCE))
        mem_limit = self.quota_limits.get((namespace, GPUMEM_RESOURCE))
        if core_limit is not None and self.ns_cores.get(namespace, 0) + cores > core_limit:
            return False
        return mem_limit is None or self.ns_mem.get(namespace, 0) + mem_mib <= mem_limit

    def add(self, pod: _Pod) -> None:
        self.pods[(pod.namespace, pod.name)] = pod
        if pod.namespace not in self.quota_namespaces:
            self.quota_namespaces.append(pod.namespace)
        for dev_uuid, cores, mem in pod.entries:
            self.used_cores[dev_uuid] += cores
            self.used_mem[dev_uuid] += mem
            self.ns_cores[pod.namespace] = self.ns_cores.get(pod.namespace, 0) + cores
            self.ns_mem[pod.namespace] = self.ns_mem.get(pod.namespace, 0) + mem

    def remove(self, key: tuple[str, str]) -> None:
        pod = self.pods.pop(key)
        for dev_uuid, cores, mem in pod.entries:
            self.used_cores[dev_uuid] -= cores
            self.used_mem[dev_uuid] -= mem
            self.ns_cores[pod.namespace] -= cores
            self.ns_mem[pod.namespace] -= mem

    def freeze(self, seed: int, step: int) -> SimulatedCluster:
        allocations = tuple(
            SimulatedAllocation(p.namespace, p.name, p.node, dev_uuid, cores, mem)
            for p in self.pods.values()
            for dev_uuid, cores, mem in p.entries
        )
        limits = tuple(sorted((ns, res, lim) for (ns, res), lim in self.quota_limits.items()))
        return SimulatedCluster(
            devices=self.devices,
            allocations=allocations,
            quota_namespaces=tuple(sorted(self.quota_namespaces)),
            quota_limits=limits,
            seed=seed,
            step=step,
        )

    @classmethod
    def thaw(cls, cluster: SimulatedCluster) -> _State:
        limits = {(ns, res): lim for ns, res, lim in cluster.quota_limits}
        state = cls(cluster.devices, list(cluster.quota_namespaces), limits)
        grouped: dict[tuple[str, str], _Pod] = {}
        for a in cluster.allocations:
            key = (a.namespace, a.pod)
            if key not in grouped:
                grouped[key] = _Pod(a.namespace, a.pod, a.node, [])
            grouped[key].entries.append((a.device_uuid, a.cores, a.mem_mib))
        for pod in grouped.values():
            state.add(pod)
        return state


class _Namer:
    """Deployment-style pod names (``app-<replicaset hash>-<suffix>``), unique per namespace."""

    def __init__(self, seed: int) -> None:
        self._seed = seed

    def replicaset_hash(self, namespace: str, app: str) -> str:
        rng = random.Random(f"rs:{self._seed}:{namespace}:{app}")
        return "".join(rng.choice(_NAME_ALPHABET) for _ in range(rng.choice((9, 10))))

    def new_name(self, rng: random.Random, state: _State, namespace: str, app: str) -> str:
        prefix = f"{app}-{self.replicaset_hash(namespace, app)}-"
        while True:
            name = prefix + "".join(rng.choice(_NAME_ALPHABET) for _ in range(5))
            if (namespace, name) not in state.pods:
                return name


def _active_namespaces(nodes: int) -> tuple[tuple[str, tuple[str, ...], int], ...]:
    # Small clusters get a few tenants, large ones all of them.
    count = max(3, min(len(NAMESPACE_POOL), 3 + nodes // 2))
    return NAMESPACE_POOL[:count]


def _pick_namespace(
    rng: random.Random, pool: tuple[tuple[str, tuple[str, ...], int], ...]
) -> tuple[str, str]:
    ns, apps, _ = rng.choices(pool, weights=[w for _, _, w in pool])[0]
    return ns, rng.choice(apps)


def _fractional_request(rng: random.Random, mem_limit_mib: int) -> tuple[int, int]:
    """A fractional (cores, MiB) request as pods write them.

    ``nvidia.com/gpumem-percentage`` becomes ``Totalmem * pct / 100`` MiB (integer division);
    a pod that sets memory but no ``gpucores`` gets 0 cores: HAMi's webhook only defaults
    cores to 100 for whole-memory requests, hence memory-only allocations.
    """
    if rng.random() < 0.4:
        pct = rng.choice((10, 20, 25, 30, 50))
        mem = mem_limit_mib * pct // 100
        cores = pct if rng.random() < 0.9 else 0
    else:
        sizes = [
            m
            for m in (1024, 2048, 4096, 6144, 8192, 10240, 12288, 16384, 20480)
            if m <= mem_limit_mib // 2
        ]
        mem = rng.choice(sizes or [max(1, mem_limit_mib // 4)])
        cores = rng.choice((10, 15, 20, 25, 30, 40, 50)) if rng.random() < 0.92 else 0
    return cores, mem


def _try_fractional(
    rng: random.Random,
    state: _State,
    namer: _Namer,
    pool: tuple[tuple[str, tuple[str, ...], int], ...],
    device: SimulatedDevice,
) -> bool:
    ns, app = _pick_namespace(rng, pool)
    cores, mem = _fractional_request(rng, device.mem_limit_mib)
    free_cores, free_mem = state.free(device)
    if cores > free_cores or mem > free_mem or mem <= 0 or not state.quota_allows(ns, cores, mem):
        return False
    state.add(
        _Pod(ns, namer.new_name(rng, state, ns, app), device.node, [(device.uuid, cores, mem)])
    )
    return True


def _try_whole(
    rng: random.Random,
    state: _State,
    namer: _Namer,
    pool: tuple[tuple[str, tuple[str, ...], int], ...],
    devices: list[SimulatedDevice],
    half: bool = False,
) -> bool:
    """One pod on ``devices`` (same node): whole GPUs, or 50 % slices (gpumem-percentage 50)."""
    ns, app = _pick_namespace(rng, pool)
    entries = []
    for d in devices:
        cores = d.core_limit // 2 if half else d.core_limit
        mem = d.mem_limit_mib * 50 // 100 if half else d.mem_limit_mib
        free_cores, free_mem = state.free(d)
        if cores > free_cores or mem > free_mem:
            return False
        entries.append((d.uuid, cores, mem))
    if not state.quota_allows(ns, sum(e[1] for e in entries), sum(e[2] for e in entries)):
        return False
    state.add(_Pod(ns, namer.new_name(rng, state, ns, app), devices[0].node, entries))
    return True


def _make_devices(
    rng: random.Random, nodes: int, gpus_per_node: int
) -> tuple[SimulatedDevice, ...]:
    width = max(2, len(str(nodes)))
    weights = [w for _, _, w in DEVICE_MODELS]
    devices: list[SimulatedDevice] = []
    for n in range(nodes):
        node = f"gpu-node-{n + 1:0{width}d}"
        # One model per node, as GPU node pools are provisioned.
        device_type, mem_mib, _ = rng.choices(DEVICE_MODELS, weights=weights)[0]
        for i in range(gpus_per_node):
            dev_uuid = f"GPU-{uuid.UUID(int=rng.getrandbits(128), version=4)}"
            devices.append(SimulatedDevice(node, i, dev_uuid, device_type, CORES_PER_GPU, mem_mib))
    return tuple(devices)


def _populate(rng: random.Random, state: _State, namer: _Namer, nodes: int) -> None:
    pool = _active_namespaces(nodes)
    for node_devices in state.by_node.values():
        free = list(node_devices)
        # A multi-GPU job on some nodes: whole GPUs, or 50 % of each (e.g. DDP workers).
        if len(free) >= 2 and rng.random() < 0.35:
            span = rng.choice([k for k in (2, 4, 8) if k <= len(free)])
            half = rng.random() < 0.4
            if _try_whole(rng, state, namer, pool, free[:span], half=half):
                if half:
                    for d in free[:span]:
                        if rng.random() < 0.5:
                            _try_fractional(rng, state, namer, pool, d)
                free = free[span:]
        for d in free:
            r = rng.random()
            if r < 0.25:
                continue  # idle: schedulable whole GPU
            if r < 0.45:
                _try_whole(rng, state, namer, pool, [d])  # exclusive, full
            elif r < 0.82:
                for _ in range(rng.choice((2, 2, 3, 3, 4))):  # shared by 2-4 pods
                    _try_fractional(rng, state, namer, pool, d)
            elif r < 0.96:
                _try_fractional(rng, state, namer, pool, d)  # one fractional pod
            else:
                # A memory-only allocation: gpumem set, gpucores not (HAMi then allocates 0 cores).
                ns, app = _pick_namespace(rng, pool)
                mem = d.mem_limit_mib * rng.choice((10, 25, 40)) // 100
                state.add(_Pod(ns, namer.new_name(rng, state, ns, app), d.node, [(d.uuid, 0, mem)]))


def _set_quota_limits(rng: random.Random, state: _State, nodes: int) -> None:
    """ResourceQuota limits for some tenants: both resources, memory only, or none.

    Limits leave head-room over current use (HAMi would have refused pods beyond them).
    """
    for ns, _, _ in _active_namespaces(nodes):
        kind = rng.choice(("both", "both", "mem", "none", "none"))
        if kind == "none":
            continue
        used_mem = state.ns_mem.get(ns, 0)
        state.quota_limits[(ns, GPUMEM_RESOURCE)] = max(
            16384, math.ceil(used_mem * 1.5 / 4096) * 4096
        )
        if kind == "both":
            used_cores = state.ns_cores.get(ns, 0)
            state.quota_limits[(ns, GPUCORES_RESOURCE)] = max(
                100, math.ceil(used_cores * 1.5 / 100) * 100
            )
        if ns not in state.quota_namespaces:
            # A ResourceQuota with managed limits but no HAMi pods still gets series (used 0).
            state.quota_namespaces.append(ns)


# The drift steers the cluster's allocated cores towards a level that moves in a slow wave
# (busy and quiet hours): near what generation gives, 55 % +- 10 % over 96 steps.
TARGET_CORE_SHARE: Final = 0.55
WAVE_AMPLITUDE: Final = 0.10
WAVE_STEPS: Final = 96
# One namespace runs campaigns (a training push, a launch): for GROWTH_STEPS steps it gains a
# pod each step, until its quota or the GPUs say no; for the next RELEASE_STEPS its pods end,
# one a step; then it grows again.
GROWTH_STEPS: Final = 30
RELEASE_STEPS: Final = 18


# A growing namespace without a core quota stops at this share of the cluster's cores.
GROWTH_MAX_SHARE: Final = 0.5


def growing_namespace(cluster_or_state: SimulatedCluster | _State) -> str:
    """The namespace that grows as the cluster drifts: the one with the largest core quota
    (so its quota use climbs towards the limit and crosses 90 %), else the pool's busiest."""
    limits = (
        cluster_or_state.quota_limits
        if isinstance(cluster_or_state, SimulatedCluster)
        else [(ns, res, lim) for (ns, res), lim in cluster_or_state.quota_limits.items()]
    )
    cores = sorted((-lim, ns) for ns, res, lim in limits if res == GPUCORES_RESOURCE)
    return cores[0][1] if cores else NAMESPACE_POOL[0][0]


def _target_share(step: int) -> float:
    return TARGET_CORE_SHARE + WAVE_AMPLITUDE * math.sin(2 * math.pi * step / WAVE_STEPS)


def _core_share(state: _State) -> float:
    total = sum(d.core_limit for d in state.devices)
    return sum(state.used_cores.values()) / total if total else 0.0


def _campaign(
    rng: random.Random, state: _State, namer: _Namer, nodes: int, grower: str, step: int
) -> None:
    """The growing namespace's step: one pod more while it grows, one fewer while it lets go."""
    if (step - 1) % (GROWTH_STEPS + RELEASE_STEPS) < GROWTH_STEPS:
        total_cores = sum(d.core_limit for d in state.devices)
        if state.ns_cores.get(grower, 0) < GROWTH_MAX_SHARE * total_cores:
            _schedule_new(rng, state, namer, nodes, namespace=grower)
        return
    held = sorted(k for k in state.pods if k[0] == grower)
    if held:
        state.remove(held[rng.randrange(len(held))])


def _drift_once(state: _State, namer: _Namer, seed: int, step: int, nodes: int) -> None:
    """A few pods finish and new ones arrive; one namespace grows in campaigns (``_campaign``).

    Pods that end are mostly replaced by pods of the same shapes where they fit, which keeps
    the mix (whole, shared, multi-GPU, memory-only); fewer are replaced while the cluster is
    above the level of the moment (``_target_share``) and extra ones arrive below it, so the
    allocation rises and falls slowly instead of staying flat.
    """
    rng = random.Random(f"hami-sim-drift:{seed}:{step}")
    if not state.pods:
        _schedule_new(rng, state, namer, nodes)
        return
    grower = growing_namespace(state)
    churn = max(1, len(state.pods) // 150)
    candidates = sorted(k for k in state.pods if k[0] != grower) or sorted(state.pods)
    ending = [
        state.pods[k] for k in rng.sample(candidates, min(len(candidates), rng.randint(1, churn)))
    ]
    for pod in ending:
        state.remove((pod.namespace, pod.name))
    target = _target_share(step)
    for pod in ending:
        if _core_share(state) > target + 0.02 and rng.random() < 0.5:
            continue  # a quiet spell: this one is not replaced
        if rng.random() < 0.2:
            _schedule_new(rng, state, namer, nodes)  # now and then a different request arrives
        else:
            _reschedule(rng, state, namer, pod)
    if _core_share(state) < target - 0.02:
        _schedule_new(rng, state, namer, nodes)  # a busy spell: one more arrives
    _campaign(rng, state, namer, nodes, grower, step)


def _schedule_new(
    rng: random.Random, state: _State, namer: _Namer, nodes: int, namespace: str | None = None
) -> None:
    """A fresh request: a whole GPU when it lands on an idle one (half the time), else a slice.
    ``namespace`` chooses whose request it is (else a weighted pick of the pool)."""
    pool = _active_namespaces(nodes)
    if namespace is not None:
        apps = next((a for ns, a, _ in NAMESPACE_POOL if ns == namespace), ("job",))
        pool = ((namespace, apps, 1),)
    for _attempt in range(24):
        d = state.devices[rng.randrange(len(state.devices))]
        idle = state.free(d) == (d.core_limit, d.mem_limit_mib)
        if idle and rng.random() < 0.5:
            if _try_whole(rng, state, namer, pool, [d]):
                return
        elif _try_fractional(rng, state, namer, pool, d):
            return


def _reschedule(rng: random.Random, state: _State, namer: _Namer, ended: _Pod) -> None:
    """A new pod with the shape of ``ended`` on a random node where it fits (or not at all)."""
    shape = [(cores, mem) for _, cores, mem in ended.entries]
    cores_total = sum(c for c, _ in shape)
    mem_total = sum(m for _, m in shape)
    if not state.quota_allows(ended.namespace, cores_total, mem_total):
        return
    app = ended.name.rsplit("-", 2)[0]
    node_names = list(state.by_node)
    for _attempt in range(24):
        node = node_names[rng.randrange(len(node_names))]
        chosen: list[tuple[str, int, int]] = []
        for d in state.by_node[node]:
            cores, mem = shape[len(chosen)]
            free_cores, free_mem = state.free(d)
            if cores <= free_cores and mem <= free_mem:
                chosen.append((d.uuid, cores, mem))
                if len(chosen) == len(shape):
                    name = namer.new_name(rng, state, ended.namespace, app)
                    state.add(_Pod(ended.namespace, name, node, chosen))
                    return


def simulate_cluster(
    nodes: int, gpus_per_node: int, *, seed: int = 0, t: int = 0
) -> SimulatedCluster:
    """A realistic HAMi cluster state: the ground truth behind ``simulate_exposition``.

    A mix of device models, idle GPUs, GPUs shared by 2-4 pods, whole-GPU (exclusive) pods,
    multi-GPU pods (same node), memory-only allocations, several namespaces, quotas with and
    without limits. ``t`` drift steps follow the initial state (a few pods end and start each).
    """
    _check_size(nodes, gpus_per_node)
    if t < 0:
        raise ValueError(f"t must be 0 or more, got {t}")
    rng = random.Random(f"hami-sim:{seed}")
    devices = _make_devices(rng, nodes, gpus_per_node)
    state = _State(devices, [], {})
    namer = _Namer(seed)
    _populate(rng, state, namer, nodes)
    _set_quota_limits(rng, state, nodes)
    for step in range(1, t + 1):
        _drift_once(state, namer, seed, step, nodes)
    return state.freeze(seed, t)


def drift_cluster(cluster: SimulatedCluster, *, steps: int = 1) -> SimulatedCluster:
    """``cluster`` advanced by ``steps`` drift steps; equal to ``simulate_cluster(..., t=step)``."""
    state = _State.thaw(cluster)
    nodes = len(state.by_node)
    namer = _Namer(cluster.seed)
    for step in range(cluster.step + 1, cluster.step + steps + 1):
        _drift_once(state, namer, cluster.seed, step, nodes)
    return state.freeze(cluster.seed, cluster.step + steps)


def _check_size(nodes: int, gpus_per_node: int) -> None:
    if not 1 <= nodes <= MAX_NODES:
        raise ValueError(f"nodes must be between 1 and {MAX_NODES}, got {nodes}")
    if not 1 <= gpus_per_node <= MAX_GPUS_PER_NODE:
        raise ValueError(
            f"gpus_per_node must be between 1 and {MAX_GPUS_PER_NODE}, got {gpus_per_node}"
        )
