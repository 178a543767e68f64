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
}

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
    "nvidiaSmi": {"enabled": True},
}


@pytest.fixture(scope="module")
def chart() -> Iterator[helm.Chart]:
    with helm.Chart.load(CHART) as loaded:
        yield loaded


def render(chart: helm.Chart, values: dict[str, Any]) -> list[dict[str, Any]]:
    manifests = chart.render(values, name="hs", namespace="bots")
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


@pytest.mark.parametrize("values", [{}, FULL_SOCKET], ids=["defaults", "socket-full"])
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
        {
            "rbac": {"hamiNamespace": "kube-system"},
            "ingress": {"enabled": True, "tlsSecretName": "t"},
        },
    ],
    ids=["defaults", "socket-full", "namespaced-ingress"],
)
def test_every_object_is_valid_for_the_kubernetes_client(
    chart: helm.Chart, values: dict[str, Any]
) -> None:
    client = ApiClient()
    for obj in render(chart, values):
        model = client.deserialize(json.dumps(obj), MODELS[obj["kind"]], "application/json")
        assert client.sanitize_for_serialization(model) == _without_nulls(obj), obj["kind"]  # type: ignore[no-untyped-call]


def test_defaults_http_mode(chart: helm.Chart) -> None:
    objects = render(chart, {})
    assert kinds(objects) == [
        "ClusterRole",
        "ClusterRoleBinding",
        "Deployment",
        "Secret",
        "Service",
        "ServiceAccount",
    ]
    deployment = one(objects, "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert container["args"] == ["--log-level", "INFO", "serve"]
    assert container["ports"] == [{"name": "http", "containerPort": 3000, "protocol": "TCP"}]
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


def test_least_privilege_rbac(chart: helm.Chart) -> None:
    objects = render(chart, {})
    role = one(objects, "ClusterRole")
    assert role["rules"] == [
        {"apiGroups": [""], "resources": ["pods", "services"], "verbs": ["list"]},
        {"apiGroups": [""], "resources": ["services/proxy", "pods/proxy"], "verbs": ["get"]},
    ]
    binding = one(objects, "ClusterRoleBinding")
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "hs-hami-summary", "namespace": "bots"}
    ]
    assert "pods/exec" not in json.dumps(objects)

    with_exec = render(chart, {"nvidiaSmi": {"enabled": True}})
    exec_role = one(with_exec, "ClusterRole", "hs-hami-summary-nvidia-smi")
    assert exec_role["rules"] == [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]},
        {"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["get", "create"]},
    ]
    one(with_exec, "ClusterRoleBinding", "hs-hami-summary-nvidia-smi")

    namespaced = render(chart, {"rbac": {"hamiNamespace": "kube-system"}})
    role = one(namespaced, "Role")
    assert role["metadata"]["namespace"] == "kube-system"
    assert one(namespaced, "RoleBinding")["roleRef"]["kind"] == "Role"
    assert not [o for o in namespaced if o["kind"].startswith("Cluster")]

    assert not [o for o in render(chart, {"rbac": {"create": False}}) if "Role" in o["kind"]]


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
    assert yaml.safe_load(configmap["data"]["clusters.yaml"]) == REGISTRY


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
