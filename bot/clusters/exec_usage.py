"""Real GPU usage: exec ``nvidia-smi`` in the pods that hold HAMi allocations (opt-in per cluster).

For each pod: read it (404: "pod gone", the scheduler still counts a deleted pod), then try its
containers, first non-sidecar first, with the query form of nvidia-smi; where the binary exists
but the query form fails, prints nothing or prints something unreadable, plain ``nvidia-smi`` is
tried in the same container before moving on. Only nvidia-smi's own "No devices were found" means
no GPU; output that cannot be read is reported as such, with its first unreadable line. Output is
parsed by ``core.realusage``.

Exec goes over a websocket (``kubernetes.stream.stream`` with ``_preload_content=False``). The
final status arrives on channel 3 as a ``Status`` object: ``Success``; ``NonZeroExitCode`` with
the code in ``details.causes[0].message``; or ``InternalError`` when the binary does not exist,
whose cause message is text, so the client's ``WSClient.returncode`` raises ``ValueError`` on it.
We read and interpret channel 3 ourselves instead.

websocket-client has no connect timeout here (the client builds the socket without one), so
execs run in daemon threads and the caller stops waiting at the budget; pods not reached are
reported as skipped.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from kubernetes import client as k8s
from kubernetes.stream import stream

from bot.clusters.deadline import Deadline
from bot.clusters.kube_errors import ApiFailure, Call, Target, classify, rbac_rule
from core.model import ExecFailure, GpuReading, PodExecResult
from core.realusage import QUERY_COMMAND, TABLE_COMMAND, parse_nvidia_smi

EXEC_CONCURRENCY = 8
DEFAULT_BUDGET_SECONDS = 30.0
PER_EXEC_SECONDS = 10.0

# Containers injected by meshes and agents; they never hold the GPU (checked last).
SIDECARS = frozenset(
    {
        "istio-proxy",
        "istio-init",
        "linkerd-proxy",
        "linkerd-init",
        "envoy",
        "envoy-sidecar",
        "consul-dataplane",
        "vault-agent",
        "cloud-sql-proxy",
        "cloudsql-proxy",
        "datadog-agent",
        "fluent-bit",
        "fluentd",
        "oauth2-proxy",
        "kube-rbac-proxy",
    }
)
_MISSING_BINARY_MARKERS = ("executable file not found", "no such file or directory", "not found")
_NO_DEVICES_MARKER = "no devices were found"


@dataclass(frozen=True, slots=True)
class _Exec:
    """What one exec returned."""

    stdout: str
    stderr: str
    exit_code: int | None  # None: could not run (see ``problem``)
    problem: str = ""
    missing_binary: bool = False


def order_containers(names: Sequence[str]) -> list[str]:
    """Non-sidecar containers in pod order, then sidecars."""
    return [n for n in names if n not in SIDECARS] + [n for n in names if n in SIDECARS]


def _run_exec(
    core: k8s.CoreV1Api,
    target: Target,
    namespace: str,
    pod: str,
    container: str,
    command: Sequence[str],
    timeout_seconds: float,
) -> _Exec:
    call = Call("create", "pods/exec", namespace, f"running nvidia-smi in {namespace}/{pod}")
    # ``stream`` swaps ``call_api`` on the ApiClient it is given for the duration of the call,
    # so a client shared between threads would send other threads' requests over websockets.
    # Each exec gets its own ApiClient (same configuration).
    exec_api = k8s.CoreV1Api(k8s.ApiClient(core.api_client.configuration))
    try:
        ws = stream(
            exec_api.connect_get_namespaced_pod_exec,
            pod,
            namespace,
            command=list(command),
            container=container,
            stderr=True,
            stdin=False,
            stdout=True,
            tty=False,
            _preload_content=False,
        )
    except Exception as exc:  # classified: 403/404/400 handshakes, TLS, unreachable
        exec_api.api_client.rest_client.close()
        raise classify(exc, target, call) from exc
    try:
        ws.run_forever(timeout=timeout_seconds)
        if ws.is_open():
            return _Exec("", "", None, f"no result within {timeout_seconds:g} s")
        stdout = ws.read_stdout() or ""
        stderr = ws.read_stderr() or ""
        status_text = ws.read_channel(3) or ""
    finally:
        ws.close()
        exec_api.api_client.rest_client.close()
    return _interpret_status(stdout, stderr, status_text)


def _interpret_status(stdout: str, stderr: str, status_text: str) -> _Exec:
    try:
        status = json.loads(status_text) if status_text else {}
    except ValueError:
        return _Exec(stdout, stderr, None, f"unreadable exec status {status_text[:80]!r}")
    if not isinstance(status, dict) or not status:
        return _Exec(stdout, stderr, None, "the exec stream ended without a status")
    if status.get("status") == "Success":
        return _Exec(stdout, stderr, 0)
    message = str(status.get("message", ""))
    causes = (status.get("details") or {}).get("causes") or [{}]
    cause = str(causes[0].get("message", ""))
    if status.get("reason") == "NonZeroExitCode":
        try:
            return _Exec(stdout, stderr, int(cause))
        except ValueError:
            return _Exec(stdout, stderr, None, message or "non-zero exit, code unreadable")
    text = f"{message} {cause}".lower()
    missing = any(marker in text for marker in _MISSING_BINARY_MARKERS)
    return _Exec(stdout, stderr, None, message or cause or "exec failed", missing_binary=missing)


@dataclass
class _Attempt:
    container: str
    outcome: str  # "unavailable", "no-devices", "error"
    detail: str


@dataclass(frozen=True, slots=True)
class _Read:
    """What one container's nvidia-smi gave: readings and what was set aside on the way."""

    readings: tuple[GpuReading, ...]
    detail: str


