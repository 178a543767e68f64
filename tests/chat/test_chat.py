"""``hami-summary chat`` driven through piped stdin, as a script would."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, read_fixture
from tests.kube.fake_apiserver import FakeApiServer, hami_cluster
from tests.slack.conftest import MetricsServer, write_kubeconfig, write_registry

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def chat(
    *args: str, stdin: str, tmp_path: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "MPLBACKEND": "Agg", **(env or {})}
    for name in (
        "SLACK_BOT_TOKEN",
        "SLACK_SIGNING_SECRET",
        "SLACK_APP_TOKEN",
        "HAMI_CLUSTERS_FILE",
    ):
        if env is None or name not in env:
            full_env.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "bot.cli.main", "chat", "--out-dir", str(tmp_path / "out"), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env=full_env,
    )


def saved_paths(output: str) -> list[Path]:
    return [Path(p) for p in re.findall(r"saved to (\S+)", output)]


@pytest.mark.slow
def test_example_gives_a_full_answer_and_a_chart_at_once(tmp_path: Path) -> None:
    result = chat("--example", stdin="", tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "cores 45.8% allocated" in result.stdout and "Capacity outlook" in result.stdout
    assert "you>" not in result.stdout  # no prompts when stdin is not a terminal
    charts = [p for p in saved_paths(result.stdout) if p.suffix == ".png"]
    assert charts and charts[0].read_bytes().startswith(PNG_SIGNATURE)


@pytest.mark.slow
def test_file_then_follow_ups_use_the_same_metrics(tmp_path: Path) -> None:
    script = (
        "\n".join(
            [
                "ns team-a",
                "@bot gpus",
                "workloads",
                "csv",
                "/hami-summary help",
                "quit",
                "ns never-reached",
            ]
        )
        + "\n"
    )
    result = chat(str(FIXTURES / "scheduler-small.prom"), stdin=script, tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "cores 45.8% allocated (275 / 600 cores)" in out
    assert "Filter: namespace=team-a" in out or "namespace=team-a" in out
    # The filter sticks for the follow-ups after it: team-a's GPUs and workloads.
    assert "All 2 GPUs of namespace team-a and their shares" in out and "gpu-node-1/1" in out
    assert "workload allocations of namespace team-a" in out and "train-full-0" in out
    assert "Slash commands cannot be used inside threads" in out
    assert "never-reached" not in out
    csv_files = [p for p in saved_paths(out) if p.suffix == ".csv"]
    assert csv_files and "GPU-5f3c1a2e" in csv_files[0].read_text()


@pytest.mark.slow
def test_pasted_metrics_end_at_an_empty_line(tmp_path: Path) -> None:
    script = read_fixture("scheduler-small.prom").rstrip("\n") + "\n\nnode gpu-node-2\n"
    result = chat(stdin=script, tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("cores 45.8% allocated (275 / 600 cores)") == 2
    assert "node=gpu-node-2" in result.stdout


@pytest.mark.slow
def test_bad_paste_and_follow_up_without_metrics_are_explained(tmp_path: Path) -> None:
    dcgm = 'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-1"} 42\n'
    result = chat(stdin="gpus\n" + dcgm + "\n", tmp_path=tmp_path)
    assert result.returncode == 0
    assert "I did not find HAMi metrics" in result.stdout
    assert "DCGM" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


@pytest.mark.slow
def test_registered_cluster_is_summarised_live(tmp_path: Path) -> None:
    server = MetricsServer(read_fixture("scheduler-small.prom"))
    try:
        registry = tmp_path / "clusters.yaml"
        registry.write_text(f"clusters:\n  - name: demo\n    metrics_url: {server.url}\n")
        result = chat(
            stdin="/hami-summary\n/hami-summary demo ns=team-b\n/hami-summary demo runtime\n",
            tmp_path=tmp_path,
            env={"HAMI_CLUSTERS_FILE": str(registry)},
        )
    finally:
        server.stop()
    assert result.returncode == 0, result.stderr
    assert "1. demo" in result.stdout
    assert "cluster demo" in result.stdout
    assert "cores 45.8% allocated (275 / 600 cores)" in result.stdout
    assert re.search(
        r"Source: cluster demo; scraped \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", result.stdout
    )
    assert "metrics given" not in result.stdout  # a cluster has its scrape time, above
    assert server.scrapes == 1
    # Runtime refused by the registry: the collector's wording, naming the setting and entry.
    assert (
        'Runtime (vGPU monitor) scrapes are not enabled for cluster "demo". An admin can set '
        f"runtime_allowed: true for it in the cluster registry ({registry}:2). Ask without "
        "`runtime` for the allocation summary."
    ) in result.stdout


@pytest.mark.slow
def test_unreadable_file_is_a_usage_error(tmp_path: Path) -> None:
    result = chat(str(tmp_path / "missing.prom"), stdin="", tmp_path=tmp_path)
    assert result.returncode == 2
    assert "cannot read" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.slow
def test_real_usage_of_a_kubeconfig_cluster_and_the_refusal_where_not_allowed(
    tmp_path: Path,
) -> None:
    cluster = hami_cluster()
    with FakeApiServer(cluster) as kube:
        kube.write_kubeconfig(tmp_path / "lab.kubeconfig", context="lab")
        registry = tmp_path / "clusters.yaml"
        registry.write_text(
            "clusters:\n"
            "  - name: lab\n"
            "    kubeconfig: lab.kubeconfig\n"
            "    nvidia_smi_allowed: true\n"
            "  - name: plain\n"
            "    kubeconfig: lab.kubeconfig\n"
        )
        result = chat(
            stdin="/hami-summary lab usage\n/hami-summary plain usage\n",
            tmp_path=tmp_path,
            env={"HAMI_CLUSTERS_FILE": str(registry)},
        )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Real usage (nvidia-smi, point in time)" in out
    assert re.search(r"team-b/embed-svc-0\s+2\.0%\s+300 MiB/8\.0 GiB\s+3\.7%\s+idle", out)
    assert re.search(r"team-a/train-full-0\s+97\.0%.*95\.2%\s+high", out)
    assert (
        "Could not read 1 pod, by cause:\n  - nvidia-smi unavailable (1): "
        "team-b/notebook-0 — notebook: nvidia-smi not found in the image"
    ) in out
    assert any(e.pod == "llm-infer-0" for e in cluster.execs)
    assert (
        f'nvidia-smi exec is not enabled for cluster "plain". An admin can set '
        f"nvidia_smi_allowed: true for it in the cluster registry ({registry}:5)"
    ) in out


@pytest.mark.slow
def test_words_that_are_not_a_follow_up_are_told_apart_from_a_missing_paste(
    tmp_path: Path,
) -> None:
    before = chat(stdin="hello\n", tmp_path=tmp_path)
    assert "this thread has none I remember" in before.stdout
    after = chat(
        str(FIXTURES / "scheduler-small.prom"), stdin="hello there\nns team-a\n", tmp_path=tmp_path
    )
    assert after.returncode == 0, after.stderr
    out = after.stdout
    assert "Problem: Not a follow-up I know" in out
    assert (
        "I did not understand “hello there” as a follow-up. This thread has the file "
        "scheduler-small.prom"
    ) in out
    assert "none I remember" not in out
    assert "`gpus` — every GPU" in out
    assert "Filter: namespace=team-a" in out  # the metrics still answer afterwards


@pytest.mark.slow
def test_cut_tables_point_at_csv_which_saves_every_row(tmp_path: Path) -> None:
    from core.simulate import simulate_exposition

    big = tmp_path / "big.prom"
    big.write_text(simulate_exposition(40, 4))
    result = chat(str(big), stdin="csv\n", tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "more: type csv" in out and "every table: type csv" in out
    assert "--format csv" not in out  # a CLI flag that does not exist in this mode
    saved = {p.name.rsplit("-", 1)[0]: p for p in saved_paths(out)}
    tables = saved["hami-summary-tables"].read_text()
    assert all(f"gpu-node-{i:02d}" in tables for i in range(1, 41))  # every node, none cut
    assert "gpu-node-40,3," in saved["hami-summary"].read_text()


@pytest.mark.slow
def test_admin_lists_kubeconfigs_and_who_may_query_each_cluster(tmp_path: Path) -> None:
    kube_dir = tmp_path / "kube"
    kube_dir.mkdir()
    write_kubeconfig(kube_dir / "prod.kubeconfig", ["prod-admin", "prod-readonly"])
    (kube_dir / "notes.txt").write_text("call the on-call first\n")
    registry = write_registry(tmp_path, "http://127.0.0.1:9/metrics")
    result = chat(
        stdin="admin\nadmin check\n",
        tmp_path=tmp_path,
        env={"HAMI_CLUSTERS_FILE": str(registry), "KUBECONFIG_DIR": str(kube_dir)},
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert (
        f"Kubeconfig files in {kube_dir} (folder from KUBECONFIG_DIR): 1 found, 1 skipped." in out
    )
    assert (
        "◦ prod-admin: cluster gpu (https://127.0.0.1:9), user viewer (token) — valid "
        "(resolves; credentials present)"
    ) in out
    assert "• notes.txt: YAML, but not a mapping" in out
    assert "type admin check" in out
    assert f"Registered clusters ({registry}): 3" in out
    assert "• demo (Demo cluster): metrics URL http://127.0.0.1:9/metrics" in out
    assert "may query: channels C0TEAM01" in out and "may query: users U0ALICE1" in out
    # admin check asked the (closed) API server with the context's credentials.
    assert (
        "◦ prod-admin: cluster gpu (https://127.0.0.1:9), user viewer (token) — PROBLEM: "
        'Cannot reach the Kubernetes API server of context "prod-admin"'
    ) in out
    assert "kube-token-not-a-secret" not in out + result.stderr


@pytest.mark.slow
def test_operator_settings_reach_the_bot(tmp_path: Path) -> None:
    settings = tmp_path / "settings.yaml"
    # team-a holds 47 % of the example's cores: a dominant tenant once the bar is 45 %.
    settings.write_text("thresholds:\n  dominant_percent: 45\n")
    result = chat(
        "--example", stdin="", tmp_path=tmp_path, env={"HAMI_SUMMARY_SETTINGS": str(settings)}
    )
    assert result.returncode == 0, result.stderr
    assert "dominant tenant" in result.stdout
    bad = chat(
        "--example",
        stdin="",
        tmp_path=tmp_path,
        env={"HAMI_SUMMARY_SETTINGS": str(tmp_path / "missing.yaml")},
    )
    assert bad.returncode == 2
    assert "cannot read the settings file" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.slow
def test_follow_ups_after_a_real_usage_summary_keep_it_from_the_same_reading(
    tmp_path: Path,
) -> None:
    cluster = hami_cluster()
    with FakeApiServer(cluster) as kube:
        kube.write_kubeconfig(tmp_path / "lab.kubeconfig", context="lab")
        registry = tmp_path / "clusters.yaml"
        registry.write_text(
            "clusters:\n  - name: lab\n    kubeconfig: lab.kubeconfig\n"
            "    nvidia_smi_allowed: true\n"
        )
        script = "/hami-summary lab usage\nns team-a\nworkloads\nchart\n"
        result = chat(stdin=script, tmp_path=tmp_path, env={"HAMI_CLUSTERS_FILE": str(registry)})
        execs_before_refresh = len(cluster.execs)
        refreshed = chat(
            stdin="/hami-summary lab usage\nrefresh\n",
            tmp_path=tmp_path,
            env={"HAMI_CLUSTERS_FILE": str(registry)},
        )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    # The ns follow-up is the cluster's summary, filtered, with the real-usage table.
    filtered = out[out.index("Filter: namespace=team-a") :]
    filtered = filtered[: filtered.index("workload allocations")]
    assert re.search(r"team-a/llm-infer-0\s+41\.0%\s+8\.8/10\.0 GiB", filtered)
    assert "Real usage (nvidia-smi, point in time)" in filtered
    # The workloads table carries every pod's real usage after it; the chart says it too.
    workloads = out[out.index("workload allocations") :]
    assert "with real usage per pod" in workloads.splitlines()[0]
    assert re.search(r"team-a/train-full-0\s+trainer\s+97\.0%", workloads)
    # The filter sticks: the chart after `workloads` is team-a's, with its two pods' usage.
    assert "Real usage (nvidia-smi, point in time): 2 of 2 pods read" in workloads
    # One nvidia-smi per pod for the whole conversation: follow-ups use the cached reading.
    assert execs_before_refresh == 5
    assert refreshed.returncode == 0, refreshed.stderr
    assert refreshed.stdout.count("Real usage (nvidia-smi, point in time)") >= 2
    assert len(cluster.execs) == execs_before_refresh + 10  # the command, then refresh again
