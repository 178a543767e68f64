"""The pods pending on HAMi's resources, and their events, read through the Kubernetes API.

Pending pods come from one pod list (``status.phase=Pending``) and their events from one event
list per call (``involvedObject.kind=Pod``), both namespaced when a namespace is given, so a
fleet of 500 pending pods costs two requests, not 500. They are turned into the same
``PodDescription`` a pasted ``kubectl describe pod`` gives, so one story is told either way.
RBAC: ``list`` on ``pods`` and ``events`` (``get`` on ``pods`` for one pod's story).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from kubernetes import client as k8s

from bot.clusters.deadline import Deadline
from bot.clusters.errors import CollectionError
from bot.clusters.kube_errors import Call, KubeApiError, Target, classify
from core import number_style as numbers
from core.pending.describe import ContainerResources, PodDescription, PodEvent, is_hami_resource

POD_EVENTS = "involvedObject.kind=Pod"


def _call(target: Target, call: Call, deadline: Deadline, fn: Any, *args: Any, **kw: Any) -> Any:
    try:
        return fn(*args, _request_timeout=deadline.request_timeout(call.doing), **kw)
    except Exception as exc:  # every client failure is classified, none escapes raw
        raise KubeApiError(classify(exc, target, call, deadline.budget_seconds)) from exc


def _resources(values: dict[str, Any] | None) -> dict[str, str]:
    return {str(name): str(value) for name, value in (values or {}).items()}


def _containers(spec: Any) -> tuple[ContainerResources, ...]:
    found = []
    for init, containers in ((True, spec.init_containers or ()), (False, spec.containers or ())):
        for container in containers:
            resources = container.resources
            found.append(
                ContainerResources(
                    name=container.name,
                    init=init,
                    limits=_resources(resources.limits if resources else None),
                    requests=_resources(resources.requests if resources else None),
                )
            )
    return tuple(found)


def _pending_since(pod: Any) -> datetime | None:
    """When the scheduler first found no place (``PodScheduled`` False), else its creation."""
    since: datetime | None = pod.metadata.creation_timestamp
    for condition in pod.status.conditions or ():
        if condition.type == "PodScheduled" and condition.status == "False":
            since = condition.last_transition_time or since
    return since


def _event_time(event: Any) -> datetime | None:
    when: datetime | None = event.last_timestamp or event.event_time or event.first_timestamp
    return when


def _event(event: Any, now: datetime) -> PodEvent:
    seen = event.count or 1
    last = _event_time(event)
    first = event.first_timestamp or last
    age = numbers.seconds((now - last).total_seconds()) if last else "<unknown>"
    if seen > 1 and first is not None:
        age += f" (x{seen} over {numbers.seconds((now - first).total_seconds())})"
    source = (event.source.component if event.source else None) or event.reporting_component
    return PodEvent(
        type=event.type or "",
        reason=event.reason or "",
        age=age,
        source=source or "",
        message=event.message or "",
        times_seen=seen,
    )


def describe_pod(pod: Any, events: Iterable[Any], now: datetime) -> PodDescription:
    """One pod as ``kubectl describe pod`` shows it, from its API object and its events."""
    ordered = sorted(events, key=lambda e: _event_time(e) or datetime.min.replace(tzinfo=UTC))
    return PodDescription(
        name=pod.metadata.name,
        namespace=pod.metadata.namespace,
        status=pod.status.phase or "",
        node=pod.spec.node_name or "<none>",
        annotations={str(k): str(v) for k, v in (pod.metadata.annotations or {}).items()},
        containers=_containers(pod.spec),
        events=tuple(_event(event, now) for event in ordered),
        events_shown=True,
        scheduler_name=pod.spec.scheduler_name or "",
        pending_since=_pending_since(pod),
    )


def read_pending_pods(
    api: k8s.ApiClient,
    target: Target,
    namespace: str | None,
    deadline: Deadline,
    *,
    with_events: bool = True,
) -> tuple[PodDescription, ...]:
    """Every pod in ``namespace`` (all namespaces when None) pending on HAMi's resources;
    without ``with_events``, one request and no events (enough to count them)."""
    core = k8s.CoreV1Api(api)
    pods_call = Call("list", "pods", namespace, "listing the pending pods")
    events_call = Call("list", "events", namespace, "reading the pending pods' events")
    phase = "status.phase=Pending"
    if namespace:
        pods = _call(
            target, pods_call, deadline, core.list_namespaced_pod, namespace, field_selector=phase
        )
    else:
        pods = _call(
            target, pods_call, deadline, core.list_pod_for_all_namespaces, field_selector=phase
        )
    asking = [pod for pod in pods.items or () if _asks_hami(pod)]
    if not asking or not with_events:
        now = datetime.now(UTC)
        return tuple(describe_pod(pod, (), now) for pod in asking)
    if namespace:
        events = _call(
            target,
            events_call,
            deadline,
            core.list_namespaced_event,
            namespace,
            field_selector=POD_EVENTS,
        )
    else:
        events = _call(
            target,
            events_call,
            deadline,
            core.list_event_for_all_namespaces,
            field_selector=POD_EVENTS,
        )
    by_pod: dict[tuple[str, str], list[Any]] = {}
    for event in events.items or ():
        involved = event.involved_object
        by_pod.setdefault((involved.namespace or "", involved.name or ""), []).append(event)
    now = datetime.now(UTC)
    return tuple(
        describe_pod(pod, by_pod.get((pod.metadata.namespace, pod.metadata.name), ()), now)
        for pod in asking
    )


def read_pod_story_input(
    api: k8s.ApiClient, target: Target, namespace: str, name: str, deadline: Deadline
) -> PodDescription:
    """One pod and its events, for ``why``."""
    core = k8s.CoreV1Api(api)
    get_call = Call("get", "pods", namespace, f"reading pod {namespace}/{name}")
    try:
        pod = core.read_namespaced_pod(
            name, namespace, _request_timeout=deadline.request_timeout(get_call.doing)
        )
    except Exception as exc:
        failure = classify(exc, target, get_call, deadline.budget_seconds)
        if failure.status == 404:
            raise CollectionError(
                f'No pod "{name}" in namespace "{namespace}" on {target.label}. Check the name '
                "(kubectl get pods -n NAMESPACE); give it as NAMESPACE/POD."
            ) from exc
        raise KubeApiError(failure) from exc
    events_call = Call("list", "events", namespace, f"reading the events of {namespace}/{name}")
    selector = f"{POD_EVENTS},involvedObject.name={name}"
    events = _call(
        target,
        events_call,
        deadline,
        core.list_namespaced_event,
        namespace,
        field_selector=selector,
    )
    return describe_pod(pod, events.items or (), datetime.now(UTC))


def _asks_hami(pod: Any) -> bool:
    for container in (pod.spec.init_containers or []) + (pod.spec.containers or []):
        resources = container.resources
        names = list((resources.limits or {}) if resources else {}) + list(
            (resources.requests or {}) if resources else {}
        )
        if any(is_hami_resource(name) for name in names):
            return True
    return False
