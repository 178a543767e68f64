"""Every message the bot can build passes slack_sdk's Block Kit validation and Slack's limits."""

from __future__ import annotations

import csv
import io
import json
import re
from functools import cache
from typing import Any

import pytest
from slack_sdk.models.blocks import Block

from bot.clusters.registry import ClusterEntry, ClusterRegistry
from bot.conversation.admin import AdminAccess, AdminReport
from bot.conversation.formatting import WIDE, gpu_sections, workload_sections
from bot.conversation.help import follow_up_help_reply, help_reply, no_metrics_reply
from bot.conversation.replies import (
    SUMMARY_ACTIONS,
    AdminReply,
    Attachment,
    ClusterOption,
    ClustersReply,
    FilesReply,
    MessageReply,
    PickerReply,
    Reply,
    ReplyAction,
    SummaryRef,
    SummaryReply,
    TableReply,
    internal_error_reply,
)
from bot.slack.blocks import summary_message
from bot.slack.messages import slack_message, working_message
from bot.store.state import ClusterTarget
from core.api import summarize_text
from core.model import ExecFailure, GpuReading, PodExecResult, SourceInfo, Summary
from core.simulate import simulate_exposition
from tests.conftest import read_fixture

# A summary's buttons as the conversation offers them (value: a summary of pasted metrics).
BUTTONS = tuple(ReplyAction(label, action, "{}") for action, label in SUMMARY_ACTIONS)

MAX_BLOCKS = 50


@cache  # a few large summaries are the base of several others: each is built once
def summary_of(text: str, **filters: str) -> Summary:
    return summarize_text(text, SourceInfo("paste", "pasted metrics"), **filters)  # type: ignore[arg-type]


FAILURES: tuple[ExecFailure, ...] = (
    "nvidia-smi unavailable",
    "exec blocked by policy",
    "pod gone",
    "no devices visible",
)


