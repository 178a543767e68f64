"""A local Kubernetes API server for tests, over real HTTPS, that the official client talks to.

It serves what hami-summary uses, with complete objects (the client deserialises strictly):
``/version``; pod and service lists (cluster-wide and per namespace) with label selectors; single
pods; service proxy and pod proxy (``.../proxy/<path>``, honouring ``Accept-Encoding: gzip``
like promhttp behind the API server does); and pod exec over a websocket speaking
``v5.channel.k8s.io`` / ``v4.channel.k8s.io`` (first byte of each binary message is the channel:
1 stdout, 2 stderr, 3 status). Errors are ``Status`` bodies as the real server sends them.

A Service port with an answer in ``service_proxy`` answers with it; one without is resolved as
the endpoints controller does (``FakeCluster.endpoint``: its ``targetPort``, a number or a
container port's name, on a Running pod its selector picks) and relayed to that pod's
``pod_proxy`` answer.

Usage::

    cluster = hami_cluster()                  # HAMi laid out as its Helm chart does
    with FakeApiServer(cluster) as api:
        kubeconfig = api.write_kubeconfig(tmp_path / "config", context="test")
        ...
        cluster.forbid("get", "services/proxy")   # change behaviour while running
        assert api.requests                        # every request is recorded

``SilentServer`` accepts TCP connections and never answers (timeout tests).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import socket
import ssl
import struct
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import yaml

from tests.kube.tls import ServerCertificate, session_certificate

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
PROM_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8; escaping=underscores"
WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
TOKEN = "test-token-7f3a9c"  # the bearer token the server accepts unless told otherwise

SCHEDULER_LABEL = ("app.kubernetes.io/component", "hami-scheduler")
DEVICE_PLUGIN_LABEL = ("app.kubernetes.io/component", "hami-device-plugin")


# --- cluster state ----------------------------------------------------------------------------


@dataclass
class ExecOutcome:
    """What one exec does: output, exit code, or "binary not found" (reason InternalError)."""

    stdout: str = ""
    stderr: str = ""
    exit_code: int = 0
    missing_binary: bool = False
    delay_seconds: float = 0.0
    # Set once the delay is over and the output is on its way: a caller that returned before
    # it did not wait for this answer.
    answered: threading.Event = field(default_factory=threading.Event, compare=False)


ExecBehaviour = ExecOutcome | Callable[[list[str]], ExecOutcome]


@dataclass
class FakeContainer:
    name: str
    ports: tuple[tuple[str, int], ...] = ()
    # None: no nvidia-smi in this image (every command is "executable file not found").
    exec: ExecBehaviour | None = None
    limits: dict[str, str] = field(default_factory=dict)
    requests: dict[str, str] = field(default_factory=dict)
    init: bool = False


@dataclass
class FakePod:
    namespace: str
    name: str
    containers: list[FakeContainer]
    labels: dict[str, str] = field(default_factory=dict)
    node_name: str = "gpu-node-1"
    phase: str = "Running"
    annotations: dict[str, str] = field(default_factory=dict)
    scheduler_name: str = "default-scheduler"
    # A pending pod: when the scheduler first found no node (PodScheduled False).
    unschedulable_since: str | None = None


@dataclass
class FakeEvent:
    """A core/v1 Event about a pod, as the legacy event recorder HAMi uses writes it."""

    namespace: str
    pod: str
    reason: str
    message: str
    type: str = "Warning"
    count: int = 1
    first: str = "2026-08-21T06:41:00Z"
    last: str = "2026-08-21T06:41:00Z"
    component: str = "hami-scheduler"


@dataclass
class FakeServicePort:
    name: str
    port: int
    target_port: int | str  # a number, or the name of a container port (HAMi after v2.10)


@dataclass
class FakeService:
    namespace: str
    name: str
    ports: list[FakeServicePort]
    labels: dict[str, str] = field(default_factory=dict)
    has_endpoints: bool = True
    selector: dict[str, str] = field(
        default_factory=lambda: {SCHEDULER_LABEL[0]: SCHEDULER_LABEL[1]}
    )


@dataclass
class ProxyAnswer:
    """What the proxied backend answers (the API server relays it)."""

    body: bytes
    status: int = 200
    content_type: str = PROM_CONTENT_TYPE
    delay_seconds: float = 0.0
    answered: threading.Event = field(default_factory=threading.Event, compare=False)  # as above


@dataclass
class RecordedRequest:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]


@dataclass
class RecordedExec:
    namespace: str
    pod: str
    container: str
    command: list[str]


@dataclass
class FakeCluster:
    pods: list[FakePod] = field(default_factory=list)
    services: list[FakeService] = field(default_factory=list)
    # (namespace, service, port name) -> answer; (namespace, pod, port number) -> answer
    service_proxy: dict[tuple[str, str, str], ProxyAnswer] = field(default_factory=dict)
    pod_proxy: dict[tuple[str, str, int], ProxyAnswer] = field(default_factory=dict)
    # (namespace, pod, port number) each Service proxy request without a ``service_proxy``
    # answer was resolved to, in order.
    service_backends: list[tuple[str, str, int]] = field(default_factory=list)
    # (verb, resource) pairs RBAC refuses; resource "pods" with verb "list" refuses only the
    # cluster-wide list when ``forbid_cluster_scope_only`` is set.
    forbidden: set[tuple[str, str]] = field(default_factory=set)
    forbid_cluster_scope_only: bool = False
    token: str = TOKEN
    user: str = "system:serviceaccount:hami-summary:reader"
    ws_protocols: tuple[str, ...] = ("v4.channel.k8s.io",)  # server preference order
    execs: list[RecordedExec] = field(default_factory=list)
    events: list[FakeEvent] = field(default_factory=list)

    def forbid(self, verb: str, resource: str) -> None:
        self.forbidden.add((verb, resource))

    def pod(self, namespace: str, name: str) -> FakePod | None:
        return next((p for p in self.pods if p.namespace == namespace and p.name == name), None)

    def service(self, namespace: str, name: str) -> FakeService | None:
        return next((s for s in self.services if s.namespace == namespace and s.name == name), None)

    def endpoint(self, service: FakeService, port_name: str) -> tuple[FakePod, int] | None:
        """The pod and port the Service's port ``port_name`` reaches, as the endpoints
        controller resolves it: a Running pod the selector picks (first by name), at
        ``targetPort``, a number or the name of a container port. A pod that declares no port
        of that name is no endpoint for it."""
        port = next((p for p in service.ports if p.name == port_name), None)
        if port is None:
            return None
        for pod in sorted(self.pods, key=lambda p: p.name):
            if pod.namespace != service.namespace or pod.phase != "Running":
                continue
            if any(pod.labels.get(k) != v for k, v in service.selector.items()):
                continue
            if isinstance(port.target_port, int):
                return pod, port.target_port
            for container in pod.containers:
                for name, number in container.ports:
                    if name == port.target_port:
                        return pod, number
        return None


def fixture_bytes(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def nvidia_smi(csv_rows: str, table: str | None = None) -> Callable[[list[str]], ExecOutcome]:
    """Exec behaviour of a container with nvidia-smi: the query form prints ``csv_rows``; plain
    ``nvidia-smi`` prints ``table`` (or fails like a driver without the query option)."""

    def run(command: list[str]) -> ExecOutcome:
        if command[:1] != ["nvidia-smi"]:
            return ExecOutcome(missing_binary=True)
        if len(command) > 1:
            return ExecOutcome(stdout=csv_rows)
        if table is None:
            return ExecOutcome(stderr="unexpected call\n", exit_code=9)
        return ExecOutcome(stdout=table)

    return run


def hami_cluster(
    *,
    namespace: str = "kube-system",
    scheduler_body: bytes | None = None,
    with_workloads: bool = True,
) -> FakeCluster:
    """HAMi as its Helm chart lays it out, serving the small fixture cluster.

    Scheduler Deployment pod (leader-labelled) with containers ``kube-scheduler`` and
    ``vgpu-scheduler-extender`` (port ``metrics`` 9395); Service ``hami-scheduler`` with ports
    ``http`` and ``monitor`` (31993 -> 9395); one device-plugin pod per GPU node with a
    ``vgpu-monitor`` container (port ``metrics`` 9394); and the fixture's workload pods.
    """
    body = scheduler_body if scheduler_body is not None else fixture_bytes("scheduler-small.prom")
    scheduler = FakePod(
        namespace=namespace,
        name="hami-scheduler-5d8f7c9b6-x2kqp",
        labels={
            SCHEDULER_LABEL[0]: SCHEDULER_LABEL[1],
            "app.kubernetes.io/name": "hami",
            "hami.io/scheduler-role": "leader",
        },
        containers=[
            FakeContainer("kube-scheduler"),
            FakeContainer("vgpu-scheduler-extender", ports=(("https", 443), ("metrics", 9395))),
        ],
        node_name="control-1",
    )
    standby = FakePod(
        namespace=namespace,
        name="hami-scheduler-5d8f7c9b6-a7c2d",
        labels={SCHEDULER_LABEL[0]: SCHEDULER_LABEL[1], "hami.io/scheduler-role": "follower"},
        containers=[FakeContainer("vgpu-scheduler-extender", ports=(("metrics", 9395),))],
        node_name="control-2",
    )
    service = FakeService(
        namespace=namespace,
        name="hami-scheduler",
        labels={SCHEDULER_LABEL[0]: SCHEDULER_LABEL[1]},
        ports=[FakeServicePort("http", 443, 443), FakeServicePort("monitor", 31993, 9395)],
    )
    cluster = FakeCluster(pods=[standby, scheduler], services=[service])
    cluster.service_proxy[(namespace, "hami-scheduler", "monitor")] = ProxyAnswer(body)
    cluster.pod_proxy[(namespace, scheduler.name, 9395)] = ProxyAnswer(body)
    for node, suffix in (("gpu-node-1", "7xk2p"), ("gpu-node-2", "m4q9z")):
        plugin = FakePod(
            namespace=namespace,
            name=f"hami-device-plugin-{suffix}",
            labels={DEVICE_PLUGIN_LABEL[0]: DEVICE_PLUGIN_LABEL[1]},
            containers=[
                FakeContainer("device-plugin"),
                FakeContainer("vgpu-monitor", ports=(("metrics", 9394),)),
            ],
            node_name=node,
        )
        cluster.pods.append(plugin)
    cluster.pod_proxy[(namespace, "hami-device-plugin-7xk2p", 9394)] = ProxyAnswer(
        fixture_bytes("vgpumonitor-small.prom")
    )
    if with_workloads:
        cluster.pods.extend(fixture_workloads())
    return cluster


def fixture_workloads() -> list[FakePod]:
    """The pods of ``scheduler-small.prom`` with nvidia-smi answers matching their slices."""
    uuid_a0 = "GPU-5f3c1a2e-7b4d-4e91-9c0a-1d2e3f405162"
    uuid_a1 = "GPU-8a9b0c1d-2e3f-4a5b-8c6d-7e8f90a1b2c3"
    uuid_b1 = "GPU-e7f80912-3a4b-4c5d-ae6f-7b8c9d0e1f20"
    uuid_b2 = "GPU-6b7c8d9e-0f1a-4b2c-bd3e-4f5a6b7c8d9e"
    return [
        FakePod(
            "team-a",
            "llm-infer-0",
            [
                FakeContainer("istio-proxy"),
                FakeContainer("server", exec=nvidia_smi(f"0, {uuid_a0}, 41, 9000, 10240\n")),
            ],
        ),
        FakePod(
            "team-a",
            "train-full-0",
            [FakeContainer("trainer", exec=nvidia_smi(f"0, {uuid_a1}, 97, 39000, 40960\n"))],
        ),
        FakePod(
            "team-b",
            "embed-svc-0",
            [FakeContainer("embed", exec=nvidia_smi(f"0, {uuid_a0}, 2, 300, 8192\n"))],
        ),
        FakePod(
            "team-b",
            "notebook-0",
            [FakeContainer("notebook", exec=None)],  # image without nvidia-smi
            node_name="gpu-node-2",
        ),
        FakePod(
            "ml-batch",
            "ddp-worker-0",
            [
                FakeContainer(
                    "worker",
                    exec=nvidia_smi(
                        f"0, {uuid_b1}, 60, 5000, 7680\n1, {uuid_b2}, 40, 4000, 7680\n"
                    ),
                )
            ],
            node_name="gpu-node-2",
        ),
    ]


# --- objects as the API server serialises them ------------------------------------------------


def _meta(namespace: str, name: str, labels: dict[str, str]) -> dict[str, Any]:
    uid = hashlib.sha1(f"{namespace}/{name}".encode()).hexdigest()
    return {
        "name": name,
        "namespace": namespace,
        "labels": dict(labels),
        "uid": f"{uid[:8]}-{uid[8:12]}-{uid[12:16]}-{uid[16:20]}-{uid[20:32]}",
        "resourceVersion": "4711",
        "creationTimestamp": "2026-08-21T06:40:00Z",
    }


def _container_object(c: FakeContainer) -> dict[str, Any]:
    resources: dict[str, dict[str, str]] = {}
    if c.limits:
        resources["limits"] = dict(c.limits)
    if c.requests or c.limits:
        # The API server defaults requests to limits for extended resources.
        resources["requests"] = {**c.limits, **c.requests}
    return {
        "name": c.name,
        "image": f"registry.example/{c.name}:1.0",
        "imagePullPolicy": "IfNotPresent",
        "ports": [{"name": n, "containerPort": p, "protocol": "TCP"} for n, p in c.ports],
        "resources": resources,
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }


def pod_object(pod: FakePod) -> dict[str, Any]:
    containers = [_container_object(c) for c in pod.containers if not c.init]
    init_containers = [_container_object(c) for c in pod.containers if c.init]
    ready = pod.phase == "Running"
    metadata = _meta(pod.namespace, pod.name, pod.labels)
    if pod.annotations:
        metadata["annotations"] = dict(pod.annotations)
    conditions: list[dict[str, Any]] = [
        {
            "type": "Ready",
            "status": "True" if ready else "False",
            "lastTransitionTime": "2026-08-21T06:40:09Z",
        }
    ]
    if pod.unschedulable_since is not None:
        conditions = [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "lastProbeTime": None,
                "lastTransitionTime": pod.unschedulable_since,
            }
        ]
    spec_extra: dict[str, Any] = {"initContainers": init_containers} if init_containers else {}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": {
            "containers": containers,
            **spec_extra,
            **({"nodeName": pod.node_name} if pod.node_name else {}),
            "restartPolicy": "Always",
            "schedulerName": pod.scheduler_name,
            "serviceAccountName": "default",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
        },
        "status": {
            "phase": pod.phase,
            "podIP": "10.244.1.17",
            "hostIP": "192.168.10.4",
            "startTime": "2026-08-21T06:40:05Z",
            "conditions": conditions,
            "containerStatuses": [
                {
                    "name": c.name,
                    "ready": ready,
                    "restartCount": 0,
                    "image": f"registry.example/{c.name}:1.0",
                    "imageID": "",
                    "started": ready,
                    "state": {"running": {"startedAt": "2026-08-21T06:40:08Z"}} if ready else {},
                }
                for c in pod.containers
            ],
        },
    }


def event_object(event: FakeEvent) -> dict[str, Any]:
    meta = _meta(event.namespace, f"{event.pod}.{abs(hash(event.message)) % 16**16:016x}", {})
    del meta["labels"]
    pod_uid = _meta(event.namespace, event.pod, {})["uid"]
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": meta,
        "involvedObject": {
            "kind": "Pod",
            "namespace": event.namespace,
            "name": event.pod,
            "uid": pod_uid,
            "apiVersion": "v1",
            "resourceVersion": "4711",
        },
        "reason": event.reason,
        "message": event.message,
        "source": {"component": event.component},
        "firstTimestamp": event.first,
        "lastTimestamp": event.last,
        "count": event.count,
        "type": event.type,
        "eventTime": None,
        "reportingComponent": "",
        "reportingInstance": "",
    }


def field_selector_matches(selector: str, fields: dict[str, str]) -> bool:
    """``a=b,c=d`` (also ``==`` and ``!=``) against an object's field values."""
    for term in filter(None, selector.split(",")):
        if "!=" in term:
            key, value = term.split("!=", 1)
            if fields.get(key) == value:
                return False
        else:
            key, value = term.replace("==", "=").split("=", 1)
            if fields.get(key) != value:
                return False
    return True


