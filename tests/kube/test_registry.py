"""The cluster registry: every source kind, access rules, and validation messages that name the
file, the line and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.clusters.errors import RegistryError
from bot.clusters.registry import ClusterEntry, empty_registry, load_registry
from tests.kube.fake_apiserver import write_kubeconfig
from tests.kube.tls import session_certificate


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    write_kubeconfig(
        tmp_path / "kubeconfigs" / "prod.yaml",
        server="https://10.0.0.1:6443",
        ca_pem=session_certificate().ca_pem,
        token="secret-token",
        contexts=("prod-admin", "prod-readonly"),
    )
    return tmp_path


def _write(folder: Path, text: str) -> Path:
    path = folder / "clusters.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _error(folder: Path, text: str) -> str:
    path = _write(folder, text)
    with pytest.raises(RegistryError) as caught:
        load_registry(path)
    assert "secret-token" not in caught.value.message
    return caught.value.message.replace(str(path), "FILE")


FULL = """\
clusters:
  - name: prod
    display_name: Production (eu-west-1)
    kubeconfig: kubeconfigs/prod.yaml
    contexts: [prod-readonly]
    hami_namespace: kube-system
    allowed_channels: [C0123ABCD]
    allowed_users: [U0123ABCD]
    allowed_user_groups: [S0123ABCD]
    cache_ttl_seconds: 30
    timeout_seconds: 5
    runtime_allowed: true
    nvidia_smi_allowed: true
  - name: staging
    kubeconfig: kubeconfigs/prod.yaml
    allowed_users: ["*"]
  - name: fleet-eu
    prometheus_url: https://thanos.example.com
    prometheus_selector: 'cluster="eu-1",region=~"eu.*"'
    allowed_channels: [C0123ABCD]
  - name: demo
    metrics_url: http://127.0.0.1:9395/metrics
    allowed_channels: ["*"]
  - name: here
    in_cluster: true