def exec_results(summary: Summary, every_nth_fails: int) -> list[PodExecResult]:
    """nvidia-smi results for every pod with an allocation; every n-th one failed."""
    pods = sorted({(w.namespace, w.pod) for w in summary.workloads})
    results = []
    for i, (namespace, pod) in enumerate(pods):
        if i % every_nth_fails == 0:
            failure = FAILURES[(i // every_nth_fails) % len(FAILURES)]
            results.append(
                PodExecResult(
                    namespace, pod, "main", (), failure, f"main: {failure} in namespace {namespace}"
                )
            )
        else:
            reading = GpuReading(0, f"GPU-{i}", float(i % 100), float(100 * (i % 50)), 40960.0)
            results.append(PodExecResult(namespace, pod, "main", (reading,)))
    return results


def with_usage(text: str, every_nth_fails: int) -> Summary:
    allocation_only = summary_of(text)
    return summarize_text(
        text,
        SourceInfo("cluster", "lab", cluster="lab"),
        real_usage=exec_results(allocation_only, every_nth_fails),
    )


def monitor_exposition(summary: Summary) -> str:
    """vGPU monitor metrics for every GPU and allocation of ``summary`` (HAMi's family names,
    labels as in ``vgpumonitor-small.prom``): what a large cluster's monitors report."""
    lines = []
    for i, g in enumerate(summary.gpus):
        labels = (
            f'device_index="{g.device_index}",device_type="NVIDIA-NVIDIA A100-PCIE-40GB",'
            f'device_uuid="{g.device_uuid}",node="{g.node}",zone="vGPU"'
        )
        lines.append(f"hami_host_gpu_memory_used_bytes{{{labels}}} {(i % 40 + 1) * 2**30}")
        lines.append(f"hami_host_gpu_utilization_ratio{{{labels}}} {i % 100}")
    for i, w in enumerate(summary.workloads):
        labels = (
            f'container="main",device_uuid="{w.device_uuid}",namespace="{w.namespace}",'
            f'pod="{w.pod}",vdevice_index="{w.container_index}",zone="vGPU"'
        )
        lines.append(f"hami_vgpu_memory_used_bytes{{{labels}}} {(i % 8 + 1) * 2**29}")
        lines.append(f"hami_vgpu_memory_limit_bytes{{{labels}}} {8 * 2**30}")
        lines.append(f"hami_container_device_utilization_ratio{{{labels}}} {i % 90}")
        lines.append(f"hami_container_last_kernel_elapsed_seconds{{{labels}}} {i % 600}")
    return "\n".join(lines) + "\n"


def with_runtime(text: str, missing: tuple[str, ...] = ()) -> Summary:
    allocation_only = summary_of(text)
    return summarize_text(
        text,
        SourceInfo("cluster", "lab", cluster="lab"),
        monitor_texts=(monitor_exposition(allocation_only),),
        missing_monitors=missing,
    )


MISSING_MONITORS = tuple(
    f"gpu-node-{i:03d}: pod kube-system/hami-device-plugin-{i:05d} port 9394: backend "
    "unreachable through the API server (HTTP 503)"
    for i in range(40)
)


@pytest.fixture(scope="module")
def summaries() -> dict[str, Summary]:
    small = read_fixture("scheduler-small.prom")
    large = simulate_exposition(300, 8)
    return {
        "usage": with_usage(small, 2),
        "large-usage": with_usage(large, 7),
        "small": summary_of(small),
        "legacy": summary_of(read_fixture("scheduler-small-legacy.prom")),
        "filtered": summary_of(small, namespace="team-a"),
        "runtime": summary_of(small + "\n" + read_fixture("vgpumonitor-small.prom")),
        "monitor-only": summary_of(read_fixture("vgpumonitor-small.prom")),
        "large": summary_of(large),
        "large-runtime": with_runtime(large, MISSING_MONITORS),
    }


def assert_valid(blocks: list[dict[str, Any]]) -> None:
    assert 0 < len(blocks) <= MAX_BLOCKS
    for data in blocks:
        block = Block.parse(data)
        assert block is not None, f"unknown block {data}"
        block.validate_json()
        if data["type"] == "section":
            assert len(data.get("text", {}).get("text", "")) <= 3000
            assert len(data.get("fields", [])) <= 10
            assert all(len(field["text"]) <= 2000 for field in data.get("fields", []))
        if data["type"] == "header":
            assert len(data["text"]["text"]) <= 150
        if data["type"] == "actions":
            assert all(len(e.get("value", "")) <= 2000 for e in data["elements"])


@pytest.fixture(scope="module")
def large_admin_report(tmp_path_factory: pytest.TempPathFactory) -> AdminReport:
    """An admin report far over one message: 300 kubeconfig files, 400 registered clusters."""
    folder = tmp_path_factory.mktemp("kube")
    for i in range(300):
        contexts = [
            {"name": f"ctx-{i}-{j}", "context": {"cluster": "c", "user": "u"}} for j in range(4)
        ]
        (folder / f"cluster-{i:03d}.yaml").write_text(
            json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "current-context": f"ctx-{i}-0",
                    "clusters": [
                        {
                            "name": "c",
                            "cluster": {"server": f"https://10.0.{i // 250}.{i % 250}:6443"},
                        }
                    ],
                    "users": [{"name": "u", "user": {"token": "secret-token"}}],
                    "contexts": contexts,
                }
            )
        )
    entries = tuple(
        ClusterEntry(
            f"cluster-{i}",
            f"Cluster {i}",
            "metrics-url",
            metrics_url=f"http://10.1.0.{i % 250}:31993/metrics",
            allowed_channels=frozenset({f"C{i:08d}"}),
        )
        for i in range(400)
    )
    access = AdminAccess(
        frozenset({"U1"}), ClusterRegistry(entries, folder / "clusters.yaml"), kubeconfig_dir=folder
    )
    return access.report(check=False)


def all_replies(summaries: dict[str, Summary], admin_report: AdminReport) -> list[Reply]:
    options = tuple(
        ClusterOption(f"cluster-{i}", f"Cluster number {i} " + "x" * 80, ("a", "b"), i % 2 == 0)
        for i in range(130)
    )
    replies: list[Reply] = [
        help_reply(),
        follow_up_help_reply(),
        no_metrics_reply(),
        internal_error_reply("abcd1234"),
        MessageReply("x" * 7000, "A long problem", "problem"),
        PickerReply(()),
        PickerReply(options[:3]),
        PickerReply(options, cluster="cluster-4", context="b", namespace="team-a"),
        PickerReply(
            (ClusterOption("lab", "GPU lab", ("lab",), nvidia_smi_allowed=True),), cluster="lab"
        ),
        ClustersReply(()),
        ClustersReply(options[:20]),
        ClustersReply((), "no clusters", admin_notes=("the app lacks `usergroups:read`",)),
        FilesReply("CSV of the tables.", (Attachment("a.csv", "A", lambda: b"x"),)),
        AdminReply(admin_report),
        MessageReply(AdminAccess().refusal("U0ALICE1"), "Only for the bot's admins", "problem"),
    ]
    for name, summary in summaries.items():
        ref = SummaryRef(channel="C1", thread_ts="1.1", namespace="team-a")
        if name == "large":
            ref = SummaryRef(cluster=ClusterTarget("prod", "prod-admin", True))
        replies.append(
            SummaryReply(
                summary, ref, 42.0, notes=("a note",), usage_available=ref.cluster is not None
            )
        )
        replies.append(TableReply("GPUs", gpu_sections(summary), "g.txt", len(summary.gpus), WIDE))
        replies.append(
            TableReply(
                "Workloads", workload_sections(summary), "w.txt", len(summary.workloads), WIDE
            )
        )
    return replies


