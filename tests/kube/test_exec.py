"""nvidia-smi exec over the exec websocket (v4 and v5 channel protocols) against the local API
server: success, non-zero exit, missing binary, forbidden, missing pod and container, budget."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from kubernetes import client as k8s
from kubernetes.stream import stream

from bot.clusters.collect import collect_from_kubeconfig
from bot.clusters.exec_usage import _run_exec, collect_real_usage, order_containers
from bot.clusters.kube_client import api_client_for_context
from bot.clusters.kube_errors import ApiFailure
from core.model import GpuReading, PodExecResult
from core.realusage import QUERY_COMMAND
from tests.core.test_realusage import (
    CUT_TABLE,
    HAMI_CORE_TABLE,
    HAMI_PID,
    HAMI_QUERY_CSV,
    OLD_DRIVER_TABLE,
    UUID_A,
    UUID_B,
)
from tests.kube.fake_apiserver import (
    ExecBehaviour,
    ExecOutcome,
    FakeApiServer,
    FakeCluster,
    FakeContainer,
    FakePod,
    nvidia_smi,
)

UUID = "GPU-5f3c1a2e-7b4d-4e91-9c0a-1d2e3f405162"


def _usage(
    kubeconfig: Path, pods: list[tuple[str, str]], budget_seconds: float = 30.0
) -> dict[str, PodExecResult]:
    api, target = api_client_for_context(kubeconfig, "test")
    results = collect_real_usage(api, target, pods, budget_seconds=budget_seconds)
    return {r.pod: r for r in results}


def test_sidecars_go_last() -> None:
    assert order_containers(["istio-proxy", "app", "linkerd-proxy", "worker"]) == [
        "app",
        "worker",
        "istio-proxy",
        "linkerd-proxy",
    ]


def test_scrape_with_nvidia_smi_reads_every_allocated_pod(
    cluster: FakeCluster, kubeconfig: Path
) -> None:
    collected = collect_from_kubeconfig(kubeconfig, "test", nvidia_smi=True)
    assert collected.real_usage is not None
    by_pod = {r.pod: r for r in collected.real_usage}
    assert sorted(by_pod) == [
        "ddp-worker-0",
        "embed-svc-0",
        "llm-infer-0",
        "notebook-0",
        "train-full-0",
    ]
    infer = by_pod["llm-infer-0"]
    assert infer.failure is None
    assert infer.container == "server"  # istio-proxy is listed first but skipped
    assert infer.readings == (GpuReading(0, UUID, 41.0, 9000.0, 10240.0),)
    assert len(by_pod["ddp-worker-0"].readings) == 2
    assert by_pod["notebook-0"].failure == "nvidia-smi unavailable"
    assert by_pod["notebook-0"].detail == "notebook: nvidia-smi not found in the image"
    first = next(e for e in cluster.execs if e.pod == "llm-infer-0")
    assert first.container == "server"
    assert first.command == list(QUERY_COMMAND)


def test_v5_channel_protocol(cluster: FakeCluster, kubeconfig: Path) -> None:
    cluster.ws_protocols = ("v5.channel.k8s.io",)
    result = _usage(kubeconfig, [("team-a", "train-full-0")])["train-full-0"]
    assert result.failure is None
    assert result.readings[0].utilization_percent == 97.0


def test_non_zero_exit_falls_back_to_the_plain_table(
    cluster: FakeCluster, kubeconfig: Path
) -> None:
    def old_driver(command: list[str]) -> ExecOutcome:
        if len(command) > 1:
            return ExecOutcome(
                stdout='Field "utilization.gpu" is not a valid field to query.\n', exit_code=2
            )
        return ExecOutcome(stdout=OLD_DRIVER_TABLE)

    cluster.pods.append(FakePod("legacy", "old-0", [FakeContainer("app", exec=old_driver)]))
    result = _usage(kubeconfig, [("legacy", "old-0")])["old-0"]
    assert result.failure is None
    assert result.readings == (GpuReading(0, None, 12.0, 4096.0, 15109.0, "Tesla T4"),)
    assert [e.command for e in cluster.execs] == [list(QUERY_COMMAND), ["nvidia-smi"]]


def test_non_zero_exit_everywhere_is_reported_with_the_exit_codes(
    cluster: FakeCluster, kubeconfig: Path
) -> None:
    broken = ExecOutcome(stderr="Failed to initialize NVML: Unknown Error\n", exit_code=255)
    cluster.pods.append(FakePod("x", "broken-0", [FakeContainer("app", exec=broken)]))
    result = _usage(kubeconfig, [("x", "broken-0")])["broken-0"]
    assert result.failure == "exec failed"
    assert result.detail == (
        "app: `nvidia-smi --query-gpu=index,uuid,utilization.gpu,memory.used,memory.total`: "
        "exit code 255, Failed to initialize NVML: Unknown Error; `nvidia-smi`: exit code 255, "
        "Failed to initialize NVML: Unknown Error"
    )


def test_missing_binary_status_is_handled(cluster: FakeCluster, kubeconfig: Path) -> None:
    # The official client cannot read an exit code from this status (reason InternalError).
    api, _ = api_client_for_context(kubeconfig, "test")
    ws = stream(
        k8s.CoreV1Api(api).connect_get_namespaced_pod_exec,
        "notebook-0",
        "team-b",
        command=["nvidia-smi"],
        container="notebook",
        stderr=True,
        stdin=False,
        stdout=True,
        tty=False,
        _preload_content=False,
    )
    ws.run_forever(timeout=2)
    with pytest.raises(ValueError):
        _ = ws.returncode
    ws.close()
    # Ours reads the status itself.
    result = _usage(kubeconfig, [("team-b", "notebook-0")])["notebook-0"]
    assert result.failure == "nvidia-smi unavailable"


def test_binary_in_second_container_only(cluster: FakeCluster, kubeconfig: Path) -> None:
    cluster.pods.append(
        FakePod(
            "x",
            "split-0",
            [
                FakeContainer("loader", exec=None),
                FakeContainer("trainer", exec=nvidia_smi(f"0, {UUID}, 55, 100, 200\n")),
            ],
        )
    )
    result = _usage(kubeconfig, [("x", "split-0")])["split-0"]
    assert result.container == "trainer"
    assert result.readings[0].mem_used_mib == 100.0


def test_no_devices_visible(cluster: FakeCluster, kubeconfig: Path) -> None:
    no_gpu = ExecOutcome(stdout="No devices were found\n", exit_code=6)
    cluster.pods.append(
        FakePod("x", "cpu-0", [FakeContainer("app", exec=no_gpu), FakeContainer("helper")])
    )
    result = _usage(kubeconfig, [("x", "cpu-0")])["cpu-0"]
    assert result.failure == "no devices visible"
    assert result.detail == (
        "app: nvidia-smi sees no GPU here; helper: nvidia-smi not found in the image"
    )


def test_exec_forbidden(cluster: FakeCluster, kubeconfig: Path) -> None:
    cluster.forbid("create", "pods/exec")
    result = _usage(kubeconfig, [("team-a", "train-full-0")])["train-full-0"]
    assert result.failure == "exec blocked by policy"
    assert result.detail == (
        'RBAC refused `create pods/exec` in namespace "team-a"; nvidia-smi needs a Role in '
        'namespace "team-a" with the rule {apiGroups: [""], resources: ["pods/exec"], verbs: '
        '["create"]}, bound to the identity of this kubeconfig'
    )


def test_missing_pod_is_gone(kubeconfig: Path) -> None:
    result = _usage(kubeconfig, [("team-a", "deleted-0")])["deleted-0"]
    assert result.failure == "pod gone"
    assert result.detail == ("the pod no longer exists; the scheduler's allocation for it is stale")


def test_exec_into_missing_pod_and_container(api_server: FakeApiServer, kubeconfig: Path) -> None:
    api, target = api_client_for_context(kubeconfig, "test")
    core = k8s.CoreV1Api(api)
    with pytest.raises(ApiFailure) as gone:
        _run_exec(core, target, "team-a", "deleted-0", "main", QUERY_COMMAND, 2)
    assert gone.value.kind == "not-found"
    assert gone.value.short == 'not found (HTTP 404: pods "deleted-0" not found)'
    with pytest.raises(ApiFailure) as wrong:
        _run_exec(core, target, "team-a", "train-full-0", "sidecar", QUERY_COMMAND, 2)
    assert wrong.value.kind == "bad-request"
    assert wrong.value.short == (
        "refused (HTTP 400: container sidecar is not valid for pod train-full-0)"
    )


def test_pods_not_reached_within_the_budget_are_reported(
    cluster: FakeCluster, kubeconfig: Path
) -> None:
    # Its answer would come a minute later (or when the fake API server stops).
    slow = ExecOutcome(stdout=f"0, {UUID}, 1, 1, 2\n", delay_seconds=60)
    cluster.pods.append(FakePod("x", "slow-0", [FakeContainer("app", exec=slow)]))
    results = _usage(kubeconfig, [("x", "slow-0"), ("team-a", "train-full-0")], budget_seconds=0.8)
    # The budget cut the slow pod off: nobody waited for its answer.
    assert not slow.answered.is_set()
    assert results["train-full-0"].failure is None
    slow_result = results["slow-0"]
    assert slow_result.failure == "exec failed"
    assert slow_result.detail in (
        "skipped: the 0.8 s time budget for nvidia-smi was used up",
        "app: no result within 0.8 s",
    )


def test_concurrency_is_bounded(cluster: FakeCluster, kubeconfig: Path) -> None:
    import threading

    running = 0
    peak = 0
    lock = threading.Lock()

    def counted(command: list[str]) -> ExecOutcome:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        time.sleep(0.05)
        with lock:
            running -= 1
        return ExecOutcome(stdout=f"0, {UUID}, 1, 1, 2\n")

    pods = [FakePod("many", f"p-{i}", [FakeContainer("app", exec=counted)]) for i in range(20)]
    cluster.pods.extend(pods)
    results = _usage(kubeconfig, [("many", p.name) for p in pods])
    assert all(r.failure is None for r in results.values())
    assert 1 < peak <= 8


def _query_then_table(query: ExecOutcome, table: ExecOutcome) -> ExecBehaviour:
    def run(command: list[str]) -> ExecOutcome:
        return query if len(command) > 1 else table

    return run


def test_hami_core_lines_before_the_csv_rows_are_skipped(
    cluster: FakeCluster, kubeconfig: Path
) -> None:
    # HAMi-core writes to stderr; a container whose stderr joins stdout (a tty, a wrapper
    # script with 2>&1) puts its lines before and between the query form's rows.
    cluster.pods.append(
        FakePod("vgpu", "hami-0", [FakeContainer("app", exec=nvidia_smi(HAMI_QUERY_CSV))])
    )
    result = _usage(kubeconfig, [("vgpu", "hami-0")])["hami-0"]
    assert result.failure is None
    assert result.readings == (
        GpuReading(0, UUID_A, 35.0, 3120.0, 8192.0),
        GpuReading(1, UUID_B, 12.0, 1024.0, 8192.0),
    )
    assert result.detail == "skipped 4 HAMi-core log lines"
    assert [e.command for e in cluster.execs] == [list(QUERY_COMMAND)]


def test_hami_core_lines_on_stderr_leave_the_csv_alone(
    cluster: FakeCluster, kubeconfig: Path
) -> None:
    query = ExecOutcome(
        stdout=f"0, {UUID_A}, 35, 3120, 8192\n",
        stderr=f"[HAMI-core Msg({HAMI_PID}:libvgpu.c:836)]: Initializing.....\n",
    )
    cluster.pods.append(FakePod("vgpu", "hami-1", [FakeContainer("app", exec=query)]))
    result = _usage(kubeconfig, [("vgpu", "hami-1")])["hami-1"]
    assert result.readings == (GpuReading(0, UUID_A, 35.0, 3120.0, 8192.0),)
    assert result.detail == ""


def test_unreadable_csv_falls_back_to_the_table(cluster: FakeCluster, kubeconfig: Path) -> None:
    # A row broken over two lines: exit code 0, but not the query form's rows.
    broken = ExecOutcome(stdout=f"0, {UUID_A}\n, 35, 3120, 8192\n")
    behaviour = _query_then_table(broken, ExecOutcome(stdout=HAMI_CORE_TABLE))
    cluster.pods.append(FakePod("vgpu", "hami-2", [FakeContainer("app", exec=behaviour)]))
    result = _usage(kubeconfig, [("vgpu", "hami-2")])["hami-2"]
    assert result.failure is None
    assert result.readings == (GpuReading(0, None, 35.0, 3120.0, 8192.0, "NVIDIA A10"),)
    assert [e.command for e in cluster.execs] == [list(QUERY_COMMAND), ["nvidia-smi"]]
    assert result.detail == (
        "read with `nvidia-smi` after `nvidia-smi --query-gpu=index,uuid,utilization.gpu,"
        "memory.used,memory.total`: exit code 0, could not read nvidia-smi's output (first "
        f"unreadable line: '0, {UUID_A}'); skipped 7 HAMi-core log lines"
    )


def test_unreadable_output_is_not_reported_as_no_gpu(
    cluster: FakeCluster, kubeconfig: Path
) -> None:
    broken = ExecOutcome(stdout=f"0, {UUID_A}\n, 35, 3120, 8192\n")
    behaviour = _query_then_table(broken, ExecOutcome(stdout=CUT_TABLE))
    cluster.pods.append(FakePod("vgpu", "hami-3", [FakeContainer("app", exec=behaviour)]))
    result = _usage(kubeconfig, [("vgpu", "hami-3")])["hami-3"]
    assert result.failure == "exec failed"
    assert result.readings == ()
    assert result.detail == (
        "app: `nvidia-smi --query-gpu=index,uuid,utilization.gpu,memory.used,memory.total`: "
        "exit code 0, could not read nvidia-smi's output (first unreadable line: "
        f"'0, {UUID_A}'); `nvidia-smi`: exit code 0, could not read nvidia-smi's output (first "
        "unreadable line: '|   0  Tesla T4            Off  | 00000000:00:1E.0 Off |          "
        "          0 |', GPU 0's row is not followed by its memory row)"
    )


def test_empty_query_output_tries_the_table(cluster: FakeCluster, kubeconfig: Path) -> None:
    behaviour = _query_then_table(ExecOutcome(stdout=""), ExecOutcome(stdout=OLD_DRIVER_TABLE))
    cluster.pods.append(FakePod("x", "quiet-0", [FakeContainer("app", exec=behaviour)]))
    result = _usage(kubeconfig, [("x", "quiet-0")])["quiet-0"]
    assert result.readings == (GpuReading(0, None, 12.0, 4096.0, 15109.0, "Tesla T4"),)
    assert result.detail.startswith("read with `nvidia-smi` after ")
    assert result.detail.endswith("exit code 0, nvidia-smi printed nothing")
