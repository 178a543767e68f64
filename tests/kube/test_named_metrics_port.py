"""HAMi's chart after v2.10 (HAMi PR #2895): the scheduler Service's port ``monitor`` has
``targetPort: metrics``, the container port named ``metrics``, whose number comes from
``scheduler.metricsBindAddress`` (here ``:9500``). Both routes through the local API server
with the official client: the Service proxy, resolved by the fake as the endpoints controller
does, and the pod proxy fallback on the named port."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.clusters.collect import collect_from_kubeconfig
from bot.clusters.deadline import Deadline
from bot.clusters.kube_client import api_client_for_context
from bot.clusters.kube_scrape import SchedulerMetricsUnreadable, scrape_scheduler
from tests.kube.fake_apiserver import (
    FakeApiServer,
    FakeCluster,
    FakeContainer,
    FakeServicePort,
    fixture_bytes,
    hami_cluster,
)

SCHEDULER_TEXT = fixture_bytes("scheduler-small.prom").decode()
NS = "kube-system"
LEADER = "hami-scheduler-5d8f7c9b6-x2kqp"
SERVICE_ROUTE = f"Service {NS}/hami-scheduler port monitor"
SERVICE_PATH = f"/api/v1/namespaces/{NS}/services/hami-scheduler%3Amonitor/proxy/metrics"
METRICS_PORT = 9500  # scheduler.metricsBindAddress ":9500"


def _pod_path(port: int) -> str:
    return f"/api/v1/namespaces/{NS}/pods/{LEADER}%3A{port}/proxy/metrics"


def _proxied(api: FakeApiServer) -> list[str]:
    return [r.path for r in api.requests if r.path.endswith("/proxy/metrics")]


@pytest.fixture
def cluster() -> FakeCluster:
    """The chart after v2.10 with ``metricsBindAddress: ":9500"``: the scheduler listens on 9500
    only, the Service (selecting the leader) targets the port by name, and no Service answer is
    canned, so the fake resolves ``monitor`` -> ``metrics`` -> 9500 on the leader pod."""
    cluster = hami_cluster()
    del cluster.service_proxy[(NS, "hami-scheduler", "monitor")]
    service = cluster.services[0]
    service.selector = {**service.selector, "hami.io/scheduler-role": "leader"}
    service.ports = [
        FakeServicePort("http", 443, 443),
        FakeServicePort("monitor", 31993, "metrics"),
    ]
    for pod in cluster.pods:
        if pod.name.startswith("hami-scheduler-"):
            for container in pod.containers:
                container.ports = tuple(
                    (name, METRICS_PORT if name == "metrics" else number)
                    for name, number in container.ports
                )
    cluster.pod_proxy[(NS, LEADER, METRICS_PORT)] = cluster.pod_proxy.pop((NS, LEADER, 9395))
    return cluster


def test_service_with_named_target_port_is_read_through_the_service(
    cluster: FakeCluster, api_server: FakeApiServer, kubeconfig: Path
) -> None:
    api, target = api_client_for_context(kubeconfig, "test")
    scrape = scrape_scheduler(api, target, None, Deadline(10))
    assert (scrape.text, scrape.namespace, scrape.route, scrape.notes) == (
        SCHEDULER_TEXT,
        NS,
        SERVICE_ROUTE,
        (),
    )
    # The client read the string targetPort without complaint, asked the Service proxy only,
    # and the API server took "metrics" to the leader's 9500.
    assert _proxied(api_server) == [SERVICE_PATH]
    assert cluster.service_backends == [(NS, LEADER, METRICS_PORT)]
    collected = collect_from_kubeconfig(kubeconfig, "test")
    assert collected.text == SCHEDULER_TEXT
    assert collected.notes == (f"Read through {SERVICE_ROUTE}.",)


@pytest.mark.parametrize(
    ("break_service", "service_failure", "service_asked"),
    [
        pytest.param(
            lambda c: setattr(c.services[0], "has_endpoints", False),
            f"{SERVICE_ROUTE}: no ready endpoints behind the Service (HTTP 503: no endpoints "
            'available for service "hami-scheduler:monitor")',
            True,
            id="service-answers-503",
        ),
        pytest.param(
            # A chart before PR #2895 with metricsBindAddress ":9500": the Service still
            # targets the number 9395, where nothing listens.
            lambda c: setattr(c.services[0], "ports", [FakeServicePort("monitor", 31993, 9395)]),
            f"{SERVICE_ROUTE}: backend unreachable through the API server (HTTP 503: error "
            "trying to reach service: dial tcp 10.244.1.17:9395: connect: connection refused)",
            True,
            id="service-targets-the-old-number",
        ),
        pytest.param(
            lambda c: setattr(c.services[0], "ports", [FakeServicePort("http", 443, 443)]),
            f'Service lookup: Service {NS}/hami-scheduler has no port named "monitor" (ports: '
            "http 443)",
            False,
            id="service-lacks-the-port",
        ),
    ],
)
def test_pod_fallback_uses_the_named_metrics_port_not_9395(
    cluster: FakeCluster,
    api_server: FakeApiServer,
    kubeconfig: Path,
    break_service: object,
    service_failure: str,
    service_asked: bool,
) -> None:
    break_service(cluster)  # type: ignore[operator]
    collected = collect_from_kubeconfig(kubeconfig, "test")
    assert collected.text == SCHEDULER_TEXT
    assert collected.notes == (
        f"Read through pod {NS}/{LEADER} port {METRICS_PORT}.",
        f"Read through the pod proxy because the Service route failed: {service_failure}.",
    )
    assert _proxied(api_server) == [
        *([SERVICE_PATH] if service_asked else []),
        _pod_path(METRICS_PORT),
    ]


# The Service selects the leader only; it declares no "metrics", so the Service has no endpoints.
UNDECLARED = (
    f"{SERVICE_ROUTE}: no ready endpoints behind the Service (HTTP 503: no endpoints available "
    'for service "hami-scheduler:monitor"), as its port "monitor" targets the container port '
    f'named "metrics", which pod {NS}/{LEADER} (ports: https 443) does not declare'
)


def _without_named_port(cluster: FakeCluster) -> None:
    """Scheduler pods that declare no container port named "metrics" (only the webhook's)."""
    for pod in cluster.pods:
        if pod.name.startswith("hami-scheduler-"):
            pod.containers = [
                FakeContainer("kube-scheduler"),
                FakeContainer("vgpu-scheduler-extender", ports=(("https", 443),)),
            ]


def test_pod_without_named_port_falls_back_to_9395(
    cluster: FakeCluster, api_server: FakeApiServer, kubeconfig: Path
) -> None:
    _without_named_port(cluster)
    cluster.pod_proxy[(NS, LEADER, 9395)] = cluster.pod_proxy.pop((NS, LEADER, METRICS_PORT))
    collected = collect_from_kubeconfig(kubeconfig, "test")
    assert collected.text == SCHEDULER_TEXT
    assert collected.notes == (
        f"Read through pod {NS}/{LEADER} port 9395.",
        f"Read through the pod proxy because the Service route failed: {UNDECLARED}.",
    )
    # Without the named port the endpoints controller leaves the pod out of the Service.
    assert cluster.service_backends == []
    assert _proxied(api_server) == [SERVICE_PATH, _pod_path(9395)]


def test_pod_without_named_port_says_which_port_was_tried(
    cluster: FakeCluster, kubeconfig: Path
) -> None:
    _without_named_port(cluster)
    # Nothing listens on 9395 either: the scheduler is on 9500, which no pod declares.
    with pytest.raises(SchedulerMetricsUnreadable) as caught:
        collect_from_kubeconfig(kubeconfig, "test")
    standby = "hami-scheduler-5d8f7c9b6-a7c2d"
    refused = (
        "backend unreachable through the API server (HTTP 503: error trying to reach pod: dial "
        "tcp 10.244.1.17:9395: connect: connection refused)"
    )
    assert [f.route for f in caught.value.failures] == [
        SERVICE_ROUTE,
        f"pod {NS}/{LEADER} port 9395",
        f"pod {NS}/{standby} port 9395",
    ]
    assert [f.problem for f in caught.value.failures] == ["no-target-port", "api", "api"]
    assert caught.value.message == (
        'Could not read the HAMi scheduler metrics of context "test". Tried '
        f"{UNDECLARED}; pod {NS}/{LEADER} port 9395: {refused}; "
        f"pod {NS}/{standby} port 9395: {refused}. "
        'The Service port "monitor" targets a container port by name that the scheduler pods '
        "do not declare, so the Service has no endpoints for it. HAMi's chart after v2.10 "
        'declares the scheduler\'s metrics port as "metrics" (from scheduler.metricsBindAddress) '
        "and targets that name: upgrade HAMi so that the scheduler Deployment and its Service "
        "come from the same chart release (helm upgrade)."
    )
