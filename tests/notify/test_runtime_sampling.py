"""The GPU-hours sampler reads a cluster's vGPU monitors too where its entry allows runtime
scrapes, so the snapshots it keeps know which allocations sat idle (a kubeconfig-registered
cluster on the local Kubernetes API server; the official client over real HTTP)."""

from __future__ import annotations

from pathlib import Path

from bot.clusters.registry import load_registry
from bot.live import RegistryLiveSource
from bot.notify.sampling import UsageSampler
from bot.store.history import SnapshotHistory
from bot.store.memory import MemoryStore
from tests.kube.fake_apiserver import FakeApiServer, hami_cluster

REGISTRY = """\
clusters:
  - name: lab
    kubeconfig: lab.kubeconfig
    context: lab
    allowed_users: ["*"]
{runtime}    digests:
      - channel: C0GPUOPS1
        at: "09:00"
        weekdays: [mon]
        report: gpu-hours
        since: 7d
"""


def _sampled(tmp_path: Path, runtime_allowed: bool) -> SnapshotHistory:
    with FakeApiServer(hami_cluster()) as kube:
        kube.write_kubeconfig(tmp_path / "lab.kubeconfig", context="lab")
        registry_file = tmp_path / "clusters.yaml"
        runtime = "    runtime_allowed: true\n" if runtime_allowed else ""
        registry_file.write_text(REGISTRY.format(runtime=runtime))
        store = MemoryStore()
        live = RegistryLiveSource(load_registry(registry_file), store)
        assert UsageSampler(live.registry, live).tick() == [("lab", "lab")]
        assert live.history is not None
        return live.history


def test_with_runtime_allowed_the_kept_snapshot_knows_the_idle_allocations(
    tmp_path: Path,
) -> None:
    [snapshot] = _sampled(tmp_path, runtime_allowed=True).snapshots("lab", "lab")
    # The monitors answer on one node: its containers are measured (none of them idle).
    assert snapshot.idle == ()


def test_without_it_nothing_is_known_of_use(tmp_path: Path) -> None:
    [snapshot] = _sampled(tmp_path, runtime_allowed=False).snapshots("lab", "lab")
    assert snapshot.idle is None
