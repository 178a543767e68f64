"""Every HAMi reason code through the local Kubernetes API server: one pending pod per code,
its ``FilteringFailed`` event as HAMi's extender records it, and ``why`` naming the reason in
plain words, with the check against the scheduler's metrics served beside it. The expected
figures are computed here from the metrics text, not by the code under test."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.cli.main import main
from tests.conftest import read_fixture
from tests.kube.fake_apiserver import FakeCluster, FakeContainer, FakeEvent, FakePod, hami_cluster

MIB = 1024 * 1024


@dataclass(frozen=True)
class Gpu:
    node: str
    model: str
    uuid: str
    free_mib: float
    free_cores: float
    shared: int


def fixture_gpus() -> list[Gpu]:
    text = read_fixture("scheduler-small.prom")

    def family(name: str) -> dict[str, tuple[str, str, float]]:
        pattern = (
            rf'^{name}\{{[^}}]*device_type="([^"]+)",device_uuid="([^"]+)",'
            rf'node="([^"]+)"[^}}]*\}} (\S+)$'
        )
        return {
            uuid: (model, node, float(value))
            for model, uuid, node, value in re.findall(pattern, text, re.MULTILINE)
        }

    limit = family("hami_gpu_memory_limit_bytes")
    used = family("hami_gpu_memory_allocated_bytes")
    cores = family("hami_gpu_core_allocated_ratio")
    shared = family("hami_gpu_shared_count")
    return [
        Gpu(
            node,
            model,
            uuid,
            (value - used[uuid][2]) / MIB,
            100.0 - cores[uuid][2],
            int(shared[uuid][2]),
        )
        for uuid, (model, node, value) in limit.items()
    ]


# code -> (the pod's limits, its annotations, words of HAMi's meaning the answer must hold)
CASES: dict[str, tuple[dict[str, str], dict[str, str], str]] = {
    "NodeInsufficientDevice": ({"nvidia.com/gpu": "4"}, {}, "fewer GPUs of the type"),
    "CardNotHealth": ({"nvidia.com/gpu": "1"}, {}, "unhealthy"),
    "CardTypeMismatch": (
        {"nvidia.com/gpu": "1"},
        {"nvidia.com/use-gputype": "H100"},
        "model is not one the pod allows",
    ),
    "CardUuidMismatch": (
        {"nvidia.com/gpu": "1"},
        {"nvidia.com/use-gpuuuid": "GPU-00000000-dead-beef-0000-000000000000"},
        "UUID",
    ),
    "NumaNotFit": ({"nvidia.com/gpu": "2"}, {}, "NUMA"),
    "ModeNotFit": ({"nvidia.com/gpu": "1"}, {}, "mode"),
    "CardNotFoundCustomFilterRule": ({"nvidia.com/gpu": "1"}, {}, "filter"),
    "CardMigTopologyInfeasible": ({"nvidia.com/gpu": "1"}, {}, "MIG"),
    "CardInsufficientMemory": (
        {"nvidia.com/gpu": "1", "nvidia.com/gpumem": "30000"},
        {},
        "not enough free GPU memory",
    ),
    "CardInsufficientCore": (
        {"nvidia.com/gpu": "1", "nvidia.com/gpucores": "60"},
        {},
        "not enough free GPU cores",
    ),
    "CardTimeSlicingExhausted": ({"nvidia.com/gpu": "1"}, {}, "as many tasks as it may share"),
    "CardComputeUnitsExhausted": (
        {"nvidia.com/gpu": "1"},
        {},
        "all of the GPU's cores are allocated",
    ),
    "ExclusiveDeviceAllocateConflict": ({"nvidia.com/gpu": "1"}, {}, "exclusive"),
    "ResourceQuotaNotFit": (
        {"nvidia.com/gpu": "1", "nvidia.com/gpumem": "8192", "nvidia.com/gpucores": "50"},
        {},
        "quota",
    ),
    "AllocatedCardsInsufficientRequest": (
        {"nvidia.com/gpu": "4"},
        {},
        "fewer than the pod asks for",
    ),
}


def _pod_name(code: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "-", code).lower()


@pytest.fixture
def cluster() -> FakeCluster:
    found = hami_cluster()
    for code, (limits, marks, _) in CASES.items():
        name = _pod_name(code)
        found.pods.append(
            FakePod(
                namespace="team-a",
                name=name,
                containers=[FakeContainer("main", limits=limits)],
                node_name="",
                phase="Pending",
                scheduler_name="hami-scheduler",
                unschedulable_since="2026-08-21T06:00:00Z",
                annotations=marks,
            )
        )
        found.events.append(
            FakeEvent("team-a", name, "FilteringFailed", f"2 nodes {code}(gpu-node-1,gpu-node-2)")
        )
    return found


def _why(kubeconfig: Path, code: str, capsys: pytest.CaptureFixture[str]) -> tuple[str, dict]:  # type: ignore[type-arg]
    argv = ["why", f"team-a/{_pod_name(code)}", "--kubeconfig", str(kubeconfig)]
    argv += ["--context", "test"]
    assert main(argv) == 0, capsys.readouterr().err
    text = capsys.readouterr().out
    assert main([*argv, "--format", "json"]) == 0
    return text, json.loads(capsys.readouterr().out)


def _expected_lines(code: str) -> list[str]:
    """The check's lines for ``code``, from the fixture's figures read above."""
    gpus = fixture_gpus()
    if code == "CardInsufficientMemory":
        taking = sum(1 for g in gpus if g.free_mib >= 30_000 and g.shared < 10)
        most = max(g.free_mib for g in gpus)
        return [
            f"Asked {30_000 / 1024:,.1f} GiB per GPU; the most free on one GPU now is "
            f"{most / 1024:,.1f} GiB ({taking} of {len(gpus)} allowed GPUs would take it)."
        ]
    if code == "CardInsufficientCore":
        taking = sum(1 for g in gpus if g.free_cores >= 60 and g.free_mib > 0 and g.shared < 10)
        most = max(g.free_cores for g in gpus)
        return [
            f"Asked 60 cores per GPU; the most free on one GPU now is {most:,.0f} "
            f"({taking} of {len(gpus)} allowed GPUs would take it)."
        ]
    if code == "CardTimeSlicingExhausted":
        full = sum(1 for g in gpus if g.shared >= 10)
        return [
            f"{full} of {len(gpus)} allowed GPUs are at 10 tasks (HAMi's default "
            f"deviceSplitCount 10, not in the metrics); {len(gpus) - full} have a slot."
        ]
    if code in ("NodeInsufficientDevice", "AllocatedCardsInsufficientRequest"):
        whole: dict[tuple[str, str], int] = {}
        for g in gpus:
            if g.free_cores >= 100 and g.shared == 0:
                whole[(g.model, g.node)] = whole.get((g.model, g.node), 0) + 1
        best: dict[str, tuple[int, str]] = {}
        for (model, node), count in whole.items():
            if count > best.get(model, (0, ""))[0]:
                best[model] = (count, node)
        return ["Asked 4 GPUs on one node; most that would take one GPU of it now:"] + [
            f"  {model}: {count} on {node}"
            for model, (count, node) in sorted(best.items(), key=lambda kv: -kv[1][0])
        ]
    if code == "ResourceQuotaNotFit":
        text = read_fixture("scheduler-small.prom")
        used = {
            name: float(value)
            for name, value in re.findall(
                r'^hami_resource_quota_used\{[^}]*namespace="team-a",quota_name="([^"]+)"'
                r"[^}]*\} (\S+)$",
                text,
                re.MULTILINE,
            )
        }
        limit = {
            name: float(value)
            for name, value in re.findall(
                r'^hami_resource_quota_limit\{namespace="team-a",'
                r'quota_name="([^"]+)"[^}]*\} (\S+)$',
                text,
                re.MULTILINE,
            )
        }
        adds = {"nvidia.com/gpumem": 8192.0, "nvidia.com/gpucores": 50.0}
        return [
            f"{name}: {used[name]:,.0f} used of {limit[name]:,.0f}; this pod would bring it "
            f"to {used[name] + adds[name]:,.0f}"
            + (" (over)" if used[name] + adds[name] > limit[name] else "")
            for name in sorted(used, key=lambda n: n != "nvidia.com/gpucores")
        ]
    if code == "CardTypeMismatch":
        models = sorted({g.model for g in gpus})
        return [
            f"Models present: {', '.join(models)}.",
            "The pod asks for H100: no model present matches.",
        ]
    if code == "CardUuidMismatch":
        models = sorted({g.model for g in gpus})
        return [
            f"Models present: {', '.join(models)}.",
            "0 of the 1 GPU UUIDs the pod names are present.",
        ]
    return []


@pytest.mark.parametrize("code", list(CASES))
def test_why_names_each_reason_and_checks_it_against_the_metrics(
    kubeconfig: Path, cluster: FakeCluster, code: str, capsys: pytest.CaptureFixture[str]
) -> None:
    text, document = _why(kubeconfig, code, capsys)
    assert [reason["code"] for reason in document["reasons"]] == [code]
    assert f"- {code} on 2 nodes: gpu-node-1, gpu-node-2" in text
    assert CASES[code][2] in text
    expected = _expected_lines(code)
    findings = {finding["code"]: finding["lines"] for finding in document["findings"]}
    if expected:
        lines = findings[code]
        # The figures in full; lines of equal standing (one per model) in any order.
        shown = lines[: len(expected)]
        assert shown[0] == expected[0] and sorted(shown[1:]) == sorted(expected[1:]), lines
    else:
        assert code not in findings
    if code in ("CardInsufficientMemory", "CardInsufficientCore"):
        # The fixture has a GPU with room for it: HAMi's verdict is contradicted, with both.
        (finding,) = document["findings"]
        assert finding["contradicts"] and "The figures now show room" in finding["lines"][-1]
