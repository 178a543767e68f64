"""Why pods are pending in ``hami-summary chat``: pasted ``kubectl describe pod`` outputs (with
and without metrics in the conversation), and ``pending`` / ``why`` of a registered cluster on
the local Kubernetes API server, through piped stdin."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.chat.test_chat import chat
from tests.kube.fake_apiserver import FakeApiServer
from tests.slack.test_pending_e2e import lab_cluster, memory_line

PENDING = Path(__file__).resolve().parent.parent / "fixtures" / "pending"


def _paste(name: str) -> str:
    return (PENDING / name).read_text().rstrip("\n") + "\n\n"


@pytest.mark.slow
def test_pasted_describe_outputs_of_several_shapes(tmp_path: Path) -> None:
    script = (
        _paste("describe-older-scheduler.txt")
        + _paste("describe-default-scheduler.txt")
        + _paste("get-events.txt")
        + "quit\n"
    )
    result = chat(stdin=script, tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert (
        "HAMi: no node fits (seen 14 times): no available node, all node scores do not meet" in out
    )
    assert "handled by default-scheduler, not hami-scheduler" in out
    assert "CardTimeSlicingExhausted on 2 nodes: gpu-node-2, gpu-node-3" in out
    assert out.count("Not checked against the allocation: this thread has no metrics") == 3
    # Each paste was read whole: none of its lines was taken for a question.
    assert "I did not understand" not in out and "Traceback" not in out + result.stderr


@pytest.mark.slow
def test_describe_after_metrics_is_checked_against_them(tmp_path: Path) -> None:
    script = _paste("describe-reason-codes.txt") + "quit\n"
    result = chat("--example", stdin=script, tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Why is ml-team/gpu-pod pending?" in out
    assert "Checked against the allocation now (bundled example (example-scheduler.prom)):" in out
    assert "CardInsufficientMemory (contradicts HAMi):" in out
    assert "The pod asks for A100: NVIDIA A100-PCIE-40GB." in out


@pytest.mark.slow
def test_pending_and_why_of_a_registered_cluster(tmp_path: Path) -> None:
    with FakeApiServer(lab_cluster()) as kube:
        kube.write_kubeconfig(tmp_path / "lab.kubeconfig", context="lab")
        registry = tmp_path / "clusters.yaml"
        registry.write_text(
            "clusters:\n  - name: lab\n    kubeconfig: lab.kubeconfig\n    context: lab\n"
        )
        script = "/hami-summary lab pending\n@bot why ml/trainer-0\n/hami-summary lab why nope\n"
        result = chat(stdin=script, tmp_path=tmp_path, env={"HAMI_CLUSTERS_FILE": str(registry)})
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "2 pods pending on HAMi's resources in cluster lab, by reason:" in out
    assert "Why is ml/trainer-0 pending?" in out
    assert memory_line(30_000) in out
    assert 'No pod "nope" in any namespace I may read' in out
    assert "Traceback" not in out + result.stderr
