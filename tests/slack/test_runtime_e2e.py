"""Runtime (vGPU monitor) numbers in Slack, end to end: the real bot over HTTP with signed
requests, the local Web API, and a kubeconfig-registered cluster on the local Kubernetes API
server whose vGPU monitors answer on one node and not on the other."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.clusters.registry import load_registry
from core.api import summarize_text
from core.model import SourceInfo
from core.simulate import simulate_exposition
from tests.conftest import read_fixture
from tests.kube.fake_apiserver import FakeApiServer, hami_cluster
from tests.slack.conftest import CHANNEL, MetricsServer, RunningBot, start_bot, stop_bot
from tests.slack.test_blocks import assert_valid, monitor_exposition
from tests.slack.test_http_e2e import ACK_LIMIT_SECONDS, answer_in, blocks_text
from tests.slack.test_real_usage_e2e import final_message, has, row
from tests.support.slack_api import SlackWebApi

REGISTRY = """\
clusters:
  - name: lab
    display_name: GPU lab
    kubeconfig: lab.kubeconfig
    context: lab
    allowed_channels: [{channel}]
    runtime_allowed: true
"""

MISSING_NODE_2 = (
    "gpu-node-2: pod kube-system/hami-device-plugin-m4q9z port 9394: backend unreachable "
    "through the API server (HTTP 503: error trying to reach pod: dial tcp 10.244.1.17:9394: "
    "connect: connection refused)"
)


@pytest.fixture
def lab_bot(slack_api: SlackWebApi, tmp_path: Path) -> Iterator[RunningBot]:
    with FakeApiServer(hami_cluster()) as kube:
        kube.write_kubeconfig(tmp_path / "lab.kubeconfig", context="lab")
        registry_file = tmp_path / "clusters.yaml"
        registry_file.write_text(REGISTRY.format(channel=CHANNEL))
        running, server = start_bot(slack_api, load_registry(registry_file))
        try:
            yield running
        finally:
            stop_bot(running, server)


def test_runtime_shows_host_gpus_containers_and_monitors_not_reached(lab_bot: RunningBot) -> None:
    api = lab_bot.api
    response = lab_bot.sender.command("lab runtime", response_url=api.response_url("rt"))
    assert response.status == 200 and response.elapsed_seconds < ACK_LIMIT_SECONDS
    answer = final_message(api, has("Runtime (vGPU monitor"))
    assert_valid(answer.blocks)
    text = blocks_text(answer.blocks)
    # The allocation summary is all there too.
    assert "cores *45.8%* allocated (275 / 600 cores)" in text
    assert (
        "*Runtime (vGPU monitor, measured at scrape time): 3 host GPUs, 3 containers, "
        "1 monitor not reached*"
    ) in text
    # Host GPUs: memory used and utilisation, next to the scheduler's allocation on that GPU.
    assert row("gpu-node-1/0", "11.9 GiB", "63.0%", "50.0%", "18.0/40.0 GiB", "partial").search(
        text
    )
    assert row("gpu-node-1/1", "39.4 GiB", "97.0%", "100.0%", "40.0/40.0 GiB", "full").search(text)
    assert row("gpu-node-1/2", "440 MiB", "0.0%", "0.0%", "0/40.0 GiB", "idle").search(text)
    # Containers: vGPU memory used of the limit and %, SM utilisation, last kernel.
    assert row(
        "team-a/train-full-0", "gpu-node-1/1", "39.0/40.0 GiB", "97.5%", "96.0%", "0 s ago"
    ).search(text)
    assert row(
        "team-b/embed-svc-0", "gpu-node-1/0", "3.1/8.0 GiB", "39.1%", "22.0%", "4 s ago"
    ).search(text)
    # The monitor not reached is named with why, among what needs attention.
    assert (
        f"*1 vGPU monitor not reached* (their GPUs and containers are missing above): "
        f"{MISSING_NODE_2}" in text
    )
    assert "Runtime: 3 host GPUs and 3 containers measured" in answer.text
    # The header has the time of scrape and its age; runtime comes before what needs
    # attention. Beside runtime the capacity outlook per model is in the full report.
    assert re.search(
        r"Source: cluster \*lab\* \(context `lab`\) · scraped "
        r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(\d+ s ago\)",
        text,
    )
    assert (
        text.index("*By GPU model*")
        < text.index("*Runtime (vGPU monitor")
        < text.index("*Needs attention*")
    )
    assert "capacity outlook per model: CSV button" in text
    # Everything fitted: only the chart is uploaded.
    api.wait_for("files.completeUploadExternal")
    assert [f.filename for f in api.uploaded_files()] == ["hami-allocation.png"]


def test_csv_follow_up_in_a_runtime_thread_sends_the_runtime_tables(lab_bot: RunningBot) -> None:
    api = lab_bot.api
    lab_bot.sender.command("lab runtime", response_url=api.response_url("rt"))
    summary = final_message(api, has("Runtime (vGPU monitor"))
    lab_bot.sender.mention("csv", thread_ts=summary.ts)
    api.wait_for("files.completeUploadExternal", 2)
    files = {f.filename: f for f in api.uploaded_files() if f.thread_ts == summary.ts}
    assert {"hami-summary.csv", "hami-summary-tables.txt", "hami-runtime.csv"} <= set(files)
    content = files["hami-runtime.csv"].content
    assert content is not None
    rows = list(csv.reader(io.StringIO(content.decode())))
    assert rows[0][:6] == [
        "node",
        "device_index",
        "device_uuid",
        "device_type",
        "mem_used_mib",
        "utilization_percent",
    ]
    # The hardware-health columns come last and stay empty: this monitor writes none of them.
    assert rows[0][-4:] == [
        "temperature_celsius",
        "power_watts",
        "ecc_corrected_errors",
        "ecc_uncorrected_errors",
    ]
    assert [
        "gpu-node-1",
        "0",
        "GPU-5f3c1a2e-7b4d-4e91-9c0a-1d2e3f405162",
        "NVIDIA-NVIDIA A100-PCIE-40GB",
        "12172.0",
        "63.0",
        "18.0",
        "True",
        "50.0",
        "100.0",
        "18432.0",
        "40960.0",
        "partial",
        "",
        "",
        "",
        "",
    ] in rows
    assert [
        "team-a",
        "llm-infer-0",
        "server",
        "0",
        "GPU-5f3c1a2e-7b4d-4e91-9c0a-1d2e3f405162",
        "gpu-node-1",
        "0",
        "8532.0",
        "10240.0",
        "83.3203",
        "41.0",
        "1.0",
    ] in rows
    assert [MISSING_NODE_2] in rows


def test_runtime_too_large_for_a_message_goes_into_the_files(bot: RunningBot) -> None:
    scheduler = simulate_exposition(60, 8)
    allocation = summarize_text(scheduler, SourceInfo("paste", "p"))
    text = scheduler + "\n" + monitor_exposition(allocation)
    file = bot.api.add_private_file("big-with-monitor.prom", text.encode())
    _, ts = bot.sender.mention("", files=[file])
    answer = answer_in(bot.api, CHANNEL, ts)
    assert_valid(answer.blocks)
    shown = blocks_text(answer.blocks)
    assert "480 host GPUs" in shown
    assert "477 more host GPUs: CSV button" in shown
    assert re.search(r"[\d,]+ more containers: CSV button", shown)
    bot.api.wait_for("files.completeUploadExternal")
    files = {f.filename: f for f in bot.api.uploaded_files()}
    assert {
        "hami-allocation.png",
        "hami-summary-tables.txt",
        "hami-summary.csv",
        "hami-runtime.csv",
    } <= set(files)
    content = files["hami-runtime.csv"].content
    assert content is not None
    rows = list(csv.reader(io.StringIO(content.decode())))
    assert len(rows[1 : rows.index([])]) == 480  # every host GPU, none silently cut
    pods = {w.pod for w in allocation.workloads}
    assert pods <= {r[1] for r in rows if len(r) == 12}
    tables = files["hami-summary-tables.txt"].content
    assert tables is not None and b"Containers (vGPU monitor)" in tables


def test_small_runtime_paste_fits_without_files(bot: RunningBot) -> None:
    text = read_fixture("scheduler-small.prom") + "\n" + read_fixture("vgpumonitor-small.prom")
    file = bot.api.add_private_file("both.prom", text.encode())
    _, ts = bot.sender.mention("", files=[file])
    shown = blocks_text(answer_in(bot.api, CHANNEL, ts).blocks)
    assert "3 host GPUs, 3 containers" in shown and "not reached" not in shown
    bot.api.wait_for("files.completeUploadExternal")
    assert [f.filename for f in bot.api.uploaded_files()] == ["hami-allocation.png"]


def test_runtime_refused_by_the_registry_names_the_setting_and_the_entry(
    bot: RunningBot, metrics_server: MetricsServer, tmp_path: Path
) -> None:
    response = bot.sender.command("demo runtime", response_url=bot.api.response_url("no-rt"))
    body = response.json()
    assert body["response_type"] == "ephemeral"
    text = blocks_text(body["blocks"])
    # The collector's own wording (bot.clusters.errors), then what to ask instead.
    assert (
        'Runtime (vGPU monitor) scrapes are not enabled for cluster "demo". An admin can set '
        f"runtime_allowed: true for it in the cluster registry ({tmp_path / 'clusters.yaml'}"
        ":2). Ask without `runtime` for the allocation summary."
    ) in text
    assert metrics_server.scrapes == 0 and bot.api.calls_to("chat.postMessage") == []