def test_every_reply_is_valid_block_kit(
    summaries: dict[str, Summary], large_admin_report: AdminReport
) -> None:
    replies = all_replies(summaries, large_admin_report)
    for reply in replies:
        for files_possible in (True, False):
            message = slack_message(reply, files_possible=files_possible)
            assert_valid(message.blocks)
            assert message.text
    assert_valid(working_message("collecting HAMi metrics from *prod*").blocks)


def test_summary_blocks_carry_the_numbers_and_the_disclaimer(
    summaries: dict[str, Summary],
) -> None:
    blocks = slack_message(SummaryReply(summaries["small"], SummaryRef(), None)).blocks
    text = str(blocks)
    assert "cores *45.8%* allocated (275 / 600 cores)" in text
    assert "memory *46.7%* allocated (77.0 GiB / 165 GiB)" in text
    assert "*Allocation*" in text and "not live utilisation" in text
    assert blocks[0]["type"] == "header"


def test_large_summary_says_where_the_rest_is_and_its_buttons_bring_it(
    summaries: dict[str, Summary],
) -> None:
    built = summary_message(summaries["large"], actions=BUTTONS)
    assert_valid(built.blocks)
    text = str(built.blocks)
    assert "*By GPU model*" in text and "more: CSV button" in text
    assert "Every list in full: the GPUs, Workloads and CSV buttons." in text
    assert not built.needs_files
    # With its buttons, the message needs no files; without them every table goes with it.
    message = slack_message(SummaryReply(summaries["large"], SummaryRef(), None))
    assert message.attachments == ()
    unbuttoned = summary_message(summaries["large"])
    assert unbuttoned.needs_files and "files in this thread" in str(unbuttoned.blocks)


def test_small_summary_fits_without_files(summaries: dict[str, Summary]) -> None:
    assert not summary_message(summaries["small"], actions=BUTTONS).needs_files
    message = slack_message(SummaryReply(summaries["small"], SummaryRef(), None))
    assert message.attachments == ()


def test_real_usage_of_a_large_cluster_is_cut_with_counts_and_sent_in_full(
    summaries: dict[str, Summary],
) -> None:
    summary = summaries["large-usage"]
    assert summary.real_usage is not None and len(summary.real_usage) > 300
    built = summary_message(summary, actions=BUTTONS)
    assert_valid(built.blocks)
    text = str(built.blocks)
    assert "more pods read: Workloads button" in text and built.needs_files
    unread = sum(1 for u in summary.real_usage if u.failure is not None)
    assert f"*Could not read {unread:,} pods, by cause:*" in text
    shown_causes = [cause for cause in FAILURES if f"• *{cause} (" in text]
    assert len(shown_causes) == 3  # at most three causes; the rest are in the files
    message = slack_message(SummaryReply(summary, SummaryRef(), None))
    tables = next(a for a in message.attachments if a.filename == "hami-summary-tables.txt")
    full = tables.render().decode()
    section = full[full.index("Real usage (nvidia-smi, point in time)") :]
    assert all(u.pod in section for u in summary.real_usage)  # none silently cut
    assert all(f"{cause}" in section for cause in FAILURES)


def test_picker_offers_at_most_100_clusters_and_says_so() -> None:
    options = tuple(ClusterOption(f"c{i}", f"c{i}", ("ctx",)) for i in range(120))
    blocks = slack_message(PickerReply(options)).blocks
    select = next(b for b in blocks if b.get("block_id") == "picker_cluster")
    assert len(select["accessory"]["options"]) == 100
    assert "20 more clusters" in str(blocks)