def _exec_pod(
    core: k8s.CoreV1Api, target: Target, namespace: str, pod: str, deadline: Deadline
) -> PodExecResult:
    read = Call("get", "pods", namespace, f"reading pod {namespace}/{pod}")
    try:
        spec = core.read_namespaced_pod(
            pod, namespace, _request_timeout=deadline.request_timeout(read.doing)
        )
    except Exception as exc:
        failure = classify(exc, target, read)
        if failure.kind == "not-found":
            return PodExecResult(
                namespace,
                pod,
                None,
                (),
                "pod gone",
                "the pod no longer exists; the scheduler's allocation for it is stale",
            )
        return PodExecResult(namespace, pod, None, (), "exec failed", failure.short)
    containers = spec.spec.containers if spec.spec is not None else []
    names = order_containers([c.name for c in containers])
    attempts: list[_Attempt] = []
    for container in names:
        try:
            outcome = _try_container(core, target, namespace, pod, container, deadline)
        except ApiFailure as failure:
            stop = _stopping_failure(failure, namespace, pod, container)
            if stop is not None:
                return stop
            attempts.append(_Attempt(container, "error", failure.short))
            continue
        if isinstance(outcome, _Read):
            return PodExecResult(namespace, pod, container, outcome.readings, detail=outcome.detail)
        attempts.append(outcome)
        if deadline.expired():
            break
    return _failed(namespace, pod, attempts)


def _stopping_failure(
    failure: ApiFailure, namespace: str, pod: str, container: str
) -> PodExecResult | None:
    """The pod's result when an API failure ends its attempts; None to try the next container."""
    if failure.kind == "forbidden":
        call = Call("create", "pods/exec", namespace, "running nvidia-smi")
        return PodExecResult(
            namespace,
            pod,
            container,
            (),
            "exec blocked by policy",
            f'RBAC refused `create pods/exec` in namespace "{namespace}"; nvidia-smi '
            f"needs {rbac_rule(call)}",
        )
    if failure.kind == "not-found":
        return PodExecResult(
            namespace,
            pod,
            container,
            (),
            "pod gone",
            "the pod disappeared during the exec; its allocation is stale",
        )
    if failure.fatal:
        return PodExecResult(namespace, pod, container, (), "exec failed", failure.short)
    return None


