"""The pending pods of a registered cluster, and one pod's story, within its registry entry.

An entry's ``pod_namespaces`` bound what is read: ``pending`` lists only those namespaces
(one pod list and one event list each) and ``why`` refuses a pod elsewhere, with the same words
whether the pod exists there or not. Without them every namespace the credentials can list is
read. Clusters read through a metrics URL or Prometheus have no API to ask for pods.
"""

from __future__ import annotations

from kubernetes import client as k8s

from bot.clusters.collect import open_cluster_api
from bot.clusters.deadline import Deadline
from bot.clusters.errors import CollectionError
from bot.clusters.kube_errors import Call, KubeApiError, Target, classify
from bot.clusters.pending_pods import read_pending_pods, read_pod_story_input
from bot.clusters.registry import ClusterEntry
from core.pending.describe import PodDescription

NO_POD_API = (
    'Cluster "{name}" is read through {how}: there is no Kubernetes API to ask for its pods. '
    "Paste the pod's `kubectl describe pod` output (or `kubectl get events`) in a thread with "
    "me instead, and I will read it."
)


def _api(entry: ClusterEntry, context: str | None) -> tuple[k8s.ApiClient, Target]:
    if entry.source_kind not in ("kubeconfig", "in-cluster"):
        how = "a metrics URL" if entry.source_kind == "metrics-url" else "Prometheus"
        raise CollectionError(NO_POD_API.format(name=entry.name, how=how))
    api, target, _ = open_cluster_api(entry, context)
    return api, target


def _outside(entry: ClusterEntry, namespace: str) -> CollectionError:
    allowed = ", ".join(entry.pod_namespaces)
    return CollectionError(
        f'Namespace "{namespace}" is not one the registry lets me read pods in for cluster '
        f'"{entry.name}" (pod_namespaces: {allowed}; {entry.defined_at}).'
    )


def entry_pending_pods(
    entry: ClusterEntry, context: str | None, namespace: str | None
) -> tuple[PodDescription, ...]:
    """The pods pending on HAMi's resources in ``namespace`` (None: every allowed one)."""
    if namespace is not None and entry.pod_namespaces and namespace not in entry.pod_namespaces:
        raise _outside(entry, namespace)
    wanted: tuple[str | None, ...] = (
        (namespace,) if namespace is not None else entry.pod_namespaces or (None,)
    )
    api, target = _api(entry, context)
    deadline = Deadline(entry.timeout_seconds)
    try:
        found: list[PodDescription] = []
        for each in wanted:
            found += read_pending_pods(api, target, each, deadline)
        return tuple(found)
    finally:
        api.close()  # type: ignore[no-untyped-call]


def _namespaces_of(
    api: k8s.ApiClient, target: Target, entry: ClusterEntry, name: str, deadline: Deadline
) -> list[str]:
    """The namespaces (allowed by the entry) holding a pod called ``name``."""
    core = k8s.CoreV1Api(api)
    call = Call("list", "pods", None, f'looking for pod "{name}" in every namespace')
    selector = f"metadata.name={name}"
    try:
        if entry.pod_namespaces:
            found = []
            for namespace in entry.pod_namespaces:
                pods = core.list_namespaced_pod(
                    namespace,
                    field_selector=selector,
                    _request_timeout=deadline.request_timeout(call.doing),
                )
                found += [namespace] if pods.items else []
            return found
        pods = core.list_pod_for_all_namespaces(
            field_selector=selector, _request_timeout=deadline.request_timeout(call.doing)
        )
    except Exception as exc:  # every client failure is classified, none escapes raw
        raise KubeApiError(classify(exc, target, call, deadline.budget_seconds)) from exc
    return sorted({str(pod.metadata.namespace) for pod in pods.items or () if pod.metadata})


def entry_pod(
    entry: ClusterEntry, context: str | None, namespace: str | None, name: str
) -> PodDescription:
    """One pod and its events; without ``namespace``, the one namespace that has it."""
    if namespace is not None and entry.pod_namespaces and namespace not in entry.pod_namespaces:
        raise _outside(entry, namespace)
    api, target = _api(entry, context)
    deadline = Deadline(entry.timeout_seconds)
    try:
        if namespace is None:
            holding = _namespaces_of(api, target, entry, name, deadline)
            if not holding:
                raise CollectionError(
                    f'No pod "{name}" in any namespace I may read on {target.label}. Check the '
                    "name (kubectl get pods -A), or give it as NAMESPACE/POD."
                )
            if len(holding) > 1:
                raise CollectionError(
                    f'Pod "{name}" is in several namespaces ({", ".join(holding)}): give it as '
                    f"NAMESPACE/POD, e.g. {holding[0]}/{name}."
                )
            namespace = holding[0]
        return read_pod_story_input(api, target, namespace, name, deadline)
    finally:
        api.close()  # type: ignore[no-untyped-call]
