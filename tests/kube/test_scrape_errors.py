"""The facts a failed scrape carries, beside its message: which route failed and why, the HTTP
status, the request RBAC refused, the registry flag that is off. Through the official client
against the local API server, as in ``test_scrape.py`` (which checks the wording)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.clusters.collect import collect_from_kubeconfig, collect_metrics
from bot.clusters.errors import RefusedByRegistry
from bot.clusters.kube_errors import KubeApiError
from bot.clusters.kube_scrape import (
    SERVICE_LOOKUP,
    HamiNotFound,
    SchedulerMetricsUnreadable,
)
from bot.clusters.registry import ClusterEntry
from tests.kube.fake_apiserver import FakeCluster, FakeServicePort, ProxyAnswer

LEADER_ROUTE = "pod kube-system/hami-scheduler-5d8f7c9b6-x2kqp port 9395"
SERVICE_ROUTE = "Service kube-system/hami-scheduler port monitor"


def _unreadable(kubeconfig: Path) -> SchedulerMetricsUnreadable:
    with pytest.raises(SchedulerMetricsUnreadable) as caught:
        collect_from_kubeconfig(kubeconfig, "test")
    assert caught.value.namespace == "kube-system"
    assert caught.value.target.context == "test"
    return caught.value


def test_each_refused_route_names_the_request_rbac_refused(
    cluster: FakeCluster, kubeconfig: Path
) -> None:
    cluster.forbid("get", "services/proxy")
    cluster.forbid("get", "pods/proxy")
    error = _unreadable(kubeconfig)
    refused = [
        (f.route, f.problem, call.verb, call.resource, call.namespace, f.failure.status)
        for f in error.failures
        if (call := f.forbidden_call) is not None and f.failure is not None
    ]
    assert refused == [
        (SERVICE_ROUTE, "api", "get", "services/proxy", "kube-system", 403),
        (LEADER_ROUTE, "api", "get", "pods/proxy", "kube-system", 403),
    ]


def test_a_service_without_ready_endpoints_is_its_own_kind_of_failure(
    cluster: FakeCluster, kubeconfig: Path
) -> None:
    cluster.services[0].has_endpoints = False
    cluster.pod_proxy.clear()
    error = _unreadable(kubeconfig)
    service = error.failures[0]
    assert service.route == SERVICE_ROUTE and service.failure is not None
    assert (service.failure.kind, service.failure.status) == ("no-endpoints", 503)
    assert service.failure.call is not None and service.failure.call.resource == "services/proxy"
    # The pod behind it refuses connections: a 503 too, but not for want of endpoints.
    pod = error.failures[1]
    assert pod.failure is not None
    assert (pod.failure.kind, pod.failure.status) == ("unavailable", 503)


def test_a_missing_port_and_a_wrong_body_say_so_without_an_api_failure(
    cluster: FakeCluster, kubeconfig: Path
) -> None:
    cluster.services[0].ports = [FakeServicePort("http", 443, 443)]
    cluster.pod_proxy[("kube-system", "hami-scheduler-5d8f7c9b6-x2kqp", 9395)] = ProxyAnswer(
        b"<html>404 page not found</html>", content_type="text/html"
    )
    error = _unreadable(kubeconfig)
    assert [(f.route, f.problem, f.failure) for f in error.failures[:2]] == [
        (SERVICE_LOOKUP, "no-port", None),
        (LEADER_ROUTE, "not-metrics", None),
    ]


def test_a_refused_lookup_stops_the_scrape_with_its_facts(
    cluster: FakeCluster, kubeconfig: Path
) -> None:
    cluster.forbid("list", "pods")
    with pytest.raises(KubeApiError) as caught:
        collect_from_kubeconfig(kubeconfig, "test", namespace="kube-system")
    failure = caught.value.failure
    assert (failure.kind, failure.status) == ("forbidden", 403)
    assert failure.call is not None
    assert (failure.call.verb, failure.call.resource, failure.call.namespace) == (
        "list",
        "pods",
        "kube-system",
    )
    assert caught.value.hint == ""  # the namespace was named: nothing more to suggest
    assert "cannot list resource" in failure.server_message


def test_hami_not_found_names_where_it_looked(cluster: FakeCluster, kubeconfig: Path) -> None:
    cluster.pods = [p for p in cluster.pods if "hami-scheduler" not in p.name]
    for namespace in (None, "gpu"):
        with pytest.raises(HamiNotFound) as caught:
            collect_from_kubeconfig(kubeconfig, "test", namespace=namespace)
        assert caught.value.namespace == namespace
        assert caught.value.target.context == "test"


@pytest.mark.parametrize(
    ("wanted", "flag"), [("runtime", "runtime_allowed"), ("nvidia_smi", "nvidia_smi_allowed")]
)
def test_a_flag_the_registry_leaves_off_is_named(wanted: str, flag: str) -> None:
    entry = ClusterEntry(
        name="lab",
        display_name="Lab",
        source_kind="metrics-url",
        metrics_url="http://127.0.0.1:9/metrics",
        defined_at="clusters.yaml:7",
    )
    with pytest.raises(RefusedByRegistry) as caught:
        collect_metrics(entry, None, **{wanted: True})  # type: ignore[arg-type]
    assert (caught.value.cluster, caught.value.defined_at, caught.value.flag) == (
        "lab",
        "clusters.yaml:7",
        flag,
    )
    assert f"set {flag}: true" in caught.value.message