def service_object(service: FakeService) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _meta(service.namespace, service.name, service.labels),
        "spec": {
            "type": "NodePort",
            "clusterIP": "10.96.12.34",
            "clusterIPs": ["10.96.12.34"],
            "selector": dict(service.selector),
            "ports": [
                {
                    "name": p.name,
                    "port": p.port,
                    "targetPort": p.target_port,
                    "protocol": "TCP",
                    "nodePort": 30000 + p.port % 2000,
                }
                for p in service.ports
            ],
            "sessionAffinity": "None",
        },
        "status": {"loadBalancer": {}},
    }


def status_object(code: int, reason: str, message: str, **details: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details:
        body["details"] = details
    return body


def forbidden_status(
    user: str, verb: str, resource: str, namespace: str | None, name: str | None = None
) -> dict[str, Any]:
    """The 403 body kube-apiserver's RBAC authoriser produces."""
    group, _, sub = resource.partition("/")
    kind = f"{group}" + (f"/{sub}" if sub else "")
    subject = f'{kind} "{name}"' if name else kind
    scope = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    message = (
        f'{subject} is forbidden: User "{user}" cannot {verb} resource "{kind}" in API group "" '
        f"{scope}"
    )
    details: dict[str, Any] = {"kind": group}
    if name:
        details["name"] = name
    return status_object(403, "Forbidden", message, **details)


# --- label selectors --------------------------------------------------------------------------


def selector_matches(selector: str, labels: dict[str, str]) -> bool:
    """Equality-based selectors (``a=b``, ``a==b``, ``a!=b``, ``a``, ``!a``), comma-joined."""
    for term in filter(None, (t.strip() for t in selector.split(","))):
        if "!=" in term:
            key, value = (s.strip() for s in term.split("!=", 1))
            if labels.get(key) == value:
                return False
        elif "=" in term:
            key, value = (s.strip() for s in term.replace("==", "=").split("=", 1))
            if labels.get(key) != value:
                return False
        elif term.startswith("!"):
            if term[1:] in labels:
                return False
        elif term not in labels:
            return False
    return True


# --- the server -------------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return

    @property
    def cluster(self) -> FakeCluster:
        return self.server.cluster

    def send_json(
        self, code: int, body: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        self.server.record(
            RecordedRequest(
                "GET", parts.path, query, {k.lower(): v for k, v in self.headers.items()}
            )
        )
        auth = self.headers.get("Authorization", "")
        if auth != f"Bearer {self.cluster.token}":
            self.send_json(401, status_object(401, "Unauthorized", "Unauthorized"))
            return
        segments = [unquote(s) for s in parts.path.strip("/").split("/")]
        try:
            self.route(segments, query)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            self.close_connection = True

    def forbidden(
        self, verb: str, resource: str, namespace: str | None, name: str | None = None
    ) -> bool:
        refused = (verb, resource) in self.cluster.forbidden
        if refused and self.cluster.forbid_cluster_scope_only and namespace is not None:
            refused = False
        if refused:
            self.send_json(
                403, forbidden_status(self.cluster.user, verb, resource, namespace, name)
            )
        return refused

    def route(self, s: list[str], query: dict[str, list[str]]) -> None:
        selector = query.get("labelSelector", [""])[0]
        field_selector = query.get("fieldSelector", [""])[0]
        if s == ["version"]:
            self.send_json(
                200,
                {
                    "major": "1",
                    "minor": "31",
                    "gitVersion": "v1.31.2",
                    "gitCommit": "5864a4677267e6adeae276ad85882a8714d69d9d",
                    "gitTreeState": "clean",
                    "buildDate": "2026-08-01T00:00:00Z",
                    "goVersion": "go1.22.8",
                    "compiler": "gc",
                    "platform": "linux/amd64",
                },
            )
            return
        if s[:2] != ["api", "v1"]:
            self.send_json(
                404,
                status_object(404, "NotFound", "the server could not find the requested resource"),
            )
            return
        rest = s[2:]
        if rest == ["events"] or (
            len(rest) == 3 and rest[0] == "namespaces" and rest[2] == "events"
        ):
            namespace = rest[1] if len(rest) == 3 else None
            if self.forbidden("list", "events", namespace):
                return
            self.send_events(namespace, field_selector)
            return
        if rest in (["pods"], ["services"]):
            kind = rest[0]
            if self.forbidden("list", kind, None):
                return
            self.send_list(kind, None, selector, field_selector)
            return
        if len(rest) >= 3 and rest[0] == "namespaces":
            namespace, kind = rest[1], rest[2]
            if len(rest) == 3 and kind in ("pods", "services"):
                if self.forbidden("list", kind, namespace):
                    return
                self.send_list(kind, namespace, selector, field_selector)
                return
            if kind == "pods" and len(rest) == 4:
                if self.forbidden("get", "pods", namespace, rest[3]):
                    return
                pod = self.cluster.pod(namespace, rest[3])
                if pod is None:
                    self.send_json(
                        404,
                        status_object(
                            404,
                            "NotFound",
                            f'pods "{rest[3]}" not found',
                            name=rest[3],
                            kind="pods",
                        ),
                    )
                    return
                self.send_json(200, pod_object(pod))
                return
            if kind == "pods" and len(rest) == 5 and rest[4] == "exec":
                self.exec(namespace, rest[3], query)
                return
            if len(rest) >= 5 and rest[4] == "proxy" and kind in ("pods", "services"):
                self.proxy(kind, namespace, rest[3], "/".join(rest[5:]))
                return
        self.send_json(
            404, status_object(404, "NotFound", "the server could not find the requested resource")
        )

    def send_events(self, namespace: str | None, field_selector: str) -> None:
        items = [
            event_object(e)
            for e in self.cluster.events
            if (namespace is None or e.namespace == namespace)
            and field_selector_matches(
                field_selector,
                {
                    "involvedObject.kind": "Pod",
                    "involvedObject.name": e.pod,
                    "involvedObject.namespace": e.namespace,
                    "reason": e.reason,
                    "type": e.type,
                },
            )
        ]
        self.send_json(
            200,
            {
                "apiVersion": "v1",
                "kind": "EventList",
                "metadata": {"resourceVersion": "4711"},
                "items": items,
            },
        )

    def send_list(
        self, kind: str, namespace: str | None, selector: str, field_selector: str = ""
    ) -> None:
        if kind == "pods":
            items = [
                pod_object(p)
                for p in self.cluster.pods
                if (namespace is None or p.namespace == namespace)
                and selector_matches(selector, p.labels)
                and field_selector_matches(
                    field_selector,
                    {
                        "status.phase": p.phase,
                        "metadata.name": p.name,
                        "metadata.namespace": p.namespace,
                        "spec.nodeName": p.node_name,
                        "spec.schedulerName": p.scheduler_name,
                    },
                )
            ]
        else:
            items = [
                service_object(s)
                for s in self.cluster.services
                if (namespace is None or s.namespace == namespace)
                and selector_matches(selector, s.labels)
            ]
        list_kind = "PodList" if kind == "pods" else "ServiceList"
        self.send_json(
            200,
            {
                "apiVersion": "v1",
                "kind": list_kind,
                "metadata": {"resourceVersion": "4711"},
                "items": items,
            },
        )

    def proxy(self, kind: str, namespace: str, name_port: str, path: str) -> None:
        name, _, port = name_port.rpartition(":") if ":" in name_port else (name_port, "", "")
        if self.forbidden("get", f"{kind}/proxy", namespace, name):
            return
        answer: ProxyAnswer | None
        dial_port = port
        if kind == "services":
            service = self.cluster.service(namespace, name)
            if service is None:
                self.send_json(
                    404,
                    status_object(
                        404, "NotFound", f'services "{name}" not found', name=name, kind="services"
                    ),
                )
                return
            if not service.has_endpoints:
                self.send_json(
                    503,
                    status_object(
                        503,
                        "ServiceUnavailable",
                        f'no endpoints available for service "{name_port}"',
                    ),
                )
                return
            key = (namespace, name, port)
            if key in self.cluster.service_proxy:
                answer = self.cluster.service_proxy[key]
            else:
                backend = self.cluster.endpoint(service, port)
                if backend is None:
                    self.send_json(
                        503,
                        status_object(
                            503,
                            "ServiceUnavailable",
                            f'no endpoints available for service "{name_port}"',
                        ),
                    )
                    return
                pod, number = backend
                self.cluster.service_backends.append((namespace, pod.name, number))
                answer = self.cluster.pod_proxy.get((namespace, pod.name, number))
                dial_port = str(number)
        else:
            pod = self.cluster.pod(namespace, name)
            if pod is None:
                self.send_json(
                    404,
                    status_object(
                        404, "NotFound", f'pods "{name}" not found', name=name, kind="pods"
                    ),
                )
                return
            answer = self.cluster.pod_proxy.get((namespace, name, int(port or 80)))
        if answer is None or path != "metrics":
            # What the API server relays when nothing listens on the target port.
            self.send_json(
                503,
                status_object(
                    503,
                    "ServiceUnavailable",
                    f"error trying to reach {kind[:-1]}: dial tcp 10.244.1.17:{dial_port}: "
                    "connect: connection refused",
                ),
            )
            return
        if answer.delay_seconds:
            self.server.stopping.wait(answer.delay_seconds)
        answer.answered.set()
        body = answer.body
        gzipped = "gzip" in self.headers.get("Accept-Encoding", "") and answer.status == 200
        if gzipped:
            body = gzip.compress(body)
        self.send_response(answer.status)
        self.send_header("Content-Type", answer.content_type)
        if gzipped:
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    # --- exec over a websocket ------------------------------------------------------------

    def exec(self, namespace: str, pod_name: str, query: dict[str, list[str]]) -> None:
        # RBAC checks "create" on pods/exec for websocket upgrades too (Kubernetes >= 1.30).
        if self.forbidden("create", "pods/exec", namespace, pod_name):
            return
        pod = self.cluster.pod(namespace, pod_name)
        if pod is None:
            self.send_json(
                404,
                status_object(
                    404, "NotFound", f'pods "{pod_name}" not found', name=pod_name, kind="pods"
                ),
            )
            return
        names = [c.name for c in pod.containers]
        container_name = query.get("container", [""])[0]
        if not container_name:
            if len(names) > 1:
                self.send_json(
                    400,
                    status_object(
                        400,
                        "BadRequest",
                        f"a container name must be specified for pod {pod_name}, "
                        f"choose one of: [{' '.join(names)}]",
                    ),
                )
                return
            container_name = names[0]
        container = next((c for c in pod.containers if c.name == container_name), None)
        if container is None:
            self.send_json(
                400,
                status_object(
                    400, "BadRequest", f"container {container_name} is not valid for pod {pod_name}"
                ),
            )
            return
        offered = [p.strip() for p in self.headers.get("Sec-WebSocket-Protocol", "").split(",")]
        protocol = next((p for p in self.cluster.ws_protocols if p in offered), None)
        key = self.headers.get("Sec-WebSocket-Key")
        if (
            protocol is None
            or key is None
            or self.headers.get("Upgrade", "").lower() != "websocket"
        ):
            self.send_json(
                400,
                status_object(
                    400,
                    "BadRequest",
                    "exec needs a websocket upgrade with a channel.k8s.io subprotocol",
                ),
            )
            return
        command = query.get("command", [])
        self.cluster.execs.append(RecordedExec(namespace, pod_name, container_name, command))
        outcome = self.run(container, command)
        accept = base64.b64encode(hashlib.sha1((key + WS_GUID).encode()).digest()).decode()
        self.send_response(101, "Switching Protocols")
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", accept)
        self.send_header("Sec-WebSocket-Protocol", protocol)
        self.end_headers()
        self.wfile.flush()
        if outcome.delay_seconds:
            self.server.stopping.wait(outcome.delay_seconds)
        outcome.answered.set()
        if outcome.stdout:
            self.ws_send(bytes([1]) + outcome.stdout.encode())
        if outcome.stderr:
            self.ws_send(bytes([2]) + outcome.stderr.encode())
        self.ws_send(
            bytes([3]) + json.dumps(self.exec_status(outcome, command, container_name)).encode()
        )
        self.ws_send(struct.pack("!H", 1000), opcode=0x8)
        self.wfile.flush()
        self.close_connection = True

    def run(self, container: FakeContainer, command: list[str]) -> ExecOutcome:
        if container.exec is None:
            return ExecOutcome(missing_binary=True)
        if isinstance(container.exec, ExecOutcome):
            return container.exec
        return container.exec(command)

    @staticmethod
    def exec_status(outcome: ExecOutcome, command: list[str], container: str) -> dict[str, Any]:
        if outcome.missing_binary:
            binary = command[0] if command else ""
            cause = (
                "error executing command in container: failed to exec in container: failed to "
                f'start exec "4f1e": OCI runtime exec failed: exec failed: unable to start '
                f'container process: exec: "{binary}": executable file not found in $PATH: unknown'
            )
            return {
                "metadata": {},
                "status": "Failure",
                "message": f"Internal error occurred: {cause}",
                "reason": "InternalError",
                "details": {"causes": [{"message": cause}]},
                "code": 500,
            }
        if outcome.exit_code:
            return {
                "metadata": {},
                "status": "Failure",
                "message": (
                    "command terminated with non-zero exit code: error executing command "
                    f"{command}, exit code {outcome.exit_code}"
                ),
                "reason": "NonZeroExitCode",
                "details": {"causes": [{"reason": "ExitCode", "message": str(outcome.exit_code)}]},
            }
        return {"metadata": {}, "status": "Success"}

    def ws_send(self, payload: bytes, opcode: int = 0x2) -> None:
        header = bytes([0x80 | opcode])
        length = len(payload)
        if length < 126:
            header += bytes([length])
        elif length < 65536:
            header += bytes([126]) + struct.pack("!H", length)
        else:
            header += bytes([127]) + struct.pack("!Q", length)
        self.wfile.write(header + payload)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, cluster: FakeCluster, context: ssl.SSLContext) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.cluster = cluster
        self.context = context
        self.requests: list[RecordedRequest] = []
        self.stopping = threading.Event()
        self._lock = threading.Lock()

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients that reject our certificate (TLS-failure tests) or hang up are expected.
        error = sys.exc_info()[1]
        if isinstance(error, ssl.SSLError | ConnectionError | TimeoutError):
            return
        super().handle_error(request, client_address)

    def record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def get_request(self) -> tuple[socket.socket, Any]:
        sock, address = super().get_request()
        # The TLS handshake runs in the handler thread (first read), so a stalled client
        # cannot block the accept loop.
        return self.context.wrap_socket(
            sock, server_side=True, do_handshake_on_connect=False
        ), address


class FakeApiServer:
    """Start/stop the server; a context manager. ``url``, ``ca_pem`` and ``write_kubeconfig``."""

    def __init__(
        self, cluster: FakeCluster | None = None, certificate: ServerCertificate | None = None
    ) -> None:
        self.cluster = cluster if cluster is not None else hami_cluster()
        self.certificate = certificate or session_certificate()
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        with tempfile.TemporaryDirectory() as tmp:
            cert = Path(tmp) / "server.pem"
            cert.write_bytes(self.certificate.cert_pem + self.certificate.key_pem)
            context.load_cert_chain(cert)
        self._server = _Server(self.cluster, context)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self._server.server_address[1]}"

    @property
    def requests(self) -> list[RecordedRequest]:
        return self._server.requests

    def start(self) -> FakeApiServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeApiServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def write_kubeconfig(
        self,
        path: Path,
        *,
        context: str = "test",
        contexts: tuple[str, ...] | None = None,
        token: str | None = None,
        ca_pem: bytes | None = None,
        namespace: str | None = None,
    ) -> Path:
        """A kubeconfig (token auth, CA data inline) the official client loads as is."""
        return write_kubeconfig(
            path,
            server=self.url,
            ca_pem=ca_pem if ca_pem is not None else self.certificate.ca_pem,
            token=token if token is not None else self.cluster.token,
            contexts=contexts or (context,),
            namespace=namespace,
        )