def _try_container(
    core: k8s.CoreV1Api,
    target: Target,
    namespace: str,
    pod: str,
    container: str,
    deadline: Deadline,
) -> _Read | _Attempt:
    """The query form, then the plain table: the first one read wins. Only nvidia-smi's own
    "No devices were found" stops early; unreadable or empty output tries the other form."""
    problems: list[str] = []
    for command in (QUERY_COMMAND, TABLE_COMMAND):
        timeout = min(PER_EXEC_SECONDS, max(deadline.remaining(), 0.1))
        result = _run_exec(core, target, namespace, pod, container, command, timeout)
        # Exit code 127 is what runtimes that start the process through a shell report instead
        # of an InternalError status.
        if result.missing_binary or result.exit_code == 127:
            return _Attempt(container, "unavailable", "nvidia-smi not found in the image")
        output = result.stdout if result.stdout.strip() else result.stderr
        parsed = parse_nvidia_smi(output)
        form = f"`{' '.join(command[:2])}`"
        if result.exit_code == 0 and parsed.readings:
            earlier = [f"read with {form} after {'; '.join(problems)}"] if problems else []
            return _Read(parsed.readings, "; ".join([*earlier, *parsed.notes]))
        combined = f"{result.stdout}\n{result.stderr}".lower()
        if parsed.cause == "no-devices" or _NO_DEVICES_MARKER in combined:
            return _Attempt(container, "no-devices", "nvidia-smi sees no GPU here")
        if result.exit_code is None and result.problem:
            problems.append(result.problem)
            break
        why = parsed.problem or (result.stderr.strip().splitlines() or ["no output"])[0]
        problems.append(f"{form}: exit code {result.exit_code}, {why}")
        if deadline.expired():
            break
    return _Attempt(container, "error", "; ".join(problems))


def _failed(namespace: str, pod: str, attempts: list[_Attempt]) -> PodExecResult:
    if not attempts:
        return PodExecResult(namespace, pod, None, (), "exec failed", "the pod has no containers")
    detail = "; ".join(f"{a.container}: {a.detail}" for a in attempts)
    outcomes = {a.outcome for a in attempts}
    failure: ExecFailure
    if outcomes == {"unavailable"}:
        failure = "nvidia-smi unavailable"
    elif "no-devices" in outcomes:
        failure = "no devices visible"
    elif "unavailable" in outcomes and "error" not in outcomes:
        failure = "nvidia-smi unavailable"
    else:
        failure = "exec failed"
    first = next(
        (a.container for a in attempts if a.outcome != "unavailable"), attempts[0].container
    )
    return PodExecResult(namespace, pod, first, (), failure, detail)


T = TypeVar("T")


def run_within_budget(
    tasks: Sequence[Callable[[], T]], concurrency: int, deadline: Deadline
) -> list[T | None]:
    """Run ``tasks`` on at most ``concurrency`` daemon threads; None for those unfinished at the
    deadline (their threads are abandoned, which daemon threads allow)."""
    results: list[T | None] = [None] * len(tasks)
    pending: queue.Queue[int] = queue.Queue()
    for index in range(len(tasks)):
        pending.put(index)
    done = threading.Semaphore(0)

    def worker() -> None:
        while True:
            try:
                index = pending.get_nowait()
            except queue.Empty:
                return
            if deadline.expired():
                done.release()
                continue
            try:
                results[index] = tasks[index]()
            finally:
                done.release()

    for n in range(min(concurrency, len(tasks))):
        threading.Thread(target=worker, name=f"hami-exec-{n}", daemon=True).start()
    for _ in tasks:
        if not done.acquire(timeout=max(deadline.remaining(), 0)):
            break
    return list(results)


def collect_real_usage(
    api: k8s.ApiClient,
    target: Target,
    pods: Sequence[tuple[str, str]],
    *,
    budget_seconds: float = DEFAULT_BUDGET_SECONDS,
    concurrency: int = EXEC_CONCURRENCY,
) -> tuple[PodExecResult, ...]:
    """nvidia-smi readings for each (namespace, pod); pods not reached in time are reported."""
    core = k8s.CoreV1Api(api)
    deadline = Deadline(budget_seconds)

    def task_for(namespace: str, pod: str) -> Callable[[], PodExecResult]:
        def task() -> PodExecResult:
            try:
                return _exec_pod(core, target, namespace, pod, deadline)
            except Exception as exc:  # one pod's surprise must not lose the others' results
                return PodExecResult(
                    namespace, pod, None, (), "exec failed", f"{type(exc).__name__}: {exc}"
                )

        return task

    results = run_within_budget([task_for(ns, p) for ns, p in pods], concurrency, deadline)
    collected: list[PodExecResult] = []
    for (namespace, pod), result in zip(pods, results, strict=True):
        if result is None:
            result = PodExecResult(
                namespace,
                pod,
                None,
                (),
                "exec failed",
                f"skipped: the {budget_seconds:g} s time budget for nvidia-smi was used up",
            )
        collected.append(result)
    return tuple(collected)
