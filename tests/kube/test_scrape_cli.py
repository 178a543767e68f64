"""``hami-summary scrape`` end to end against the local API server: the same numbers as
``summarize`` on the same text, and exit code 2 with one message for every cluster problem."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli.main import main
from tests.kube.fake_apiserver import FakeApiServer, FakeCluster

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "scheduler-small.prom"
A100_0_CORES = (
    'hami_gpu_core_allocated_ratio{device_index="0",device_type="NVIDIA A100-PCIE-40GB",'
    'device_uuid="GPU-5f3c1a2e-7b4d-4e91-9c0a-1d2e3f405162",node="gpu-node-1",zone="vGPU"}'
)


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_scrape_gives_the_same_numbers_as_summarize(
    kubeconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(
        ["scrape", "--kubeconfig", str(kubeconfig), "--context", "test", "--format", "json"],
        capsys,
    )
    assert code == 0, err
    scraped = json.loads(out)
    assert err == "note: Read through Service kube-system/hami-scheduler port monitor.\n"
    code, out, err = _run(["summarize", str(FIXTURE), "--format", "json"], capsys)
    assert code == 0, err
    pasted = json.loads(out)
    assert scraped["source"]["kind"] == "cluster"
    assert scraped["source"]["context"] == "test"
    assert scraped["source"]["fetched_at"] is not None
    scraped.pop("source")
    pasted.pop("source")
    assert scraped == pasted
    assert scraped["cluster"]["core_allocated"] == 275
    assert scraped["cluster"]["mem_allocated_mib"] == 78848


def test_scrape_with_runtime_nvidia_smi_and_chart(
    kubeconfig: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chart = tmp_path / "chart.png"
    code, out, err = _run(
        [
            "scrape",
            "--kubeconfig",
            str(kubeconfig),
            "--context",
            "test",
            "--runtime",
            "--nvidia-smi",
            "--format",
            "json",
            "--chart",
            str(chart),
        ],
        capsys,
    )
    assert code == 0, err
    data = json.loads(out)
    assert "monitor" in data["source"]["components"]
    assert data["runtime"] is not None
    pods = {row["pod"]: row for row in data["real_usage"]}
    assert pods["notebook-0"]["failure"] == "nvidia-smi unavailable"
    assert pods["train-full-0"]["class"] == "high"  # 39000 of 40960 MiB used
    assert pods["embed-svc-0"]["class"] == "idle"  # 2 % busy, 300 of 8192 MiB
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_scrape_text_format(kubeconfig: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["scrape", "--kubeconfig", str(kubeconfig), "--context", "test"], capsys)
    assert code == 0
    assert "gpu-node-1" in out and "team-a" in out


@pytest.mark.parametrize(
    ("setup", "argv_extra", "start"),
    [
        (lambda c: c.forbid("list", "pods"), [], 'RBAC on context "test" refused `list pods`'),
        (
            lambda c: c.pods.clear(),
            [],
            'HAMi not found on context "test": no pods labelled '
            "app.kubernetes.io/component=hami-scheduler",
        ),
        (
            lambda c: setattr(c, "token", "rotated"),
            [],
            'The Kubernetes API server of context "test" at https://127.0.0.1:',
        ),
        (lambda c: None, ["--timeout", "0"], "--timeout must be more than 0 seconds."),
    ],
    ids=["forbidden", "hami-missing", "expired", "bad-timeout"],
)
def test_scrape_failures_exit_2_with_one_message(
    cluster: FakeCluster,
    kubeconfig: Path,
    capsys: pytest.CaptureFixture[str],
    setup: object,
    argv_extra: list[str],
    start: str,
) -> None:
    setup(cluster)  # type: ignore[operator]
    code, out, err = _run(
        ["scrape", "--kubeconfig", str(kubeconfig), "--context", "test", *argv_extra], capsys
    )
    assert code == 2
    assert out == ""
    assert err.startswith(f"hami-summary scrape: {start}")
    assert err.count("\n") == 1 and "Traceback" not in err


def test_scrape_unknown_context_and_missing_file(
    api_server: FakeApiServer, kubeconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(["scrape", "--kubeconfig", str(kubeconfig), "--context", "prod"], capsys)
    assert code == 2
    assert err == (
        f'hami-summary scrape: context "prod" is not in {kubeconfig} (contexts there: test). '
        "List them with: hami-summary clusters\n"
    )
    missing = kubeconfig.parent / "nope.yaml"
    code, _, err = _run(["scrape", "--kubeconfig", str(missing), "--context", "test"], capsys)
    assert code == 2
    assert err.startswith(f"hami-summary scrape: cannot read kubeconfig {missing}: ")


def test_scrape_warns_on_stderr_of_what_it_left_out(
    cluster: FakeCluster, kubeconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A stray quote that makes every line of gpu-node-2 unreadable, and a value no exporter
    # writes on gpu-node-1.
    text = FIXTURE.read_text(encoding="utf-8").replace("gpu-node-2", 'gpu-node-2"x')
    text = text.replace(A100_0_CORES + " 50", A100_0_CORES + " NaN")
    cluster.service_proxy[("kube-system", "hami-scheduler", "monitor")].body = text.encode()
    code, out, err = _run(
        ["scrape", "--kubeconfig", str(kubeconfig), "--context", "test", "--format", "json"],
        capsys,
    )
    assert code == 0, err
    assert json.loads(out)["cluster"]["nodes"] == 1
    warnings = [line for line in err.splitlines() if ": warning: " in line]
    assert len(warnings) == 2, err
    assert warnings[0].startswith(
        'hami-summary scrape (context "test"): warning: Input problems: 26 line(s) could not be '
        "read as metrics and are in no figure (first at line "
    )
    assert warnings[1].startswith(
        'hami-summary scrape (context "test"): warning: Input problems: 1 value(s) that no HAMi '
        'exporter writes were left out of every figure: hami_gpu_core_allocated_ratio{node="'
        'gpu-node-1",'
    )


def test_scrape_refuses_a_page_over_the_input_limit_and_says_how_to_raise_it(
    kubeconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["scrape", "--kubeconfig", str(kubeconfig), "--context", "test"]
    code, out, err = _run([*argv, "--max-input-mib", "0.004"], capsys)
    assert code == 2 and out == ""
    assert "answer over the 4.1 KiB input limit" in err, err
    assert "--max-input-mib, HAMI_SUMMARY_MAX_INPUT_MIB or max_input_bytes" in err
    code, out, err = _run([*argv, "--max-input-mib", "1", "--format", "json"], capsys)
    assert code == 0, err
    assert json.loads(out)["cluster"]["core_allocated"] == 275
