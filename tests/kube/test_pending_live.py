"""``pending`` and ``why NAMESPACE/POD`` against the local API server: pending pods and their
events as the API serves them, the check against the scheduler's metrics served beside them
(figures computed here from that metrics text), and one message for each cluster problem."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bot.cli.main import main
from tests.kube.fake_apiserver import FakeCluster, FakeContainer, FakeEvent, FakePod, hami_cluster

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "scheduler-small.prom"
MIB = 1024 * 1024


def _pending(name: str, limits: dict[str, str], since: str, **kw: object) -> FakePod:
    return FakePod(
        namespace="ml",
        name=name,
        containers=[FakeContainer("main", limits=limits)],
        node_name="",
        phase="Pending",
        scheduler_name="hami-scheduler",
        unschedulable_since=since,
        **kw,  # type: ignore[arg-type]
    )


@pytest.fixture
def cluster() -> FakeCluster:
    found = hami_cluster()
    found.pods += [
        _pending(
            "trainer-0",
            {"nvidia.com/gpu": "2", "nvidia.com/gpumem": "30000"},
            "2026-08-21T06:00:00Z",
        ),
        _pending("infer-1", {"nvidia.com/gpu": "1"}, "2026-08-21T06:30:00Z"),
        _pending("cpu-only", {"cpu": "2"}, "2026-08-21T06:10:00Z"),
    ]
    found.events += [
        FakeEvent(
            "ml", "trainer-0", "FailedScheduling", "0/2 nodes are available: 2 NodeUnfitPod."
        ),
        FakeEvent(
            "ml",
            "trainer-0",
            "FilteringFailed",
            "2 nodes CardInsufficientMemory(gpu-node-1,gpu-node-2)",
            count=7,
            first="2026-08-21T06:00:05Z",
            last="2026-08-21T06:40:00Z",
        ),
        FakeEvent(
            "ml", "infer-1", "FilteringFailed", "1 nodes CardTimeSlicingExhausted(gpu-node-1)"
        ),
    ]
    return found


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _free_mib_per_gpu() -> list[float]:
    """Free memory of each GPU of the fixture, read from its text here (limit - allocated)."""
    text = FIXTURE.read_text()

    def per_uuid(family: str) -> dict[str, float]:
        pattern = rf'^{family}\{{[^}}]*device_uuid="([^"]+)"[^}}]*\}} (\S+)$'
        return {u: float(v) for u, v in re.findall(pattern, text, re.MULTILINE)}

    limits = per_uuid("hami_gpu_memory_limit_bytes")
    used = per_uuid("hami_gpu_memory_allocated_bytes")
    return [(limits[u] - used.get(u, 0.0)) / MIB for u in limits]


def test_pending_lists_the_pods_asking_for_hami_by_reason(
    kubeconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["pending", "--kubeconfig", str(kubeconfig), "--context", "test", "--format", "json"]
    code, out, err = _run(argv, capsys)
    assert code == 0, err
    document = json.loads(out)
    assert [(p["pod"], p["reason"]) for p in document["pods"]] == [
        ("trainer-0", "CardInsufficientMemory"),
        ("infer-1", "CardTimeSlicingExhausted"),
    ]
    assert document["pods"][0]["waited_seconds"] > document["pods"][1]["waited_seconds"]
    code, out, err = _run(argv[:-2], capsys)
    assert code == 0, err
    assert out.startswith('2 pods pending on HAMi\'s resources in context "test", by reason:\n')
    assert "ml/trainer-0" in out and "cpu-only" not in out


def test_why_checks_the_reason_against_the_metrics_served_beside_it(
    kubeconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["why", "ml/trainer-0", "--kubeconfig", str(kubeconfig), "--context", "test"]
    code, out, err = _run([*argv, "--format", "json"], capsys)
    assert code == 0, err
    document = json.loads(out)
    assert [r["code"] for r in document["reasons"]] == ["CardInsufficientMemory"]
    (filtering,) = [e for e in document["events"] if e["reason"] == "FilteringFailed"]
    assert " (x7 over " in filtering["age"]
    (finding,) = document["findings"]
    free = _free_mib_per_gpu()
    largest = max(free)
    taking = sum(1 for value in free if value >= 30_000)
    assert finding["lines"][0] == (
        f"Asked {30_000 / 1024:,.1f} GiB per GPU; the most free on one GPU now is "
        f"{largest / 1024:,.1f} GiB ({taking} of {len(free)} allowed GPUs would take it)."
    )


def test_why_names_a_missing_pod_and_refused_events(
    kubeconfig: Path, cluster: FakeCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(
        ["why", "ml/nope", "--kubeconfig", str(kubeconfig), "--context", "test"], capsys
    )
    assert code == 2
    assert 'No pod "nope" in namespace "ml"' in err
    cluster.forbid("list", "events")
    code, _, err = _run(["pending", "--kubeconfig", str(kubeconfig), "--context", "test"], capsys)
    assert code == 2
    assert "events" in err and "Traceback" not in err