def test_runtime_numbers_are_shown_joined_to_scheduler_devices(
    summaries: dict[str, Summary],
) -> None:
    summary = summarize_text(
        read_fixture("scheduler-small.prom"),
        SourceInfo("cluster", "lab", cluster="lab"),
        monitor_texts=(read_fixture("vgpumonitor-small.prom"),),
        missing_monitors=(
            "gpu-node-2: pod kube-system/hami-device-plugin-m4q9z port 9394: backend unreachable",
        ),
    )
    built = summary_message(summary, actions=BUTTONS)
    assert_valid(built.blocks)
    text = str(built.blocks)
    assert "3 host GPUs, 3 containers, 1 monitor not reached" in text
    # Host GPU: memory used and utilisation from the monitor, allocation from the scheduler.
    assert re.search(
        r"gpu-node-1/0\s+11\.9 GiB\s+63\.0%\s+50\.0%\s+18\.0/40\.0 GiB\s+partial", text
    )
    assert re.search(r"gpu-node-1/2\s+440 MiB\s+0\.0%\s+0\.0%\s+0/40\.0 GiB\s+idle", text)
    # Container: vGPU memory used of its limit and %, SM utilisation, last kernel.
    assert re.search(
        r"team-a/llm-infer-0\s+gpu-node-1/0\s+8\.3/10\.0 GiB\s+83\.3%"
        r"\s+41\.0%\s+1 s ago",
        text,
    )
    assert "hami-device-plugin-m4q9z port 9394: backend unreachable" in text
    assert not built.needs_files
    assert "Runtime: 3 host GPUs and 3 containers" in built.text


def test_runtime_of_a_large_cluster_is_cut_with_counts_and_sent_in_full(
    summaries: dict[str, Summary],
) -> None:
    summary = summaries["large-runtime"]
    runtime = summary.runtime
    assert runtime is not None and len(runtime.host_gpus) == 2400
    built = summary_message(summary, actions=BUTTONS)
    assert_valid(built.blocks)
    text = str(built.blocks)
    assert f"{len(runtime.containers):,} containers, 40 monitors not reached" in text
    # Beside the allocation, three rows of each (the page stays near one screen).
    assert "2,397 more host GPUs: CSV button" in text
    assert f"{len(runtime.containers) - 3:,} more containers: CSV button" in text
    assert "*40 vGPU monitors not reached*" in text
    # Allocations the monitors measured as idle are counted among what needs attention.
    assert summary.idle_allocations
    assert f"*{len(summary.idle_allocations)} idle allocations* (by vGPU monitor)" in text
    assert built.needs_files
    message = slack_message(SummaryReply(summary, SummaryRef(), None))
    files = {a.filename: a for a in message.attachments}
    assert {"hami-summary-tables.txt", "hami-summary.csv", "hami-runtime.csv"} <= set(files)
    rows = list(csv.reader(io.StringIO(files["hami-runtime.csv"].render().decode())))
    host_rows = rows[1 : rows.index([])]
    assert len(host_rows) == 2400
    container_rows = rows[rows.index([]) + 2 :]
    container_rows = container_rows[: container_rows.index([])]
    assert len(container_rows) == len(runtime.containers)
    assert [r[0] for r in rows if len(r) == 1][-40:] == list(MISSING_MONITORS)
    # The joined allocation is the scheduler's, copied, not recomputed.
    first = runtime.host_gpus[0]
    gpu = next(g for g in summary.gpus if g.device_uuid == first.device_uuid)
    assert host_rows[0][:3] == [first.node, str(first.device_index), first.device_uuid]
    assert host_rows[0][8:13] == [
        str(gpu.core_allocated),
        str(gpu.core_limit),
        str(gpu.mem_allocated_mib),
        str(gpu.mem_limit_mib),
        gpu.state,
    ]
    tables = files["hami-summary-tables.txt"].render().decode()
    section = tables[tables.index("Containers (vGPU monitor)") :]
    assert all(c.pod in section for c in runtime.containers)  # none silently cut
    assert all(m in tables for m in MISSING_MONITORS)


def test_admin_report_too_large_for_a_message_says_where_the_rest_is(
    large_admin_report: AdminReport,
) -> None:
    message = slack_message(AdminReply(large_admin_report))
    assert_valid(message.blocks)
    text = str(message.blocks)
    assert "more lines. The whole report: `hami-summary clusters` on the bot's host" in text
    assert "cluster-000.yaml" in text and "secret-token" not in text
