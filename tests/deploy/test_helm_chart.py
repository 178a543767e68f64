"""The Helm chart, linted and rendered by Helm's own engine (helm-python-sdk, Helm v4 SDK).

Every rendered object is also round-tripped through the official Kubernetes client's models,
which drop fields they do not know: a misspelt field shows up as a difference.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import helm_python as helm
import pytest
import yaml
from kubernetes.client import ApiClient

from bot.clusters.registry import load_registry
from bot.config import HttpSettings, http_settings

CHART = Path(__file__).resolve().parents[2] / "deploy" / "helm" / "hami-summary"

MODELS = {
    "Deployment": "V1Deployment",
    "Service": "V1Service",
    "Secret": "V1Secret",
    "ConfigMap": "V1ConfigMap",
    "ServiceAccount": "V1ServiceAccount",
    "ClusterRole": "V1ClusterRole",
    "ClusterRoleBinding": "V1ClusterRoleBinding",
    "Role": "V1Role",
    "RoleBinding": "V1RoleBinding",
    "Ingress": "V1Ingress",
    "PodDisruptionBudget": "V1PodDisruptionBudget",
    "HorizontalPodAutoscaler": "V2HorizontalPodAutoscaler",
    "NetworkPolicy": "V1NetworkPolicy",
}
# Kinds of add-ons (CRDs) the official client has no model for; checked field by field below.
CUSTOM_KINDS = {"ServiceMonitor"}
CLUSTER_SCOPED_KINDS = {"ClusterRole", "ClusterRoleBinding"}

REGISTRY = {
    "clusters": [
        {"name": "here", "in_cluster": True, "allowed_channels": ["C0123ABCD"]},
        {
            "name": "eu",
            "kubeconfig": "/etc/hami-summary/kubeconfigs/eu.yaml",
            "context": "eu-readonly",
            "allowed_users": ["*"],
            "cache_ttl_seconds": 120,
        },
    ]
}

FULL_SOCKET = {
    "mode": "socket",
    "replicaCount": 3,
    "slack": {"botToken": "xoxb-1-test", "appToken": "xapp-1-test"},
    "redis": {"url": "redis://:pw@redis:6379/0", "keyPrefix": "team-gpu"},
    "registry": REGISTRY,
    "kubeconfigs": {"existingSecret": "hami-kubeconfigs"},
    "nvidiaSmi": {"enabled": True, "namespaces": ["ml-team"]},
}

EVERYTHING_ON = {
    **FULL_SOCKET,
    "pendingPods": {"enabled": True, "namespaces": ["ml-team"]},
    "podDisruptionBudget": {"enabled": True},
    "autoscaling": {
        "enabled": True,
        "minReplicas": 2,
        "maxReplicas": 6,
        "targetMemoryUtilizationPercentage": 85,
    },
    "networkPolicy": {
        "enabled": True,
        "ingressFrom": [{"namespaceSelector": {"matchLabels": {"name": "monitoring"}}}],
        "apiServers": {"cidrs": ["10.0.0.10/32"], "ports": [6443]},
        "redis": {"to": [{"podSelector": {"matchLabels": {"app": "redis"}}}]},
    },
    "serviceMonitor": {"enabled": True, "labels": {"release": "prom"}},
    "extraEnv": [{"name": "HAMI_SUMMARY_SETTINGS", "value": "/etc/hami-summary/settings/s.yaml"}],
    "envFrom": [{"secretRef": {"name": "hami-extra-env"}}],
    "extraVolumes": [{"name": "settings", "configMap": {"name": "hami-settings"}}],
    "extraVolumeMounts": [{"name": "settings", "mountPath": "/etc/hami-summary/settings"}],
}


@pytest.fixture(scope="module")
def chart() -> Iterator[helm.Chart]:
    with helm.Chart.load(CHART) as loaded:
        yield loaded


def render(chart: helm.Chart, values: dict[str, Any]) -> list[dict[str, Any]]:
    return render_in(chart, values, "bots")


def render_in(
    chart: helm.Chart, values: dict[str, Any], namespace: str, name: str = "hs"
) -> list[dict[str, Any]]:
    manifests = chart.render(values, name=name, namespace=namespace)
    objects: list[dict[str, Any]] = []
    for path, text in manifests.items():
        if path.endswith("NOTES.txt"):
            continue
        objects += [doc for doc in yaml.safe_load_all(text) if doc]
    return objects


def one(objects: list[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    found = [
        o for o in objects if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)
    ]
    assert len(found) == 1, f"{kind} {name}: {[o['metadata']['name'] for o in found]}"
    return found[0]


def kinds(objects: list[dict[str, Any]]) -> list[str]:
    return sorted(o["kind"] for o in objects)


def env_of(deployment: dict[str, Any]) -> dict[str, Any]:
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


@pytest.mark.parametrize(
    "values", [{}, FULL_SOCKET, EVERYTHING_ON], ids=["defaults", "socket-full", "everything-on"]
)
def test_helm_lint_is_clean(values: dict[str, Any]) -> None:
    report = helm.lint(CHART, values, strict=True)
    assert report["errors"] == []
    problems = [m for m in report["messages"] if m["severity"] >= 2]
    assert problems == []


@pytest.mark.parametrize(
    "values",
    [
        {},
        FULL_SOCKET,
        EVERYTHING_ON,
        {**EVERYTHING_ON, "mode": "http", "ingress": {"enabled": True, "tlsSecretName": "t"}},
        {
            "rbac": {"hamiNamespace": "kube-system"},
            "ingress": {"enabled": True, "tlsSecretName": "t"},
        },
        {
            "rbac": {"clusterWide": True},
            "nvidiaSmi": {"enabled": True},
            "pendingPods": {"enabled": True},
        },
    ],
    ids=[
        "defaults",
        "socket-full",
        "everything-on",
        "http-everything-on",
        "namespaced-ingress",
        "cluster-wide",
    ],
)
def test_every_object_is_valid_for_the_kubernetes_client(
    chart: helm.Chart, values: dict[str, Any]
) -> None:
    client = ApiClient()
    for obj in render(chart, values):
        if obj["kind"] in CUSTOM_KINDS:
            continue
        model = client.deserialize(json.dumps(obj), MODELS[obj["kind"]], "application/json")
        assert client.sanitize_for_serialization(model) == _without_nulls(obj), obj["kind"]  # type: ignore[no-untyped-call]


def test_defaults_http_mode(chart: helm.Chart) -> None:
    objects = render(chart, {})
    assert kinds(objects) == [
        "Deployment",
        "Role",
        "RoleBinding",
        "Secret",
        "Service",
        "ServiceAccount",
    ]
    deployment = one(objects, "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert container["args"] == ["--log-level", "INFO", "serve"]
    assert container["ports"] == [{"name": "http", "containerPort": 3000, "protocol": "TCP"}]
    assert container["startupProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    assert container["resources"]["limits"]["memory"] == "1Gi"
    # Non-root, read-only root filesystem: the only writable path is the /tmp emptyDir.
    assert (
        pod["securityContext"]["runAsNonRoot"] is True
        and pod["securityContext"]["runAsUser"] == 10001
    )
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["securityContext"]["capabilities"]["drop"] == ["ALL"]
    assert container["volumeMounts"] == [{"name": "tmp", "mountPath": "/tmp"}]
    assert pod["volumes"][0]["emptyDir"] == {"sizeLimit": "256Mi"}
    env = env_of(deployment)
    assert env["MPLCONFIGDIR"].startswith("/tmp/") and env["HOME"] == "/tmp"
    assert env["PORT"] == "3000"
    assert env["SLACK_SIGNING_SECRET"]["secretKeyRef"] == {
        "name": "hs-hami-summary-slack",
        "key": "SLACK_SIGNING_SECRET",
        "optional": True,
    }
    assert (
        "SLACK_APP_TOKEN" not in env and "REDIS_URL" not in env and "HAMI_CLUSTERS_FILE" not in env
    )
    service = one(objects, "Service")
    assert service["spec"]["ports"] == [
        {"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}
    ]
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]
    # Nothing secret was given, so the chart's Secret holds nothing.
    assert not one(objects, "Secret").get("data")


METRICS_RULES = [
    {"apiGroups": [""], "resources": ["pods", "services"], "verbs": ["list"]},
    {"apiGroups": [""], "resources": ["services/proxy", "pods/proxy"], "verbs": ["get"]},
]
EXEC_RULES = [
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]},
    {"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["get", "create"]},
]
PENDING_RULES = [
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]},
    {"apiGroups": [""], "resources": ["events"], "verbs": ["list"]},
]
SUBJECTS = [{"kind": "ServiceAccount", "name": "hs-hami-summary", "namespace": "bots"}]


def grants(objects: list[dict[str, Any]]) -> dict[tuple[str, str | None], list[Any]]:
    """(role name, namespace or None when cluster-wide) -> rules, each checked to be bound."""
    roles = {
        (o["metadata"]["name"], o["metadata"].get("namespace")): o["rules"]
        for o in objects
        if o["kind"] in ("Role", "ClusterRole")
    }
    bindings = [o for o in objects if o["kind"] in ("RoleBinding", "ClusterRoleBinding")]
    assert len(bindings) == len(roles)
    for binding in bindings:
        namespace = binding["metadata"].get("namespace")
        assert binding["roleRef"]["kind"] == ("Role" if namespace else "ClusterRole")
        assert (binding["roleRef"]["name"], namespace) in roles
        assert binding["subjects"] == SUBJECTS
    return roles


def test_default_rbac_reads_only_the_hami_namespace(chart: helm.Chart) -> None:
    objects = render(chart, {})
    assert not [o for o in objects if o["kind"] in CLUSTER_SCOPED_KINDS]
    reader = ("hs-hami-summary-bots-metrics-reader", "kube-system")
    assert grants(objects) == {reader: METRICS_RULES}
    assert "pods/exec" not in json.dumps(objects)
    # Nothing in the registry uses this cluster's API, so no token is mounted.
    pod = one(objects, "Deployment")["spec"]["template"]["spec"]
    assert pod["automountServiceAccountToken"] is False


def test_rbac_in_each_listed_namespace_or_cluster_wide_when_asked(chart: helm.Chart) -> None:
    several = render(chart, {"rbac": {"hamiNamespaces": ["hami-system", "gpu-monitoring"]}})
    assert grants(several) == {
        ("hs-hami-summary-bots-metrics-reader", "hami-system"): METRICS_RULES,
        ("hs-hami-summary-bots-metrics-reader", "gpu-monitoring"): METRICS_RULES,
    }
    deprecated = render(chart, {"rbac": {"hamiNamespace": "hami"}})
    assert list(grants(deprecated)) == [("hs-hami-summary-bots-metrics-reader", "hami")]

    cluster_wide = render(chart, {"rbac": {"clusterWide": True}})
    assert grants(cluster_wide) == {("hs-hami-summary-bots-metrics-reader", None): METRICS_RULES}
    assert kinds([o for o in cluster_wide if "Role" in o["kind"]]) == [
        "ClusterRole",
        "ClusterRoleBinding",
    ]
    assert not [o for o in render(chart, {"rbac": {"create": False}}) if "Role" in o["kind"]]


def test_nvidia_smi_exec_only_where_asked(chart: helm.Chart) -> None:
    namespaced = grants(
        render(chart, {"nvidiaSmi": {"enabled": True, "namespaces": ["ml-a", "ml-b"]}})
    )
    assert namespaced == {
        ("hs-hami-summary-bots-metrics-reader", "kube-system"): METRICS_RULES,
        ("hs-hami-summary-bots-nvidia-smi", "ml-a"): EXEC_RULES,
        ("hs-hami-summary-bots-nvidia-smi", "ml-b"): EXEC_RULES,
    }
    everywhere = grants(
        render(chart, {"rbac": {"clusterWide": True}, "nvidiaSmi": {"enabled": True}})
    )
    assert everywhere[("hs-hami-summary-bots-nvidia-smi", None)] == EXEC_RULES
    with pytest.raises(helm.HelmRenderError) as caught:
        chart.render({"nvidiaSmi": {"enabled": True}}, name="hs", namespace="bots")
    assert "nvidiaSmi.namespaces" in str(caught.value)
    assert "rbac.clusterWide" in str(caught.value)


def test_pending_pods_read_only_where_asked(chart: helm.Chart) -> None:
    # Off by default: an upgrade grants no new reads of the users' namespaces.
    assert "events" not in json.dumps(render(chart, {}))
    asked = {"pendingPods": {"enabled": True, "namespaces": ["ml-a", "ml-b", "ml-a"]}}
    assert grants(render(chart, asked)) == {
        ("hs-hami-summary-bots-metrics-reader", "kube-system"): METRICS_RULES,
        ("hs-hami-summary-bots-pending-pods", "ml-a"): PENDING_RULES,
        ("hs-hami-summary-bots-pending-pods", "ml-b"): PENDING_RULES,
    }
    notes = chart.render(asked, name="hs", namespace="bots")["hami-summary/templates/NOTES.txt"]
    assert "pending pods and their events read in ml-a, ml-b." in notes
    everywhere = grants(
        render(chart, {"rbac": {"clusterWide": True}, "pendingPods": {"enabled": True}})
    )
    assert everywhere == {
        ("hs-hami-summary-bots-metrics-reader", None): METRICS_RULES,
        ("hs-hami-summary-bots-pending-pods", None): PENDING_RULES,
    }
    with pytest.raises(helm.HelmRenderError) as caught:
        chart.render({"pendingPods": {"enabled": True}}, name="hs", namespace="bots")
    assert "pendingPods.enabled needs the namespaces" in str(caught.value)
    assert "pendingPods.namespaces" in str(caught.value)
    assert "rbac.clusterWide" in str(caught.value)


def test_in_cluster_entries_read_pods_only_where_the_chart_grants(
    chart: helm.Chart, tmp_path: Path
) -> None:
    pending = {"enabled": True, "namespaces": ["ml-b", "ml-a"]}
    registry = {
        "clusters": [
            {"name": "here", "in_cluster": True},
            {"name": "one", "in_cluster": True, "pod_namespaces": "ml-a"},
            REGISTRY["clusters"][1],
        ]
    }
    objects = render(chart, {"registry": registry, "pendingPods": pending})
    text = one(objects, "ConfigMap")["data"]["clusters.yaml"]
    entries = yaml.safe_load(text)["clusters"]
    assert entries[0]["pod_namespaces"] == ["ml-a", "ml-b"]
    assert entries[1]["pod_namespaces"] == "ml-a"
    assert "pod_namespaces" not in entries[2]  # another cluster: its own RBAC
    # The bot accepts what the chart wrote for its own cluster.
    registry_file = tmp_path / "clusters.yaml"
    registry_file.write_text(yaml.safe_dump({"clusters": entries[:2]}), encoding="utf-8")
    loaded = load_registry(registry_file).entries
    assert [e.pod_namespaces for e in loaded] == [("ml-a", "ml-b"), ("ml-a",)]

    outside = {"clusters": [{"name": "here", "in_cluster": True, "pod_namespaces": ["ml-c"]}]}
    with pytest.raises(helm.HelmRenderError) as caught:
        chart.render({"registry": outside, "pendingPods": pending}, name="hs", namespace="bots")
    assert 'registry cluster "here" has "ml-c" in pod_namespaces' in str(caught.value)
    assert "pendingPods.namespaces (now: ml-a, ml-b)" in str(caught.value)
    # Without the grant the entry is left as written.
    left = render(chart, {"registry": outside})
    assert yaml.safe_load(one(left, "ConfigMap")["data"]["clusters.yaml"])["clusters"][0][
        "pod_namespaces"
    ] == ["ml-c"]


def test_two_releases_in_two_namespaces_share_no_object(chart: helm.Chart) -> None:
    def identities(namespace: str) -> set[tuple[str, str | None, str]]:
        objects = render_in(
            chart, EVERYTHING_ON | {"rbac": {"hamiNamespaces": ["kube-system"]}}, namespace
        )
        found = set()
        for o in objects:
            scope = (
                None
                if o["kind"] in CLUSTER_SCOPED_KINDS
                else o["metadata"].get("namespace", namespace)
            )
            found.add((o["kind"], scope, o["metadata"]["name"]))
        return found

    first, second = identities("team-a"), identities("team-b")
    assert len(first) == len(second) > 10
    assert first.isdisjoint(second)
    cluster_wide = {"rbac": {"clusterWide": True}, "nvidiaSmi": {"enabled": True}}
    names = [
        {
            o["metadata"]["name"]
            for o in render_in(chart, cluster_wide, ns)
            if o["kind"] in CLUSTER_SCOPED_KINDS
        }
        for ns in ("team-a", "team-b")
    ]
    assert len(names[0]) == 2 and names[0].isdisjoint(names[1])


def test_in_cluster_entries_search_the_namespace_rbac_allows(chart: helm.Chart) -> None:
    objects = render(chart, {"registry": REGISTRY})
    document = yaml.safe_load(one(objects, "ConfigMap")["data"]["clusters.yaml"])
    assert document["clusters"][0] == {**REGISTRY["clusters"][0], "hami_namespace": "kube-system"}
    assert document["clusters"][1] == REGISTRY["clusters"][1]
    pod = one(objects, "Deployment")["spec"]["template"]["spec"]
    assert pod["automountServiceAccountToken"] is True

    outside = {"clusters": [{"name": "here", "in_cluster": True, "hami_namespace": "hami"}]}
    with pytest.raises(helm.HelmRenderError) as caught:
        chart.render({"registry": outside}, name="hs", namespace="bots")
    assert 'hami_namespace "hami"' in str(caught.value)
    assert "rbac.hamiNamespaces" in str(caught.value)
    two = {
        "rbac": {"hamiNamespaces": ["a", "b"]},
        "registry": {"clusters": [REGISTRY["clusters"][0]]},
    }
    with pytest.raises(helm.HelmRenderError) as caught:
        chart.render(two, name="hs", namespace="bots")
    assert "set hami_namespace on the entry" in str(caught.value)
    # Cluster-wide rights: the entry is left to search every namespace.
    wide = render(chart, {"registry": REGISTRY, "rbac": {"clusterWide": True}})
    assert yaml.safe_load(one(wide, "ConfigMap")["data"]["clusters.yaml"]) == REGISTRY


def test_the_token_is_mounted_only_when_the_in_cluster_api_may_be_used(chart: helm.Chart) -> None:
    def mounted(values: dict[str, Any]) -> bool:
        pod = one(render(chart, values), "Deployment")["spec"]["template"]["spec"]
        return bool(pod["automountServiceAccountToken"])

    kubeconfig_only = {"clusters": [REGISTRY["clusters"][1]]}
    assert not mounted({"registry": kubeconfig_only})
    assert mounted({"existingRegistryConfigMap": "my-registry"})
    assert mounted({"serviceAccount": {"automountToken": True}})
    assert not mounted({"registry": REGISTRY, "serviceAccount": {"automountToken": False}})


def test_socket_mode_with_redis_registry_and_kubeconfigs(chart: helm.Chart, tmp_path: Path) -> None:
    objects = render(chart, FULL_SOCKET)
    assert "Service" not in kinds(objects)
    deployment = one(objects, "Deployment")
    assert deployment["spec"]["replicas"] == 3
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["args"] == ["--log-level", "INFO", "serve", "--socket-mode"]
    assert container["ports"] == [{"name": "ops", "containerPort": 8080, "protocol": "TCP"}]
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "ops"}
    annotations = deployment["spec"]["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/port"] == "8080"
    env = env_of(deployment)
    assert env["OPS_PORT"] == "8080"
    assert env["SLACK_APP_TOKEN"]["secretKeyRef"]["key"] == "SLACK_APP_TOKEN"
    assert "SLACK_SIGNING_SECRET" not in env
    assert env["REDIS_URL"]["secretKeyRef"] == {"name": "hs-hami-summary-redis", "key": "REDIS_URL"}
    assert env["REDIS_KEY_PREFIX"] == "team-gpu" and env["REDIS_TIMEOUT_MS"] == "200"
    assert env["HAMI_CLUSTERS_FILE"] == "/etc/hami-summary/registry/clusters.yaml"
    assert env["KUBECONFIG_DIR"] == "/etc/hami-summary/kubeconfigs"
    mounts = {m["name"]: m for m in container["volumeMounts"]}
    assert mounts["registry"]["readOnly"] is True and mounts["kubeconfigs"]["readOnly"] is True

    slack = one(objects, "Secret", "hs-hami-summary-slack")
    decoded = {k: base64.b64decode(v).decode() for k, v in slack["data"].items()}
    assert decoded == {"SLACK_BOT_TOKEN": "xoxb-1-test", "SLACK_APP_TOKEN": "xapp-1-test"}
    redis_secret = one(objects, "Secret", "hs-hami-summary-redis")
    assert (
        base64.b64decode(redis_secret["data"]["REDIS_URL"]).decode() == "redis://:pw@redis:6379/0"
    )
    # The password is only in the Secret, never in the Deployment.
    assert "pw@" not in json.dumps(deployment)

    configmap = one(objects, "ConfigMap")
    registry = yaml.safe_load(configmap["data"]["clusters.yaml"])
    # The in_cluster entry searches the namespace the chart's Role covers.
    assert registry["clusters"][0]["hami_namespace"] == "kube-system"
    assert registry == {
        "clusters": [
            REGISTRY["clusters"][0] | {"hami_namespace": "kube-system"},
            REGISTRY["clusters"][1],
        ]
    }


def test_the_registry_configmap_is_one_the_bot_accepts(chart: helm.Chart, tmp_path: Path) -> None:
    kubeconfig = tmp_path / "eu.yaml"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "eu", "cluster": {"server": "https://127.0.0.1:6443"}}],
                "users": [{"name": "reader", "user": {"token": "not-a-real-token"}}],
                "contexts": [
                    {"name": "eu-readonly", "context": {"cluster": "eu", "user": "reader"}}
                ],
            }
        )
    )
    registry_values = {
        "clusters": [
            REGISTRY["clusters"][0],
            {**REGISTRY["clusters"][1], "kubeconfig": str(kubeconfig)},
        ]
    }
    configmap = one(render(chart, {"registry": registry_values}), "ConfigMap")
    registry_file = tmp_path / "clusters.yaml"
    registry_file.write_text(configmap["data"]["clusters.yaml"])
    registry = load_registry(registry_file)
    assert sorted(entry.name for entry in registry.entries) == ["eu", "here"]


def test_digests_and_alerts_pass_the_schema_into_the_registry(
    chart: helm.Chart, tmp_path: Path
) -> None:
    declared = {
        **REGISTRY["clusters"][0],
        "allowed_channels": ["C0GPUOPS"],
        "digests": [
            {
                "channel": "C0GPUOPS",
                "at": "09:00",
                "time_zone": "Europe/Berlin",
                "weekdays": "mon-fri",
            }
        ],
        "alerts": [
            {"channel": "C0GPUOPS", "free_whole_gpus_below": 2, "model": "H100", "for": "10m"}
        ],
    }
    configmap = one(render(chart, {"registry": {"clusters": [declared]}}), "ConfigMap")
    registry_file = tmp_path / "clusters.yaml"
    registry_file.write_text(configmap["data"]["clusters.yaml"])
    [entry] = load_registry(registry_file).entries
    assert entry.digests[0].schedule.describe() == "09:00 Europe/Berlin, mon-fri"
    assert (entry.alerts[0].kind, entry.alerts[0].for_seconds) == ("free_whole_gpus_below", 600)


def test_changes_to_the_registry_roll_the_pods(chart: helm.Chart) -> None:
    def checksum(values: dict[str, Any]) -> str:
        deployment = one(render(chart, values), "Deployment")
        return str(deployment["spec"]["template"]["metadata"]["annotations"]["checksum/registry"])

    assert checksum({"registry": REGISTRY}) != checksum(
        {"registry": {"clusters": [{"name": "other", "in_cluster": True}]}}
    )


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"replicaCount": 2}, "replicas must share one Redis"),
        (
            {"mode": "socket", "replicaCount": 11, "redis": {"url": "redis://r:6379/0"}},
            "at most 10",
        ),
        ({"mode": "grpc"}, "value must be one of 'http', 'socket'"),
        ({"redis": {"url": "http://redis:6379"}}, "/redis/url"),
        ({"logLevel": "CHATTY"}, "/logLevel"),
        ({"autoscaling": {"enabled": True}}, "autoscaling.maxReplicas is 5 but no Redis"),
        (
            {
                "mode": "socket",
                "autoscaling": {"enabled": True, "maxReplicas": 12},
                "redis": {"url": "redis://r:6379/0"},
            },
            "set autoscaling.maxReplicas to 10 or less",
        ),
        (
            {
                "autoscaling": {"enabled": True, "minReplicas": 4, "maxReplicas": 3},
                "redis": {"url": "redis://r:6379/0"},
            },
            "autoscaling.minReplicas (4) is more than autoscaling.maxReplicas (3)",
        ),
        ({"rbac": {"hamiNamespaces": []}}, "rbac.hamiNamespaces is empty"),
        ({"rbac": {"hamiNamespaces": ["Kube_System"]}}, "/rbac/hamiNamespaces/0"),
        ({"image": {"digest": "latest"}}, "/image/digest"),
        ({"http": {"threads": 0}}, "/http/threads"),
        ({"http": {"maxBodyBytes": 100}}, "/http/maxBodyBytes"),
    ],
)
def test_unusable_values_are_refused_with_a_reason(
    chart: helm.Chart, values: dict[str, Any], message: str
) -> None:
    with pytest.raises((helm.HelmRenderError, helm.HelmValuesError)) as caught:
        chart.render(values, name="hs", namespace="bots")
    assert message in str(caught.value)


def test_several_replicas_with_redis_render(chart: helm.Chart) -> None:
    objects = render(chart, {"replicaCount": 4, "redis": {"existingSecret": "redis-conn"}})
    deployment = one(objects, "Deployment")
    assert deployment["spec"]["replicas"] == 4
    assert env_of(deployment)["REDIS_URL"]["secretKeyRef"] == {
        "name": "redis-conn",
        "key": "REDIS_URL",
    }
    assert not [o for o in objects if o["metadata"]["name"].endswith("-redis")]


def test_the_round_trip_catches_a_misspelt_field(chart: helm.Chart) -> None:
    deployment = one(render(chart, {}), "Deployment")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    container["readinesProbe"] = container.pop("readinessProbe")
    client = ApiClient()
    model = client.deserialize(json.dumps(deployment), "V1Deployment", "application/json")
    assert client.sanitize_for_serialization(model) != _without_nulls(deployment)  # type: ignore[no-untyped-call]


ADD_ON_KINDS = {"PodDisruptionBudget", "HorizontalPodAutoscaler", "NetworkPolicy", "ServiceMonitor"}


def test_add_ons_are_off_by_default_and_render_when_enabled(chart: helm.Chart) -> None:
    assert not ADD_ON_KINDS & set(kinds(render(chart, {})))
    objects = render(chart, EVERYTHING_ON)
    assert set(kinds(objects)) >= ADD_ON_KINDS
    selector = one(objects, "Deployment")["spec"]["selector"]["matchLabels"]
    deployment = one(objects, "Deployment")
    assert "replicas" not in deployment["spec"]  # the HPA owns the count

    pdb = one(objects, "PodDisruptionBudget")
    assert pdb["spec"] == {"maxUnavailable": 1, "selector": {"matchLabels": selector}}
    min_available = one(
        render(chart, {"podDisruptionBudget": {"enabled": True, "minAvailable": "50%"}}),
        "PodDisruptionBudget",
    )
    assert min_available["spec"]["minAvailable"] == "50%"
    assert "maxUnavailable" not in min_available["spec"]

    hpa = one(objects, "HorizontalPodAutoscaler")["spec"]
    assert hpa["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "hs-hami-summary",
    }
    assert (hpa["minReplicas"], hpa["maxReplicas"]) == (2, 6)
    assert [
        (m["resource"]["name"], m["resource"]["target"]["averageUtilization"])
        for m in hpa["metrics"]
    ] == [("cpu", 80), ("memory", 85)]

    monitor = one(objects, "ServiceMonitor")
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert monitor["metadata"]["labels"]["release"] == "prom"
    assert monitor["spec"]["endpoints"] == [
        {"port": "ops", "path": "/metrics", "interval": "30s", "scrapeTimeout": "10s"}
    ]
    # Socket Mode has no Service for Slack, so the monitor gets one for the ops port, and it
    # selects exactly that Service's labels.
    metrics_service = one(objects, "Service", "hs-hami-summary-metrics")
    assert metrics_service["spec"]["ports"][0]["targetPort"] == "ops"
    service_labels = metrics_service["metadata"]["labels"]
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service_labels.items()
    http_monitor = one(render(chart, {"serviceMonitor": {"enabled": True}}), "ServiceMonitor")
    assert http_monitor["spec"]["endpoints"][0]["port"] == "http"


def test_network_policy_allows_only_dns_slack_api_servers_and_redis(chart: helm.Chart) -> None:
    policy = one(render(chart, EVERYTHING_ON), "NetworkPolicy")["spec"]
    assert policy["policyTypes"] == ["Ingress", "Egress"]
    assert policy["ingress"] == [
        {
            "ports": [{"port": "ops", "protocol": "TCP"}],
            "from": [{"namespaceSelector": {"matchLabels": {"name": "monitoring"}}}],
        }
    ]
    egress = [
        ([(p["port"], p["protocol"]) for p in rule["ports"]], rule.get("to"))
        for rule in policy["egress"]
    ]
    assert egress == [
        ([(53, "UDP"), (53, "TCP")], None),
        ([(443, "TCP")], [{"ipBlock": {"cidr": "0.0.0.0/0"}}]),
        ([(6443, "TCP")], [{"ipBlock": {"cidr": "10.0.0.10/32"}}]),
        ([(6379, "TCP")], [{"podSelector": {"matchLabels": {"app": "redis"}}}]),
    ]
    # Without Redis there is no Redis rule; HTTP mode opens the HTTP port.
    http = one(render(chart, {"networkPolicy": {"enabled": True}}), "NetworkPolicy")["spec"]
    assert http["ingress"] == [{"ports": [{"port": "http", "protocol": "TCP"}]}]
    assert [rule["ports"][0]["port"] for rule in http["egress"]] == [53, 443, 443]


def test_pods_drain_before_they_stop_and_take_extra_settings(chart: helm.Chart) -> None:
    deployment = one(render(chart, EVERYTHING_ON), "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert pod["terminationGracePeriodSeconds"] == 30
    assert container["lifecycle"]["preStop"] == {"exec": {"command": ["sleep", "5"]}}
    assert (
        container["startupProbe"]["failureThreshold"] * container["startupProbe"]["periodSeconds"]
        == 60
    )
    assert env_of(deployment)["HAMI_SUMMARY_SETTINGS"] == "/etc/hami-summary/settings/s.yaml"
    assert container["envFrom"] == [{"secretRef": {"name": "hami-extra-env"}}]
    assert {"name": "settings", "mountPath": "/etc/hami-summary/settings"} in container[
        "volumeMounts"
    ]
    assert {"name": "settings", "configMap": {"name": "hami-settings"}} in pod["volumes"]
    with pytest.raises(helm.HelmRenderError) as caught:
        chart.render({"terminationGracePeriodSeconds": 10}, name="hs", namespace="bots")
    assert "at least 25" in str(caught.value)


def test_image_by_digest(chart: helm.Chart) -> None:
    digest = "sha256:" + "ab" * 32
    deployment = one(render(chart, {"image": {"digest": digest}}), "Deployment")
    image = deployment["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image == f"ghcr.io/hami-summary/hami-summary@{digest}"


@pytest.mark.parametrize(
    ("values", "where"),
    [
        ({"replicaCont": 2}, "additional properties 'replicaCont' not allowed"),
        ({"resources": {"limit": {"memory": "1Gi"}}}, "at '/resources'"),
        ({"resources": {"limits": {"memroy": "1Gi"}}}, "at '/resources/limits'"),
        ({"rbac": {"hamiNamespace": "kube-system", "clusterwide": True}}, "at '/rbac'"),
        (
            {"networkPolicy": {"apiServers": {"cidr": ["10.0.0.1/32"]}}},
            "at '/networkPolicy/apiServers'",
        ),
        ({"registry": {"clusters": [{"name": "a", "in_clustre": True}]}}, "at '/registry/clusters"),
        ({"registry": "clusters: []"}, "at '/registry'"),
        ({"probes": {"startup": {"periodSecond": 1}}}, "at '/probes/startup'"),
        ({"serviceAccount": {"automountToken": "yes"}}, "at '/serviceAccount/automountToken'"),
        ({"pendingPods": {"enabled": True, "namespace": ["ml"]}}, "at '/pendingPods'"),
        ({"pendingPods": {"namespaces": ["ML_Team"]}}, "at '/pendingPods/namespaces/0'"),
        (
            {"registry": {"clusters": [{"name": "a", "in_cluster": True, "pod_namespaces": 3}]}},
            "at '/registry/clusters",
        ),
    ],
)
def test_the_schema_rejects_misspelt_keys(
    chart: helm.Chart, values: dict[str, Any], where: str
) -> None:
    with pytest.raises(helm.HelmValuesError) as caught:
        chart.render(values, name="hs", namespace="bots")
    assert where in str(caught.value)


def test_every_chart_defined_object_in_the_schema_is_closed() -> None:
    schema = json.loads((CHART / "values.schema.json").read_text())
    open_objects: list[str] = []

    def walk(node: dict[str, Any], path: str) -> None:
        if "properties" in node:
            if node.get("additionalProperties") is not False:
                open_objects.append(path)
            for key, child in node["properties"].items():
                walk(child, f"{path}/{key}")
        for key in ("items", "additionalProperties"):
            if isinstance(node.get(key), dict):
                walk(node[key], f"{path}[{key}]")
        for key in ("oneOf", "anyOf"):
            for index, child in enumerate(node.get(key, [])):
                walk(child, f"{path}<{key}{index}>")

    walk(schema, "")
    assert open_objects == []
    # Every value of values.yaml is described by the schema.
    values = yaml.safe_load((CHART / "values.yaml").read_text())

    def covered(value: Any, node: dict[str, Any], path: str) -> None:
        if isinstance(value, dict) and "properties" in node:
            for key, child in value.items():
                assert key in node["properties"], f"{path}/{key} is not in values.schema.json"
                covered(child, node["properties"][key], f"{path}/{key}")

    covered(values, schema, "")


def test_web_server_limits_reach_the_bot_as_settings_it_accepts(chart: helm.Chart) -> None:
    defaults = env_of(one(render(chart, {}), "Deployment"))
    assert http_settings(defaults) == HttpSettings()
    limits = {
        "threads": 12,
        "idleTimeoutSeconds": 30,
        "maxBodyBytes": 8388608,
        "connectionLimit": 100000,
    }
    for mode in ("http", "socket"):
        env = env_of(one(render(chart, {"mode": mode, "http": limits}), "Deployment"))
        assert env["HAMI_SUMMARY_HTTP_MAX_BODY_BYTES"] == "8388608"  # not 8.388608e+06
        assert http_settings(env) == HttpSettings(
            threads=12, idle_timeout_seconds=30, max_body_bytes=8388608, connection_limit=100000
        )
