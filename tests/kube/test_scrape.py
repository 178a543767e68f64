"""Scraping HAMi through the local Kubernetes API server with the official client: discovery by
label, Service proxy, pod proxy fallback, vGPU monitors, and every failure message."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.clusters.collect import collect_from_kubeconfig
from bot.clusters.deadline import Deadline
from bot.clusters.errors import CollectionError
from bot.clusters.kube_client import api_client_for_context
from bot.clusters.kube_scrape import scrape_scheduler
from tests.kube.fake_apiserver import (
    FakeApiServer,
    FakeCluster,
    FakeServicePort,
    ProxyAnswer,
    SilentServer,
    fixture_bytes,
    hami_cluster,
    write_kubeconfig,
)
from tests.kube.tls import foreign_ca_pem, session_certificate

SCHEDULER_TEXT = fixture_bytes("scheduler-small.prom").decode()
LEADER = "hami-scheduler-5d8f7c9b6-x2kqp"
SERVICE_KEY = ("kube-system", "hami-scheduler", "monitor")
LEADER_KEY = ("kube-system", LEADER, 9395)


def _collect_error(kubeconfig: Path, **kwargs: object) -> str:
    with pytest.raises(CollectionError) as caught:
        collect_from_kubeconfig(kubeconfig, "test", **kwargs)  # type: ignore[arg-type]
    message = caught.value.message
    assert "Traceback" not in message
    assert "test-token" not in message  # the bearer token never reaches a message
    return message


# --- the happy path ---------------------------------------------------------------------------


def test_finds_scheduler_by_label_and_reads_it_through_the_service_proxy(
    api_server: FakeApiServer, kubeconfig: Path
) -> None:
    collected = collect_from_kubeconfig(kubeconfig, "test")
    assert collected.text == SCHEDULER_TEXT
    assert collected.cluster == "test" and collected.context == "test"
    assert collected.source.kind == "cluster"
    assert collected.source.fetched_at == collected.fetched_at
    assert collected.notes == ("Read through Service kube-system/hami-scheduler port monitor.",)
    assert collected.real_usage is None and collected.monitor_texts == ()
    paths = [r.path for r in api_server.requests]
    assert paths[0] == "/api/v1/pods"  # every namespace, by label
    assert api_server.requests[0].query["labelSelector"] == [
        "app.kubernetes.io/component=hami-scheduler"
    ]
    assert "/api/v1/namespaces/kube-system/services" in paths
    proxy = [r for r in api_server.requests if r.path.endswith("/proxy/metrics")]
    assert [r.path for r in proxy] == [
        "/api/v1/namespaces/kube-system/services/hami-scheduler%3Amonitor/proxy/metrics"
    ]
    assert "gzip" in proxy[0].headers["accept-encoding"]  # gzip asked for and decoded


def test_configured_namespace_lists_only_there(api_server: FakeApiServer, kubeconfig: Path) -> None:
    collected = collect_from_kubeconfig(kubeconfig, "test", namespace="kube-system")
    assert collected.text == SCHEDULER_TEXT
    assert api_server.requests[0].path == "/api/v1/namespaces/kube-system/pods"


def test_hami_in_another_namespace_is_found_by_label(tmp_path: Path) -> None:
    with FakeApiServer(hami_cluster(namespace="hami-system")) as server:
        kubeconfig = server.write_kubeconfig(tmp_path / "config")
        collected = collect_from_kubeconfig(kubeconfig, "test")
    assert collected.notes[0] == "Read through Service hami-system/hami-scheduler port monitor."


def test_unknown_content_type_is_read_raw(cluster: FakeCluster, kubeconfig: Path) -> None:
    # The client would raise "Unsupported content type" if it deserialised this body itself.
    cluster.service_proxy[SERVICE_KEY].content_type = "application/octet-stream"
    assert collect_from_kubeconfig(kubeconfig, "test").text == SCHEDULER_TEXT


# --- pod proxy fallback -----------------------------------------------------------------------


def test_no_endpoints_falls_back_to_the_leader_pod(
    cluster: FakeCluster, api_server: FakeApiServer, kubeconfig: Path
) -> None:
    cluster.services[0].has_endpoints = False
    collected = collect_from_kubeconfig(kubeconfig, "test")
    assert collected.text == SCHEDULER_TEXT
    assert collected.notes == (
        f"Read through pod kube-system/{LEADER} port 9395.",
        "Read through the pod proxy because the Service route failed: Service "
        "kube-system/hami-scheduler port monitor: no ready endpoints behind the Service "
        '(HTTP 503: no endpoints available for service "hami-scheduler:monitor").',
    )
    # The leader is listed second but tried first.
    assert f"/api/v1/namespaces/kube-system/pods/{LEADER}%3A9395/proxy/metrics" in [
        r.path for r in api_server.requests
    ]


def test_missing_service_falls_back_to_pod_proxy(cluster: FakeCluster, kubeconfig: Path) -> None:
    cluster.services.clear()
    collected = collect_from_kubeconfig(kubeconfig, "test")
    assert collected.notes[1] == (
        "Read through the pod proxy because the Service route failed: Service lookup: no "
        'Service labelled app.kubernetes.io/component=hami-scheduler in namespace "kube-system".'
    )


def test_service_without_monitor_port_falls_back(cluster: FakeCluster, kubeconfig: Path) -> None:
    cluster.services[0].ports = [FakeServicePort("http", 443, 443)]
    collected = collect_from_kubeconfig(kubeconfig, "test")
    assert collected.text == SCHEDULER_TEXT
    assert 'has no port named "monitor" (ports: http 443)' in collected.notes[1]


def test_forbidden_service_proxy_falls_back(cluster: FakeCluster, kubeconfig: Path) -> None:
    cluster.forbid("get", "services/proxy")
    collected = collect_from_kubeconfig(kubeconfig, "test")
    assert collected.text == SCHEDULER_TEXT
    assert "RBAC refused `get services/proxy`" in collected.notes[1]


def test_follower_is_tried_when_the_leader_does_not_answer(
    cluster: FakeCluster, kubeconfig: Path
) -> None:
    cluster.services[0].has_endpoints = False
    del cluster.pod_proxy[LEADER_KEY]
    cluster.pod_proxy[("kube-system", "hami-scheduler-5d8f7c9b6-a7c2d", 9395)] = ProxyAnswer(
        SCHEDULER_TEXT.encode()
    )
    collected = collect_from_kubeconfig(kubeconfig, "test")
    assert (
        collected.notes[0]
        == "Read through pod kube-system/hami-scheduler-5d8f7c9b6-a7c2d port 9395."
    )


# --- failures: each has its own message --------------------------------------------------------


def test_unreachable_api_server(tmp_path: Path) -> None:
    with FakeApiServer(hami_cluster()) as server:
        kubeconfig = server.write_kubeconfig(tmp_path / "config")
        url = server.url
    message = _collect_error(kubeconfig)
    assert message == (
        f'Cannot reach the Kubernetes API server of context "test" at {url}: connection refused. '
        "Check the server address in the kubeconfig, that the cluster is running, and that this "
        "machine can reach it (VPN, firewall, proxy)."
    )


def test_tls_failure(api_server: FakeApiServer, tmp_path: Path) -> None:
    kubeconfig = api_server.write_kubeconfig(tmp_path / "config", ca_pem=foreign_ca_pem())
    message = _collect_error(kubeconfig)
    assert message.startswith(
        f'TLS verification failed for the Kubernetes API server of context "test" at '
        f"{api_server.url}: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed"
    )
    assert message.endswith(
        "The kubeconfig's certificate-authority data does not match the server's certificate "
        "(or the address is not the one the certificate names): get a fresh kubeconfig for "
        "this cluster."
    )


def test_expired_credentials(api_server: FakeApiServer, tmp_path: Path) -> None:
    kubeconfig = api_server.write_kubeconfig(tmp_path / "config", token="expired-token")
    message = _collect_error(kubeconfig)
    assert message == (
        f'The Kubernetes API server of context "test" at {api_server.url} rejected the '
        "credentials (HTTP 401 Unauthorized): the token or client certificate of this kubeconfig "
        "has expired or was revoked. Refresh the kubeconfig (for cloud clusters, run the "
        "provider's get-credentials command again) or issue a new ServiceAccount token."
    )
    assert "expired-token" not in message


def test_forbidden_cluster_wide_pod_list(cluster: FakeCluster, kubeconfig: Path) -> None:
    cluster.forbid("list", "pods")
    cluster.forbid_cluster_scope_only = True
    message = _collect_error(kubeconfig)
    assert message == (
        'RBAC on context "test" refused `list pods` in all namespaces (HTTP 403 Forbidden: pods '
        'is forbidden: User "system:serviceaccount:hami-summary:reader" cannot list resource '
        '"pods" in API group "" at the cluster scope), needed for looking for the HAMi scheduler '
        'pods. Grant it with a ClusterRole with the rule {apiGroups: [""], resources: ["pods"], '
        'verbs: ["list"]}, bound to the identity of this kubeconfig. Or, if this identity may '
        "only read the HAMi namespace, name it: --namespace NS on the command line, "
        "hami_namespace in the cluster registry."
    )
    # Naming the namespace works with the same rights.
    assert collect_from_kubeconfig(kubeconfig, "test", namespace="kube-system").text


def test_forbidden_namespaced_pod_list(cluster: FakeCluster, kubeconfig: Path) -> None:
    cluster.forbid("list", "pods")
    message = _collect_error(kubeconfig, namespace="kube-system")
    assert message.startswith(
        'RBAC on context "test" refused `list pods` in namespace "kube-system" (HTTP 403 Forbidden'
    )
    assert 'Grant it with a Role in namespace "kube-system" with the rule' in message


def test_hami_not_found(cluster: FakeCluster, kubeconfig: Path) -> None:
    cluster.pods = [p for p in cluster.pods if "hami-scheduler" not in p.name]
    assert _collect_error(kubeconfig) == (
        'HAMi not found on context "test": no pods labelled '
        "app.kubernetes.io/component=hami-scheduler in any namespace these credentials can list. "
        "Check that HAMi is installed (helm list -A | grep hami) and, if it runs in another "
        "namespace, give that one (--namespace, or hami_namespace in the registry)."
    )
    message = _collect_error(kubeconfig, namespace="gpu")
    assert 'in namespace "gpu"' in message


def test_service_missing_and_pod_port_closed(cluster: FakeCluster, kubeconfig: Path) -> None:
    cluster.services.clear()
    cluster.pod_proxy.clear()
    message = _collect_error(kubeconfig)
    assert message.startswith(
        'Could not read the HAMi scheduler metrics of context "test". Tried Service lookup: no '
        'Service labelled app.kubernetes.io/component=hami-scheduler in namespace "kube-system"; '
        f"pod kube-system/{LEADER} port 9395: backend unreachable through the API server "
        "(HTTP 503: error trying to reach pod: dial tcp 10.244.1.17:9395: connect: connection "
        "refused)"
    )
    assert (
        "HAMi's chart creates a Service labelled app.kubernetes.io/component=hami-scheduler with "
        'a port named "monitor"; re-install or upgrade the chart if it is missing.'
    ) in message


def test_service_port_missing_and_pod_proxy_forbidden(
    cluster: FakeCluster, kubeconfig: Path
) -> None:
    cluster.services[0].ports = [FakeServicePort("http", 443, 443)]
    cluster.forbid("get", "pods/proxy")
    message = _collect_error(kubeconfig)
    assert (
        'Service kube-system/hami-scheduler has no port named "monitor" (ports: http 443)'
        in message
    )
    assert (
        f"pod kube-system/{LEADER} port 9395: RBAC refused `get pods/proxy` in namespace "
        '"kube-system" (HTTP 403)' in message
    )
    assert (
        'RBAC refused `get pods/proxy` in namespace "kube-system": grant a Role there with the '
        'rule {apiGroups: [""], resources: ["services", "services/proxy", "pods/proxy"], verbs: '
        '["get", "list"]} to the identity of this kubeconfig.'
    ) in message


def test_both_proxies_forbidden(cluster: FakeCluster, kubeconfig: Path) -> None:
    cluster.forbid("get", "services/proxy")
    cluster.forbid("get", "pods/proxy")
    message = _collect_error(kubeconfig)
    assert "RBAC refused `get pods/proxy` and `get services/proxy` in namespace" in message


def test_no_endpoints_and_no_pod_answer(cluster: FakeCluster, kubeconfig: Path) -> None:
    cluster.services[0].has_endpoints = False
    cluster.pod_proxy.clear()
    message = _collect_error(kubeconfig)
    assert (
        "no ready endpoints behind the Service (HTTP 503: no endpoints available for service "
        '"hami-scheduler:monitor")'
    ) in message
    assert message.endswith(
        "The scheduler Service has no ready endpoints: check that the HAMi scheduler pods are "
        "Running and Ready (kubectl -n kube-system get pods -l "
        "app.kubernetes.io/component=hami-scheduler)."
    )


DCGM_TEXT = (
    "# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).\n"
    "# TYPE DCGM_FI_DEV_FB_USED gauge\n"
    'DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-1"} 1024\n'
    'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-1"} 12\n'
)


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (DCGM_TEXT, "it holds other metrics (DCGM_FI_DEV_FB_USED, DCGM_FI_DEV_GPU_UTIL)"),
        (
            fixture_bytes("vgpumonitor-small.prom").decode(),
            "it holds HAMi vGPU monitor families only (the monitor's port, not the scheduler's)",
        ),
        (
            "<html><body>404 page not found</body></html>",
            "it holds no metrics at all "
            "(it starts with '<html><body>404 page not found</body></html>')",
        ),
    ],
)
def test_body_that_is_not_hami_scheduler_metrics(
    cluster: FakeCluster, kubeconfig: Path, body: str, problem: str
) -> None:
    cluster.service_proxy[SERVICE_KEY] = ProxyAnswer(body.encode(), content_type="text/plain")
    cluster.pod_proxy[LEADER_KEY] = ProxyAnswer(body.encode(), content_type="text/plain")
    message = _collect_error(kubeconfig)
    assert (
        "Service kube-system/hami-scheduler port monitor: answered (text/plain), but not with "
        f"HAMi scheduler metrics: {problem}"
    ) in message
    assert message.endswith(
        'The Service port "monitor" and the pod port "metrics" must point at the scheduler\'s '
        "metrics listener (--metrics-bind-address, default :9395, path /metrics)."
    )


def test_body_over_the_size_limit(api_server: FakeApiServer, kubeconfig: Path) -> None:
    api, target = api_client_for_context(kubeconfig, "test")
    with pytest.raises(CollectionError) as caught:
        scrape_scheduler(api, target, None, Deadline(5), max_bytes=4096)
    message = caught.value.message
    # The pod proxy serves the same page: it is not read a second time.
    proxied = [r.path for r in api_server.requests if r.path.endswith("/proxy/metrics")]
    assert proxied == [
        "/api/v1/namespaces/kube-system/services/hami-scheduler%3Amonitor/proxy/metrics"
    ]
    assert message.endswith(
        "The input limit is 4.0 KiB; a 10,000-node scheduler writes about 150 MB. For a larger "
        "cluster raise the limit (--max-input-mib, HAMI_SUMMARY_MAX_INPUT_MIB or max_input_bytes "
        "in the settings file); for a whole Prometheus dump, send the scheduler's /metrics alone."
    )
    assert (
        "Service kube-system/hami-scheduler port monitor: answer over the 4.0 KiB input limit"
        in (message)
    )


def test_context_not_in_kubeconfig(kubeconfig: Path) -> None:
    with pytest.raises(CollectionError) as caught:
        collect_from_kubeconfig(kubeconfig, "prod")
    assert caught.value.message == (
        f'context "prod" is not in {kubeconfig} (contexts there: test). '
        "List them with: hami-summary clusters"
    )


# --- timeouts -----------------------------------------------------------------------------------


def test_api_server_that_never_answers(tmp_path: Path) -> None:
    with SilentServer() as silent:
        kubeconfig = write_kubeconfig(
            tmp_path / "config", server=silent.url, ca_pem=session_certificate().ca_pem, token="t"
        )
        message = _collect_error(kubeconfig, timeout_seconds=0.5)
        url = silent.url
    # The server never answers: only the budget ends the wait, as the message says.
    assert message == (
        f'The Kubernetes API server of context "test" at {url} did not answer within the '
        "0.5 s budget while looking for the HAMi scheduler pods. The server or the network is "
        "slow or blocked; try again, or raise timeout_seconds for this cluster."
    )


def test_metrics_that_never_arrive(cluster: FakeCluster, kubeconfig: Path) -> None:
    late = cluster.service_proxy[SERVICE_KEY]
    late.delay_seconds = 60  # or until the fake API server stops
    # Enough budget for finding the pods even as a process's first Kubernetes call on a busy
    # machine (client set-up and TLS), so that it is the metrics read the budget cuts off.
    message = _collect_error(kubeconfig, timeout_seconds=3)
    assert not late.answered.is_set()  # the budget ended it, not the late answer
    assert re.search(
        r"did not answer within the 3 s budget while reading /metrics through Service "
        r"kube-system/hami-scheduler port monitor\.",
        message,
    )


# --- vGPU monitors (--runtime) ------------------------------------------------------------------


def test_runtime_scrapes_each_monitor_and_lists_the_missing(
    api_server: FakeApiServer, kubeconfig: Path
) -> None:
    collected = collect_from_kubeconfig(kubeconfig, "test", runtime=True)
    assert collected.monitor_texts == (fixture_bytes("vgpumonitor-small.prom").decode(),)
    assert collected.missing_monitors == (
        "gpu-node-2: pod kube-system/hami-device-plugin-m4q9z port 9394: backend unreachable "
        "through the API server (HTTP 503: error trying to reach pod: dial tcp "
        "10.244.1.17:9394: connect: connection refused)",
    )
    monitor_lists = [
        r
        for r in api_server.requests
        if r.query.get("labelSelector") == ["app.kubernetes.io/component=hami-device-plugin"]
    ]
    assert [r.path for r in monitor_lists] == ["/api/v1/namespaces/kube-system/pods"]


def test_runtime_monitor_pod_not_running_and_wrong_body(
    cluster: FakeCluster, kubeconfig: Path
) -> None:
    plugin = next(p for p in cluster.pods if p.name == "hami-device-plugin-m4q9z")
    plugin.phase = "Pending"
    cluster.pod_proxy[("kube-system", "hami-device-plugin-7xk2p", 9394)] = ProxyAnswer(
        DCGM_TEXT.encode()
    )
    collected = collect_from_kubeconfig(kubeconfig, "test", runtime=True)
    assert collected.monitor_texts == ()
    assert collected.missing_monitors == (
        "gpu-node-1: pod kube-system/hami-device-plugin-7xk2p port 9394: no HAMi vGPU monitor "
        "families in the answer (found: DCGM_FI_DEV_FB_USED, DCGM_FI_DEV_GPU_UTIL)",
        "gpu-node-2: monitor pod hami-device-plugin-m4q9z is Pending",
    )


def test_runtime_monitor_listing_forbidden_is_not_fatal(
    cluster: FakeCluster, kubeconfig: Path
) -> None:
    # Scheduler pods are listed cluster-wide; the monitor list is namespaced and refused.
    cluster.forbid("list", "pods")
    cluster.forbid_cluster_scope_only = False
    collected_error = _collect_error(kubeconfig, runtime=True)
    assert "refused `list pods`" in collected_error  # the scheduler list needs it too
    cluster.forbidden.clear()
    cluster.pods = [p for p in cluster.pods if "device-plugin" not in p.name]
    collected = collect_from_kubeconfig(kubeconfig, "test", runtime=True)
    assert collected.missing_monitors == (
        "all nodes: no pods labelled app.kubernetes.io/component=hami-device-plugin in "
        'namespace "kube-system"',
    )
