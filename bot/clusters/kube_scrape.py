"""Find HAMi in a cluster by label and read its ``/metrics`` through the API server's proxy.

HAMi's Helm chart labels the scheduler pods and Service ``app.kubernetes.io/component:
hami-scheduler``; the Service port named ``monitor`` (31993 by default) targets the scheduler's
metrics listener (``--metrics-bind-address``, default ``:9395``). In HAMi's chart after v2.10
(PR #2895) that ``targetPort`` is the named container port ``metrics``, whose number comes from
``scheduler.metricsBindAddress`` and can be any (earlier charts target the number 9395). The API
server resolves the name, so the Service route asks for port ``monitor`` and never needs the
number; the pod fallback uses the pod's container port named ``metrics`` (9395 if it declares
none). A Service whose targetPort names a port the scheduler pods do not declare has no
endpoints, and the message says that, not that the pods are not Ready.

The device-plugin DaemonSet pods (``app.kubernetes.io/component: hami-device-plugin``) run the
vGPU monitor on port 9394.
Only the leader replica refreshes the node usage snapshot (HAMi ``pkg/scheduler/scheduler.go``),
and the chart's Service selects the leader, so the pod fallback prefers the pod labelled
``hami.io/scheduler-role=leader``.

Proxied bodies are read raw (``_preload_content=False``): the client (37.x) raises "Unsupported
content type" for bodies it cannot deserialise, and HAMi answers
``text/plain; version=0.0.4; charset=utf-8; escaping=underscores``. gzip is asked for, as
Prometheus does, and urllib3 decodes it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal

from kubernetes import client as k8s

from bot.clusters.deadline import Deadline, DeadlineExceeded
from bot.clusters.errors import CollectionError
from bot.clusters.hami_text import monitor_problem, scheduler_problem
from bot.clusters.kube_errors import ApiFailure, Call, KubeApiError, Target, classify
from core.settings import DEFAULT_SETTINGS
from core.summary.input_notes import human_size, over_input_limit

SCHEDULER_SELECTOR = "app.kubernetes.io/component=hami-scheduler"
MONITOR_SELECTOR = "app.kubernetes.io/component=hami-device-plugin"
LEADER_LABEL = ("hami.io/scheduler-role", "leader")
SERVICE_PORT_NAME = "monitor"
POD_PORT_NAME = "metrics"
DEFAULT_SCHEDULER_PORT = 9395
DEFAULT_MONITOR_PORT = 9394
# One node's vGPU monitor page is a few hundred KB even at 64 GPUs; the scheduler's page
# grows with the cluster and is bounded by the input limit (``Limits.max_input_bytes``).
MONITOR_MAX_BYTES = 64 * 1024 * 1024
MONITOR_CONCURRENCY = 8
_CHUNK_BYTES = 1024 * 1024
# Pods of the scheduler Deployment worth trying through the pod proxy (leader first).
_MAX_POD_ATTEMPTS = 3


@dataclass(frozen=True, slots=True)
class SchedulerScrape:
    text: str
    namespace: str
    route: str  # e.g. "Service kube-system/hami-scheduler port monitor"
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class MonitorScrape:
    texts: tuple[str, ...]
    missing: tuple[str, ...]  # "gpu-node-2: <why>"


SERVICE_LOOKUP = "Service lookup"

# Why one way to the metrics failed: the API refused or failed the request (``failure`` says
# how), no scheduler Service or no port of the right name exists, the Service's targetPort names
# a container port the pods it selects do not declare (so it has no endpoints), the answer was
# not the scheduler's metrics, or it was larger than the input limit.
RouteProblem = Literal["api", "no-service", "no-port", "no-target-port", "not-metrics", "too-large"]


class RouteFailure(Exception):
    """One way to the metrics failed; others may still work. ``route`` names it (a Service or
    pod and port, or ``SERVICE_LOOKUP``), ``why`` is one clause for people."""

    def __init__(
        self,
        route: str,
        why: str,
        problem: RouteProblem,
        failure: ApiFailure | None = None,
    ) -> None:
        super().__init__(f"{route}: {why}")
        self.route = route
        self.why = why
        self.problem = problem
        self.failure = failure

    @property
    def forbidden_call(self) -> Call | None:
        """The request RBAC refused on this route, if that is why it failed."""
        failure = self.failure
        return failure.call if failure is not None and failure.kind == "forbidden" else None


class HamiNotFound(CollectionError):
    """No HAMi scheduler pod on ``target`` (in ``namespace``, or in any namespace when None)."""

    def __init__(self, target: Target, namespace: str | None) -> None:
        where = (
            f'namespace "{namespace}"' if namespace else "any namespace these credentials can list"
        )
        super().__init__(
            f"HAMi not found on {target.label}: no pods labelled {SCHEDULER_SELECTOR} in {where}. "
            "Check that HAMi is installed (helm list -A | grep hami) and, if it runs in another "
            "namespace, give that one (--namespace, or hami_namespace in the registry)."
        )
        self.target = target
        self.namespace = namespace


class SchedulerMetricsUnreadable(CollectionError):
    """Every way to the scheduler's metrics in ``namespace`` failed; ``failures`` in the order
    they were tried."""

    def __init__(self, target: Target, namespace: str, failures: Sequence[RouteFailure]) -> None:
        super().__init__(_all_routes_failed(target, namespace, failures))
        self.target = target
        self.namespace = namespace
        self.failures = tuple(failures)


def _call(
    target: Target,
    call: Call,
    deadline: Deadline,
    fn: Callable[..., Any],
    *args: Any,
    **kwargs: Any,
) -> Any:
    """Run one client call within the deadline; raise a classified ``ApiFailure``."""
    try:
        return fn(*args, _request_timeout=deadline.request_timeout(call.doing), **kwargs)
    except Exception as exc:  # every client failure is classified, none escapes raw
        raise classify(exc, target, call, deadline.budget_seconds) from exc


def read_proxied_body(
    target: Target,
    call: Call,
    deadline: Deadline,
    fn: Callable[..., Any],
    *args: Any,
    max_bytes: int,
) -> tuple[str, str]:
    """GET through a proxy verb, read at most ``max_bytes`` within the deadline: (text, type)."""
    response = _call(
        target,
        call,
        deadline,
        fn,
        *args,
        _preload_content=False,
        _headers={"Accept": "text/plain;version=0.0.4;q=1,*/*;q=0.1", "Accept-Encoding": "gzip"},
    )
    chunks: list[bytes] = []
    size = 0
    try:
        for chunk in response.stream(_CHUNK_BYTES, decode_content=True):
            size += len(chunk)
            if size > max_bytes:
                raise ApiFailure(
                    "too-large",
                    over_input_limit(max_bytes),
                    short=f"answer over the {human_size(max_bytes)} input limit",
                    call=call,
                )
            chunks.append(chunk)
            deadline.check(call.doing)
    except ApiFailure:
        raise
    except (DeadlineExceeded, Exception) as exc:
        raise classify(exc, target, call, deadline.budget_seconds) from exc
    finally:
        response.release_conn()
    content_type = str(response.headers.get("Content-Type", ""))
    charset = re.search(r"charset=([\w-]++)", content_type)
    encoding = charset.group(1) if charset else "utf-8"
    try:
        text = b"".join(chunks).decode(encoding, errors="replace")
    except LookupError:
        text = b"".join(chunks).decode("utf-8", errors="replace")
    return text, content_type


def _named_port(pod: Any, name: str) -> int | None:
    for container in pod.spec.containers or []:
        for port in container.ports or []:
            if port.name == name:
                return int(port.container_port)
    return None


def _container_port(pod: Any, name: str, default: int) -> int:
    port = _named_port(pod, name)
    return default if port is None else port


def _declared_ports(pod: Any) -> str:
    ports = [
        f"{port.name or '(unnamed)'} {port.container_port}"
        for container in pod.spec.containers or []
        for port in container.ports or []
    ]
    return ", ".join(ports) or "none"


def _is_ready(pod: Any) -> bool:
    conditions = (pod.status.conditions if pod.status else None) or []
    return any(c.type == "Ready" and c.status == "True" for c in conditions)


def _scheduler_pods(pods: list[Any]) -> list[Any]:
    """Leader first, then Ready pods, then the rest (stable by name)."""

    def rank(pod: Any) -> tuple[int, int, str]:
        labels = pod.metadata.labels or {}
        leader = labels.get(LEADER_LABEL[0]) == LEADER_LABEL[1]
        return (0 if leader else 1, 0 if _is_ready(pod) else 1, pod.metadata.name)

    return sorted(pods, key=rank)


def find_scheduler_pods(
    core: k8s.CoreV1Api, target: Target, namespace: str | None, deadline: Deadline
) -> list[Any]:
    call = Call("list", "pods", namespace, "looking for the HAMi scheduler pods")
    try:
        if namespace:
            found = _call(
                target,
                call,
                deadline,
                core.list_namespaced_pod,
                namespace,
                label_selector=SCHEDULER_SELECTOR,
            )
        else:
            found = _call(
                target,
                call,
                deadline,
                core.list_pod_for_all_namespaces,
                label_selector=SCHEDULER_SELECTOR,
            )
    except ApiFailure as failure:
        if failure.kind == "forbidden" and namespace is None:
            raise KubeApiError(
                failure,
                " Or, if this identity may only read the HAMi namespace, name it: "
                "--namespace NS on the command line, hami_namespace in the cluster registry.",
            ) from failure
        raise KubeApiError(failure) from failure
    pods = list(found.items or [])
    if not pods:
        raise HamiNotFound(target, namespace)
    return _scheduler_pods(pods)


def scrape_scheduler(
    api: k8s.ApiClient,
    target: Target,
    namespace: str | None,
    deadline: Deadline,
    *,
    max_bytes: int = DEFAULT_SETTINGS.limits.max_input_bytes,
) -> SchedulerScrape:
    """Find the HAMi scheduler and read its metrics: Service proxy first, then pod proxy."""
    core = k8s.CoreV1Api(api)
    pods = find_scheduler_pods(core, target, namespace, deadline)
    hami_namespace = pods[0].metadata.namespace
    same_namespace = [p for p in pods if p.metadata.namespace == hami_namespace]
    failures: list[RouteFailure] = []
    try:
        text, route = _via_service(
            core, target, hami_namespace, same_namespace, deadline, max_bytes
        )
        return SchedulerScrape(text, hami_namespace, route)
    except RouteFailure as failed:
        failures.append(failed)
        if failed.problem == "too-large":
            # Every route ends at the same page: reading it again through a pod costs the
            # API server as much and ends the same way.
            raise SchedulerMetricsUnreadable(target, hami_namespace, failures) from None
    for pod in same_namespace[:_MAX_POD_ATTEMPTS]:
        try:
            text, route = _via_pod(core, target, pod, deadline, max_bytes)
        except RouteFailure as pod_failed:
            failures.append(pod_failed)
            if pod_failed.forbidden_call is not None or pod_failed.problem == "too-large":
                break  # the same RBAC rule refuses every pod; every pod has the same page
            continue
        note = (
            f"Read through the pod proxy because the Service route failed: {failures[0].route}: "
            f"{failures[0].why}."
        )
        return SchedulerScrape(text, hami_namespace, route, (note,))
    raise SchedulerMetricsUnreadable(target, hami_namespace, failures)


def _raise_if_fatal(failure: ApiFailure) -> None:
    if failure.fatal:
        raise KubeApiError(failure) from failure


def _via_service(
    core: k8s.CoreV1Api,
    target: Target,
    namespace: str,
    pods: Sequence[Any],
    deadline: Deadline,
    max_bytes: int,
) -> tuple[str, str]:
    call = Call("list", "services", namespace, "looking for the HAMi scheduler Service")
    try:
        services = (
            _call(
                target,
                call,
                deadline,
                core.list_namespaced_service,
                namespace,
                label_selector=SCHEDULER_SELECTOR,
            ).items
            or []
        )
    except ApiFailure as failure:
        _raise_if_fatal(failure)
        raise RouteFailure(SERVICE_LOOKUP, failure.short, "api", failure) from failure
    if not services:
        raise RouteFailure(
            SERVICE_LOOKUP,
            f'no Service labelled {SCHEDULER_SELECTOR} in namespace "{namespace}"',
            "no-service",
        )
    for service in sorted(services, key=lambda s: s.metadata.name):
        names = [p.name for p in (service.spec.ports or [])]
        if SERVICE_PORT_NAME in names:
            break
    else:
        service = services[0]
        ports = (
            ", ".join(f"{p.name or '(unnamed)'} {p.port}" for p in (service.spec.ports or []))
            or "none"
        )
        raise RouteFailure(
            SERVICE_LOOKUP,
            f'Service {namespace}/{service.metadata.name} has no port named "{SERVICE_PORT_NAME}" '
            f"(ports: {ports})",
            "no-port",
        )
    name = service.metadata.name
    route = f"Service {namespace}/{name} port {SERVICE_PORT_NAME}"
    try:
        return _read_scheduler_metrics(
            target,
            deadline,
            max_bytes,
            route=route,
            resource="services/proxy",
            read=core.connect_get_namespaced_service_proxy_with_path,
            name_and_port=f"{name}:{SERVICE_PORT_NAME}",
            namespace=namespace,
        )
    except RouteFailure as failed:
        if failed.failure is None or failed.failure.kind != "no-endpoints":
            raise
        undeclared = _undeclared_target_port(service, pods)
        if undeclared is None:
            raise
        raise RouteFailure(
            route, f"{failed.why}, as {undeclared}", "no-target-port", failed.failure
        ) from failed


def _undeclared_target_port(service: Any, pods: Sequence[Any]) -> str | None:
    """Why the Service port ``monitor`` has no endpoints if its ``targetPort`` is a name that no
    scheduler pod the Service selects declares (the endpoints controller leaves such pods out);
    None if it targets a number, selects no listed pod, or a selected pod declares the name."""
    wanted = next(p.target_port for p in service.spec.ports if p.name == SERVICE_PORT_NAME)
    selector = service.spec.selector or {}
    if not isinstance(wanted, str) or not selector:
        return None
    selected = [
        pod
        for pod in pods
        if all((pod.metadata.labels or {}).get(k) == v for k, v in selector.items())
    ]
    if not selected or any(_named_port(pod, wanted) is not None for pod in selected):
        return None
    which = ", ".join(
        f"{pod.metadata.namespace}/{pod.metadata.name} (ports: {_declared_ports(pod)})"
        for pod in selected
    )
    pods_word = "pod" if len(selected) == 1 else "pods"
    verb = "does" if len(selected) == 1 else "do"
    return (
        f'its port "{SERVICE_PORT_NAME}" targets the container port named "{wanted}", which '
        f"{pods_word} {which} {verb} not declare"
    )


def _via_pod(
    core: k8s.CoreV1Api, target: Target, pod: Any, deadline: Deadline, max_bytes: int
) -> tuple[str, str]:
    namespace, name = pod.metadata.namespace, pod.metadata.name
    port = _container_port(pod, POD_PORT_NAME, DEFAULT_SCHEDULER_PORT)
    return _read_scheduler_metrics(
        target,
        deadline,
        max_bytes,
        route=f"pod {namespace}/{name} port {port}",
        resource="pods/proxy",
        read=core.connect_get_namespaced_pod_proxy_with_path,
        name_and_port=f"{name}:{port}",
        namespace=namespace,
    )


def _read_scheduler_metrics(
    target: Target,
    deadline: Deadline,
    max_bytes: int,
    *,
    route: str,
    resource: str,
    read: Any,
    name_and_port: str,
    namespace: str,
) -> tuple[str, str]:
    """GET /metrics through one API-server proxy route (Service or pod) and check the body."""
    proxy = Call("get", resource, namespace, f"reading /metrics through {route}")
    try:
        text, content_type = read_proxied_body(
            target,
            proxy,
            deadline,
            read,
            name_and_port,
            namespace,
            "metrics",
            max_bytes=max_bytes,
        )
    except ApiFailure as failure:
        _raise_if_fatal(failure)
        problem: RouteProblem = "too-large" if failure.kind == "too-large" else "api"
        raise RouteFailure(route, failure.short, problem, failure) from failure
    _check_scheduler_body(route, text, content_type, target)
    return text, route


def _check_scheduler_body(route: str, text: str, content_type: str, target: Target) -> None:
    problem = scheduler_problem(text, target.secrets)
    if problem is not None:
        shown = target.quote(content_type) or "no content type"
        raise RouteFailure(
            route,
            f"answered ({shown}), but not with HAMi scheduler metrics: {problem}",
            "not-metrics",
        )


def _all_routes_failed(target: Target, namespace: str, failures: Sequence[RouteFailure]) -> str:
    tried = "; ".join(f"{f.route}: {f.why}" for f in failures)
    advice: list[str] = []
    forbidden = [call for f in failures if (call := f.forbidden_call) is not None]
    if forbidden:
        refused = sorted({f"`{call.verb} {call.resource}`" for call in forbidden})
        advice.append(
            f'RBAC refused {" and ".join(refused)} in namespace "{namespace}": grant a Role there '
            'with the rule {apiGroups: [""], resources: ["services", "services/proxy", '
            '"pods/proxy"], verbs: ["get", "list"]} to the identity of this kubeconfig.'
        )
    if any(
        f.failure is not None and f.failure.kind == "no-endpoints" and f.problem == "api"
        for f in failures
    ):
        advice.append(
            "The scheduler Service has no ready endpoints: check that the HAMi scheduler pods "
            "are Running and Ready (kubectl -n "
            f"{namespace} get pods -l {SCHEDULER_SELECTOR})."
        )
    if any(f.problem == "no-target-port" for f in failures):
        advice.append(
            f'The Service port "{SERVICE_PORT_NAME}" targets a container port by name that the '
            "scheduler pods do not declare, so the Service has no endpoints for it. HAMi's chart "
            f'after v2.10 declares the scheduler\'s metrics port as "{POD_PORT_NAME}" (from '
            "scheduler.metricsBindAddress) and targets that name: upgrade HAMi so that the "
            "scheduler Deployment and its Service come from the same chart release (helm "
            "upgrade)."
        )
    if any(f.problem == "not-metrics" for f in failures):
        advice.append(
            f'The Service port "{SERVICE_PORT_NAME}" and the pod port "{POD_PORT_NAME}" must '
            f"point at the scheduler's metrics listener (--metrics-bind-address, default "
            f":{DEFAULT_SCHEDULER_PORT}, path /metrics)."
        )
    if any(f.route == SERVICE_LOOKUP for f in failures) and not forbidden:
        advice.append(
            f"HAMi's chart creates a Service labelled {SCHEDULER_SELECTOR} with a port named "
            f'"{SERVICE_PORT_NAME}"; re-install or upgrade the chart if it is missing.'
        )
    too_large = [f.failure for f in failures if f.problem == "too-large" and f.failure]
    if too_large:
        advice.append(too_large[0].message)
    if not advice:
        advice.append("Check the HAMi scheduler pods' logs and that the metrics port is listening.")
    return (
        f"Could not read the HAMi scheduler metrics of {target.label}. Tried {tried}. "
        + " ".join(advice)
    )


# --- vGPU monitors (runtime) ------------------------------------------------------------------


def scrape_monitors(
    api: k8s.ApiClient, target: Target, namespace: str | None, deadline: Deadline
) -> MonitorScrape:
    """Read every vGPU monitor through the pod proxy. Missing monitors are listed, not fatal."""
    core = k8s.CoreV1Api(api)
    call = Call("list", "pods", namespace, "looking for the HAMi vGPU monitor pods")
    try:
        if namespace:
            listed = _call(
                target,
                call,
                deadline,
                core.list_namespaced_pod,
                namespace,
                label_selector=MONITOR_SELECTOR,
            )
        else:
            listed = _call(
                target,
                call,
                deadline,
                core.list_pod_for_all_namespaces,
                label_selector=MONITOR_SELECTOR,
            )
    except ApiFailure as failure:
        _raise_if_fatal(failure)
        return MonitorScrape((), (f"all nodes: {failure.short}",))
    pods = sorted(listed.items or [], key=lambda p: (p.spec.node_name or "", p.metadata.name))
    if not pods:
        where = f'namespace "{namespace}"' if namespace else "any namespace"
        return MonitorScrape((), (f"all nodes: no pods labelled {MONITOR_SELECTOR} in {where}",))
    with ThreadPoolExecutor(
        max_workers=MONITOR_CONCURRENCY, thread_name_prefix="hami-monitor"
    ) as pool:
        results = list(pool.map(lambda pod: _scrape_monitor(core, target, pod, deadline), pods))
    texts = tuple(text for text, _ in results if text is not None)
    missing = tuple(why for _, why in results if why is not None)
    return MonitorScrape(texts, missing)


def _scrape_monitor(
    core: k8s.CoreV1Api, target: Target, pod: Any, deadline: Deadline
) -> tuple[str | None, str | None]:
    """One monitor pod's metrics text, or why its node is missing (``"gpu-node-2: <why>"``)."""
    node = pod.spec.node_name or "(unscheduled)"
    phase = pod.status.phase if pod.status else None
    if phase != "Running":
        return None, f"{node}: monitor pod {pod.metadata.name} is {phase or 'not running'}"
    port = _container_port(pod, POD_PORT_NAME, DEFAULT_MONITOR_PORT)
    route = f"pod {pod.metadata.namespace}/{pod.metadata.name} port {port}"
    proxy = Call("get", "pods/proxy", pod.metadata.namespace, f"reading /metrics through {route}")
    try:
        text, _ = read_proxied_body(
            target,
            proxy,
            deadline,
            core.connect_get_namespaced_pod_proxy_with_path,
            f"{pod.metadata.name}:{port}",
            pod.metadata.namespace,
            "metrics",
            max_bytes=MONITOR_MAX_BYTES,
        )
    except ApiFailure as failure:
        return None, f"{node}: {route}: {failure.short}"
    problem = monitor_problem(text)
    if problem is not None:
        return None, f"{node}: {route}: {problem}"
    return text, None
