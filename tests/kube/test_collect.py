"""``collect_metrics`` for registered clusters: context choice, policy, JSON round trip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.clusters.collect import CollectedMetrics, collect_metrics
from bot.clusters.errors import CollectionError
from bot.clusters.registry import ClusterEntry, load_registry
from tests.kube.fake_apiserver import FakeApiServer


@pytest.fixture
def entry(api_server: FakeApiServer, tmp_path: Path) -> ClusterEntry:
    api_server.write_kubeconfig(tmp_path / "prod.yaml", contexts=("prod-ro", "prod-admin"))
    (tmp_path / "clusters.yaml").write_text(
        "clusters:\n"
        "  - name: prod\n"
        "    display_name: Production\n"
        "    kubeconfig: prod.yaml\n"
        "    contexts: [prod-ro, prod-admin]\n"
        "    hami_namespace: kube-system\n"
        "    runtime_allowed: true\n"
        "    nvidia_smi_allowed: true\n"
        "    allowed_users: [U1]\n"
    )
    found = load_registry(tmp_path / "clusters.yaml").get("prod")
    assert found is not None
    return found


def test_registered_cluster_with_runtime_and_real_usage_round_trips(entry: ClusterEntry) -> None:
    collected = collect_metrics(entry, "prod-admin", runtime=True, nvidia_smi=True)
    assert collected.cluster == "prod" and collected.context == "prod-admin"
    assert collected.source.label == "Production (prod-admin)"
    assert collected.source.cluster == "prod"
    assert len(collected.monitor_texts) == 1 and len(collected.missing_monitors) == 1
    assert collected.real_usage is not None and len(collected.real_usage) == 5
    stored = json.loads(json.dumps(collected.to_json()))
    assert CollectedMetrics.from_json(stored) == collected


def test_context_must_be_registered(entry: ClusterEntry) -> None:
    with pytest.raises(CollectionError) as caught:
        collect_metrics(entry, "dev")
    assert caught.value.message == (
        'Context "dev" is not registered for cluster "prod" (registered: prod-ro, prod-admin). '
        f"Pick one of those, or ask an admin to add it ({entry.defined_at})."
    )
    with pytest.raises(CollectionError) as several:
        collect_metrics(entry, None)
    assert several.value.message == (
        'Cluster "prod" has several contexts (prod-ro, prod-admin); pick one.'
    )


def test_messages_name_the_registered_cluster(
    api_server: FakeApiServer, entry: ClusterEntry
) -> None:
    api_server.cluster.token = "rotated"
    with pytest.raises(CollectionError) as caught:
        collect_metrics(entry, "prod-ro")
    assert caught.value.message.startswith(
        'The Kubernetes API server of cluster "prod" (context "prod-ro") at '
    )


def test_in_cluster_outside_a_pod() -> None:
    entry = ClusterEntry(name="here", display_name="here", source_kind="in-cluster")
    with pytest.raises(CollectionError) as caught:
        collect_metrics(entry, None)
    assert caught.value.message.startswith(
        'cluster "here" is registered as in_cluster, but this process does not run in a '
        "Kubernetes pod with a service account ("
    )


def test_unsupported_json_version() -> None:
    with pytest.raises(ValueError, match="unsupported CollectedMetrics version 99"):
        CollectedMetrics.from_json({"version": 99})