def write_kubeconfig(
    path: Path,
    *,
    server: str,
    ca_pem: bytes,
    token: str,
    contexts: tuple[str, ...] = ("test",),
    namespace: str | None = None,
    cluster_name: str = "fake-cluster",
    user_name: str = "reader",
) -> Path:
    """Write a kubeconfig with one cluster, one token user and the given contexts."""
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": cluster_name,
                "cluster": {
                    "server": server,
                    "certificate-authority-data": base64.b64encode(ca_pem).decode(),
                },
            }
        ],
        "users": [{"name": user_name, "user": {"token": token}}],
        "contexts": [
            {
                "name": name,
                "context": {"cluster": cluster_name, "user": user_name}
                | ({"namespace": namespace} if namespace else {}),
            }
            for name in contexts
        ],
        "current-context": contexts[0],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path


@contextmanager
def running(cluster: FakeCluster | None = None) -> Iterator[FakeApiServer]:
    with FakeApiServer(cluster) as api:
        yield api


class SilentServer:
    """Accepts TCP connections and never answers: every client must rely on its timeouts."""

    def __init__(self) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self._held: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._sock.getsockname()[:2]
        return f"https://{host}:{port}"

    def _accept(self) -> None:
        self._sock.settimeout(0.05)
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self._held.append(conn)

    def __enter__(self) -> SilentServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        for conn in self._held:
            conn.close()
        self._sock.close()


def wait_until(predicate: Callable[[], bool], timeout_seconds: float = 2.0) -> bool:
    deadline = time.monotonic() + timeout_seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()