"""


def test_full_registry(folder: Path) -> None:
    registry = load_registry(_write(folder, FULL))
    assert [e.name for e in registry.entries] == ["prod", "staging", "fleet-eu", "demo", "here"]
    prod = registry.get("prod")
    assert prod == ClusterEntry(
        name="prod",
        display_name="Production (eu-west-1)",
        source_kind="kubeconfig",
        contexts=("prod-readonly",),
        kubeconfig_path=(folder / "kubeconfigs" / "prod.yaml").resolve(),
        hami_namespace="kube-system",
        allowed_channels=frozenset({"C0123ABCD"}),
        allowed_users=frozenset({"U0123ABCD"}),
        allowed_user_groups=frozenset({"S0123ABCD"}),
        cache_ttl_seconds=30.0,
        timeout_seconds=5.0,
        runtime_allowed=True,
        nvidia_smi_allowed=True,
        defined_at=f"{folder / 'clusters.yaml'}:2",
    )
    staging = registry.get("staging")
    assert staging is not None
    assert staging.contexts == ("prod-admin", "prod-readonly")  # every context of the file
    assert staging.cache_ttl_seconds == 60.0
    assert not staging.runtime_allowed and not staging.nvidia_smi_allowed
    fleet = registry.get("fleet-eu")
    assert fleet is not None and fleet.source_kind == "prometheus"
    assert fleet.prometheus_selector == 'cluster="eu-1",region=~"eu.*"'
    assert fleet.contexts == ()
    demo = registry.get("demo")
    assert demo is not None and demo.source_kind == "metrics-url"
    here = registry.get("here")
    assert here is not None and here.source_kind == "in-cluster"
    assert here.describe_source() == "the bot's in-cluster service account"
    assert registry.get("nope") is None


def test_access_is_closed_by_default_and_opened_per_list(folder: Path) -> None:
    registry = load_registry(_write(folder, FULL))

    def visible(user: str, channel: str | None, groups: tuple[str, ...] = ()) -> list[str]:
        return [e.name for e in registry.visible_to(user, channel, groups)]

    assert visible("U0123ABCD", None) == ["prod", "staging"]
    assert visible("U9", "C0123ABCD") == ["prod", "staging", "fleet-eu", "demo"]
    assert visible("U9", None, ("S0123ABCD",)) == ["prod", "staging"]
    assert visible("U9", "C9") == ["staging", "demo"]
    here = registry.get("here")
    assert here is not None and not here.allows("U0123ABCD", "C0123ABCD", ("S0123ABCD",))


def test_mapping_form_and_empty_files(folder: Path) -> None:
    registry = load_registry(
        _write(folder, "clusters:\n  demo:\n    metrics_url: http://h:1/metrics\n")
    )
    assert registry.entries[0].name == "demo"
    assert load_registry(_write(folder, "")).entries == ()
    assert load_registry(_write(folder, "clusters:\n")).entries == ()
    assert empty_registry().entries == ()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "clusters:\n  - name: a\n    metrics_url: [unclosed\n",
            "FILE:4: not valid YAML (expected ',' or ']', but got '<stream end>'). Fix the "
            "syntax at that line.",
        ),
        ("- a\n- b\n", 'FILE:1: the file must be a mapping with a "clusters" key'),
        ("cluster:\n  - name: a\n", 'FILE:1: unknown top-level key "cluster"; expected "clusters"'),
        ("clusters: 3\n", 'FILE:1: "clusters" must be a list (or a mapping by name) of clusters'),
        ("clusters:\n  - just-a-name\n", "FILE:2: clusters[0]: each cluster must be a mapping"),
        (
            "clusters:\n  - display_name: X\n    metrics_url: http://h/metrics\n",
            'FILE:2: clusters[0]: field "name" is required',
        ),
        (
            "clusters:\n  - name: Prod EU\n    metrics_url: http://h/metrics\n",
            'FILE:2: clusters[0]: field "name": "Prod EU" is not a valid cluster name; use '
            "lower-case letters, digits, '.', '_' and '-' (up to 63 characters), e.g. prod-eu",
        ),
        (
            "clusters:\n  - name: fleet\n    metrics_url: http://h/metrics\n",
            'FILE:2: clusters[0]: field "name": "fleet" is a word of /hami-summary itself '
            "(/hami-summary fleet does something else), so no cluster could be asked by that "
            "name; choose another, e.g. gpu-fleet",
        ),
        (
            "clusters:\n  - name: a\n    metrics_url: http://h/metrics\n    alowed_users: [U1]\n",
            'FILE:4: clusters[0] ("a"): unknown field "alowed_users" (did you mean '
            '"allowed_users"?). Known fields: name, display_name, kubeconfig, context, contexts, '
            "in_cluster, metrics_url, prometheus_url, prometheus_selector, hami_namespace, "
            "allowed_channels, allowed_users, allowed_user_groups, cache_ttl_seconds, "
            "timeout_seconds, runtime_allowed, nvidia_smi_allowed, pod_namespaces, digests, alerts",
        ),
        (
            "clusters:\n  - name: a\n    display_name: X\n",
            'FILE:2: clusters[0] ("a"): give exactly one source: kubeconfig (with '
            "context/contexts), in_cluster: true, metrics_url or prometheus_url (found: none)",
        ),
        (
            "clusters:\n  - name: a\n    metrics_url: http://h/metrics\n"
            "    prometheus_url: http://p:9090\n",
            'FILE:4: clusters[0] ("a"): give exactly one source: kubeconfig (with '
            "context/contexts), in_cluster: true, metrics_url or prometheus_url (found: "
            "metrics_url, prometheus_url)",
        ),
        (
            "clusters:\n  - name: a\n    metrics_url: ftp://h/metrics\n",
            'FILE:3: clusters[0] ("a"): field "metrics_url": "ftp://h/metrics" is not an http(s) '
            "URL, e.g. http://hami-scheduler.kube-system:31993/metrics",
        ),
        (
            "clusters:\n  - name: a\n    metrics_url: http://h/m\n    cache_ttl_seconds: soon\n",
            'FILE:4: clusters[0] ("a"): field "cache_ttl_seconds" must be a number of seconds, '
            "0 or more; got 'soon'",
        ),
        (
            "clusters:\n  - name: a\n    metrics_url: http://h/m\n    timeout_seconds: 0\n",
            'FILE:4: clusters[0] ("a"): field "timeout_seconds" must be a number of seconds, '
            "more than 0; got 0",
        ),
        (
            "clusters:\n  - name: a\n    metrics_url: http://h/m\n    runtime_allowed: 'yes'\n",
            'FILE:4: clusters[0] ("a"): field "runtime_allowed" must be true or false, got \'yes\'',
        ),
        (
            "clusters:\n  - name: a\n    metrics_url: http://h/m\n    allowed_users: {U1: x}\n",
            'FILE:4: clusters[0] ("a"): field "allowed_users" must be a list of Slack IDs (e.g. '
            "[C0123ABCD]) or \"*\", got {'U1': 'x'}",
        ),
        (
            "clusters:\n  - name: a\n    metrics_url: http://h/m\n"
            "    hami_namespace: Kube_System\n",
            'FILE:4: clusters[0] ("a"): field "hami_namespace": "Kube_System" is not a '
            "Kubernetes namespace name",
        ),
        (
            "clusters:\n  - name: a\n    in_cluster: true\n    pod_namespaces: [ml, ML_Team]\n",
            'FILE:4: clusters[0] ("a"): field "pod_namespaces": "ML_Team" is not a Kubernetes '
            "namespace name (lower-case letters, digits and '-', up to 63 characters)",
        ),
        (
            "clusters:\n  - name: a\n    in_cluster: true\n    pod_namespaces:\n      ml: true\n",
            'FILE:5: clusters[0] ("a"): field "pod_namespaces" must be a list of Kubernetes '
            "namespace names (e.g. [ml, team-a]), got {'ml': True}",
        ),
        (
            "clusters:\n  - name: a\n    prometheus_url: http://p:9090\n"
            "    prometheus_selector: cluster=prod\n",
            'FILE:4: clusters[0] ("a"): field "prometheus_selector": cannot read \'cluster=prod\' '
            'as PromQL label matchers; write e.g. cluster="prod" or '
            'cluster="prod",region=~"eu.*"',
        ),
        (
            "clusters:\n  - name: a\n    metrics_url: http://h/m\n    context: x\n",
            'FILE:4: clusters[0] ("a"): field "context" only applies with kubeconfig',
        ),
        (
            "clusters:\n  - name: a\n    in_cluster: true\n  - name: a\n    in_cluster: true\n",
            'FILE:4: clusters[1] ("a"): cluster name "a" is already used at line 2; names must '
            "be unique",
        ),
        (
            "clusters:\n  - name: a\n    in_cluster: true\n    in_cluster: true\n",
            'FILE:4: clusters[0]: "in_cluster" is given twice',
        ),
        (
            "clusters:\n  - name: a\n    in_cluster: 1\n",
            'FILE:3: clusters[0] ("a"): "in_cluster" must be true',
        ),
    ],
)
def test_validation_messages_name_file_line_and_field(
    folder: Path, text: str, expected: str
) -> None:
    assert _error(folder, text) == expected


def test_pod_namespaces_are_sorted_and_deduplicated(folder: Path) -> None:
    text = (
        "clusters:\n"
        "  - name: listed\n    in_cluster: true\n    pod_namespaces: [team-b, ml, team-b]\n"
        "  - name: single\n    in_cluster: true\n    pod_namespaces: ml\n"
        "  - name: every\n    in_cluster: true\n"
    )
    registry = load_registry(_write(folder, text))
    assert [e.pod_namespaces for e in registry.entries] == [("ml", "team-b"), ("ml",), ()]


def test_kubeconfig_problems(folder: Path) -> None:
    missing = _error(folder, "clusters:\n  - name: a\n    kubeconfig: nowhere.yaml\n")
    assert missing == (
        f'FILE:3: clusters[0] ("a"): field "kubeconfig": {(folder / "nowhere.yaml").resolve()} '
        "cannot be used: the file does not exist"
    )
    (folder / "notes.txt").write_text("just some notes\n")
    foreign = _error(folder, "clusters:\n  - name: a\n    kubeconfig: notes.txt\n")
    assert foreign.endswith("cannot be used: YAML, but not a mapping")
    unknown = _error(
        folder,
        "clusters:\n  - name: a\n    kubeconfig: kubeconfigs/prod.yaml\n"
        "    contexts:\n      - prod-admin\n      - prod-typo\n",
    )
    assert unknown == (
        f'FILE:5: clusters[0] ("a"): field "contexts": context "prod-typo" is not in '
        f"{(folder / 'kubeconfigs' / 'prod.yaml').resolve()} (it has: prod-admin, prod-readonly)"
    )
    both = _error(
        folder,
        "clusters:\n  - name: a\n    kubeconfig: kubeconfigs/prod.yaml\n"
        "    context: prod-admin\n    contexts: [prod-admin]\n",
    )
    assert both == 'FILE:5: clusters[0] ("a"): give "context" or "contexts", not both'


def test_missing_file() -> None:
    with pytest.raises(RegistryError) as caught:
        load_registry("/nonexistent/clusters.yaml")
    assert caught.value.message == (
        "/nonexistent/clusters.yaml: cluster registry file not found. Create it "
        '(see docs/clusters.md, "Cluster registry") or unset HAMI_CLUSTERS_FILE '
        "to run without live clusters."
    )
