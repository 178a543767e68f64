"""Real usage (nvidia-smi) from Slack, end to end: the real bot over HTTP, signed requests, the
local Web API, and a kubeconfig-registered cluster on the local Kubernetes API server whose
pods answer exec the way containers with and without nvidia-smi do."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bot.clusters.registry import load_registry
from tests.kube.fake_apiserver import FakeApiServer, FakeCluster, hami_cluster
from tests.slack.conftest import CHANNEL, USER, RunningBot, start_bot, stop_bot
from tests.slack.test_blocks import assert_valid
from tests.slack.test_http_e2e import ACK_LIMIT_SECONDS, blocks_text
from tests.support.slack_api import SlackWebApi, StoredMessage

# The real-usage section's heading (the *Real usage* button's label is not enough).
USAGE_SECTION = "*Real usage (nvidia-smi, point in time)"

REGISTRY = """\
clusters:
  - name: lab
    display_name: GPU lab
    kubeconfig: lab.kubeconfig
    context: lab
    allowed_channels: [{channel}]
    nvidia_smi_allowed: true
  - name: plain
    kubeconfig: lab.kubeconfig
    context: lab
    allowed_channels: [{channel}]
"""


@dataclass
class Lab:
    bot: RunningBot
    cluster: FakeCluster
    kube: FakeApiServer
    registry_file: Path

    def scheduler_scrapes(self) -> int:
        return sum(1 for r in self.kube.requests if r.path.endswith("/proxy/metrics"))


@pytest.fixture
def lab(slack_api: SlackWebApi, tmp_path: Path) -> Iterator[Lab]:
    cluster = hami_cluster()
    with FakeApiServer(cluster) as kube:
        kube.write_kubeconfig(tmp_path / "lab.kubeconfig", context="lab")
        registry_file = tmp_path / "clusters.yaml"
        registry_file.write_text(REGISTRY.format(channel=CHANNEL))
        running, server = start_bot(slack_api, load_registry(registry_file))
        try:
            yield Lab(running, cluster, kube, registry_file)
        finally:
            stop_bot(running, server)


def final_message(
    api: SlackWebApi,
    predicate: Callable[[StoredMessage], bool],
    *,
    thread_ts: str | None = None,
    timeout: float = 30.0,
) -> StoredMessage:
    """The bot's answer (a working message updated in place) that ``predicate`` accepts."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for message in list(api.messages.values()):
            if (
                message.channel == CHANNEL
                and message.thread_ts == thread_ts
                and message.updates
                and predicate(message)
            ):
                return message
        time.sleep(0.02)
    seen = [blocks_text(m.blocks)[:200] for m in api.messages.values()]
    raise AssertionError(f"no matching answer within {timeout} s; messages: {seen}")


def has(text: str) -> Callable[[StoredMessage], bool]:
    return lambda message: text in blocks_text(message.blocks)


def row(*cells: str) -> re.Pattern[str]:
    """A row of the fixed-width real-usage table: the cells in order, spaces between."""
    return re.compile(r"\s+".join(re.escape(cell) for cell in cells))


def test_usage_shows_real_usage_per_pod_and_failures_by_cause(lab: Lab) -> None:
    api = lab.bot.api
    response = lab.bot.sender.command("lab usage", response_url=api.response_url("usage"))
    assert response.status == 200 and response.body == b""
    assert response.elapsed_seconds < ACK_LIMIT_SECONDS
    working = api.wait_for("chat.postMessage")[0]
    assert "running nvidia-smi in its pods" in working.params["text"]
    answer = final_message(api, has(USAGE_SECTION))
    text = blocks_text(answer.blocks)
    assert_valid(answer.blocks)
    assert answer.blocks[0]["text"]["text"] == "HAMi GPU allocation and real usage: lab"
    # The allocation summary is all there too.
    assert "cores *45.8%* allocated (275 / 600 cores)" in text
    assert (
        "*Real usage (nvidia-smi, point in time)*  _4 pods read of 5 · idle 1 · "
        "low / over-allocated 0 · normal 1 · high 2_"
    ) in text
    # Per pod: mean utilisation of the GPUs it sees, memory used of what HAMi allocated
    # (from the scheduler's metrics), efficiency = used / allocated, class.
    assert row("team-b/embed-svc-0", "2.0%", "300 MiB/8.0 GiB", "3.7%", "idle").search(text)
    assert row("ml-batch/ddp-worker-0", "50.0%", "8.8/15.0 GiB", "58.6%", "normal").search(text)
    assert row("team-a/llm-infer-0", "41.0%", "8.8/10.0 GiB", "87.9%", "high").search(text)
    assert row("team-a/train-full-0", "97.0%", "38.1/40.0 GiB", "95.2%", "high").search(text)
    # The most actionable pods come first.
    table = text[text.index("*Real usage") :]
    assert (
        table.index("team-b/embed-svc-0")
        < table.index("ml-batch/ddp-worker-0")
        < (table.index("team-a/train-full-0"))
    )
    assert (
        "*Could not read 1 pod, by cause:*\n• *nvidia-smi unavailable (1)*: "
        "team-b/notebook-0 — notebook: nvidia-smi not found in the image"
    ) in text
    assert "Real usage: 4 pods read by nvidia-smi, 1 could not be read." in answer.text
    # nvidia-smi really ran in the pods, in the application container, not the sidecar.
    execs = {(e.pod, e.container) for e in lab.cluster.execs}
    assert ("llm-infer-0", "server") in execs and ("llm-infer-0", "istio-proxy") not in execs
    # Refresh keeps asking for real usage.
    buttons = next(b for b in answer.blocks if b["type"] == "actions")["elements"]
    assert json.loads(buttons[0]["value"])["us"] == 1


def test_usage_and_allocation_only_collections_are_cached_apart(lab: Lab) -> None:
    api = lab.bot.api
    lab.bot.sender.command("lab", response_url=api.response_url("plain"))
    allocation = final_message(api, has("cores"))
    assert USAGE_SECTION not in blocks_text(allocation.blocks)
    assert lab.cluster.execs == [] and lab.scheduler_scrapes() == 1
    # A cached allocation-only scrape never answers a usage request...
    lab.bot.sender.command("lab usage", response_url=api.response_url("usage"))
    final_message(api, has(USAGE_SECTION))
    execs = len(lab.cluster.execs)
    assert execs >= 5 and lab.scheduler_scrapes() == 2
    # ...and each is then answered from its own cache entry.
    lab.bot.sender.command("lab usage ns=team-a", response_url=api.response_url("usage2"))
    filtered = final_message(api, has("filter `namespace=team-a`"))
    assert USAGE_SECTION in blocks_text(filtered.blocks)
    lab.bot.sender.command("lab ns=team-b", response_url=api.response_url("plain2"))
    plain = final_message(api, has("filter `namespace=team-b`"))
    assert USAGE_SECTION not in blocks_text(plain.blocks)
    assert len(lab.cluster.execs) == execs and lab.scheduler_scrapes() == 2


def test_usage_in_a_cluster_thread_reports_blocked_exec_and_gone_pods(lab: Lab) -> None:
    api = lab.bot.api
    lab.bot.sender.command("lab", response_url=api.response_url("lab"))
    summary = final_message(api, has("cores"))
    # Meanwhile RBAC takes exec away and one pod is deleted; the scheduler still lists it.
    lab.cluster.forbid("create", "pods/exec")
    lab.cluster.pods = [p for p in lab.cluster.pods if p.name != "llm-infer-0"]
    lab.bot.sender.mention("usage", thread_ts=summary.ts)
    answer = final_message(api, has(USAGE_SECTION), thread_ts=summary.ts)
    text = blocks_text(answer.blocks)
    assert_valid(answer.blocks)
    assert "cluster *lab*" in text
    assert "*Real usage (nvidia-smi, point in time)*  _0 pods read of 5_" in text
    assert "*Could not read 5 pods, by cause:*" in text
    # One pod named per cause, then a count; one detail stands for the group.
    assert (
        "• *exec blocked by policy (4)*: ml-batch/ddp-worker-0 and 3 more — e.g. RBAC "
        "refused `create pods/exec` in "
        'namespace "ml-batch"; nvidia-smi needs a Role in namespace "ml-batch" with the rule '
        '{apiGroups: [""], resources: ["pods/exec"], verbs: ["create"]}'
    ) in text
    assert (
        "• *pod gone (1)*: team-a/llm-infer-0 — the pod no longer exists; the scheduler's "
        "allocation for it is stale"
    ) in text
    assert lab.cluster.execs == []  # every exec was refused by the API server
    assert "test-token" not in json.dumps(answer.blocks)


def test_usage_is_refused_where_the_registry_does_not_allow_it(lab: Lab) -> None:
    api = lab.bot.api
    response = lab.bot.sender.command("plain usage", response_url=api.response_url("no"))
    assert response.elapsed_seconds < ACK_LIMIT_SECONDS
    body = response.json()
    assert body["response_type"] == "ephemeral"
    text = blocks_text(body["blocks"])
    line = REGISTRY.splitlines().index("  - name: plain") + 1
    assert (
        f'nvidia-smi exec is not enabled for cluster "plain". An admin can set '
        f"nvidia_smi_allowed: true for it in the cluster registry "
        f"({lab.registry_file}:{line})"
    ) in text
    assert "Ask without `usage`" in text
    # Refused before anything was collected or posted.
    time.sleep(0.3)
    assert api.calls_to("chat.postMessage") == []
    assert lab.kube.requests == [] and lab.cluster.execs == []
    # The clusters list says where real usage may be asked for.
    listing = blocks_text(
        lab.bot.sender.command("clusters", response_url=api.response_url("c")).json()["blocks"]
    )
    assert "*lab* (GPU lab) — contexts: `lab` · real usage (`usage`) allowed" in listing
    assert "*plain* — contexts: `lab`\n" in listing


def test_picker_offers_real_usage_only_where_allowed(lab: Lab) -> None:
    api = lab.bot.api
    base: dict[str, Any] = {
        "type": "block_actions",
        "user": {"id": USER, "username": "alice"},
        "channel": {"id": CHANNEL, "name": "gpu-team"},
        "container": {
            "type": "message",
            "message_ts": "1710000000.000001",
            "is_ephemeral": True,
            "channel_id": CHANNEL,
        },
        "response_url": api.response_url("picker"),
    }

    def choose(cluster: str, stamp: str) -> list[dict[str, Any]]:
        before = len(api.response_posts.get("picker", []))
        lab.bot.sender.interaction(
            {
                **base,
                "actions": [
                    {
                        "type": "static_select",
                        "action_id": "picker_cluster",
                        "block_id": "picker_cluster",
                        "selected_option": {"value": cluster},
                        "action_ts": stamp,
                    }
                ],
            }
        )
        api.wait_for("response_url", before + 1)
        blocks: list[dict[str, Any]] = api.response_posts["picker"][-1]["blocks"]
        return blocks

    plain = choose("plain", "1710000001.1")
    assert not any(b.get("block_id") == "picker_usage" for b in plain)
    offered = choose("lab", "1710000002.1")
    assert_valid(offered)
    usage_box = next(b for b in offered if b.get("block_id") == "picker_usage")
    assert usage_box["type"] == "input" and usage_box["element"]["type"] == "checkboxes"
    assert lab.cluster.execs == [] and lab.kube.requests == []  # nothing before Confirm
    state = {
        "values": {
            "picker_cluster": {
                "picker_cluster": {"type": "static_select", "selected_option": {"value": "lab"}}
            },
            "picker_usage": {
                "picker_usage": {
                    "type": "checkboxes",
                    "selected_options": [
                        {"value": "usage", "text": {"type": "plain_text", "text": "Real usage"}}
                    ],
                }
            },
        }
    }
    lab.bot.sender.interaction(
        {
            **base,
            "state": state,
            "actions": [
                {
                    "type": "button",
                    "action_id": "picker_confirm",
                    "block_id": "picker_actions",
                    "value": "confirm",
                    "action_ts": "1710000003.1",
                }
            ],
        }
    )
    answer = final_message(api, has(USAGE_SECTION))
    assert "4 pods read of 5" in blocks_text(answer.blocks)


def button_labels(message: StoredMessage) -> list[str]:
    actions = next(b for b in message.blocks if b["type"] == "actions")
    return [element["text"]["text"] for element in actions["elements"]]


def button_value(message: StoredMessage) -> dict[str, Any]:
    actions = next(b for b in message.blocks if b["type"] == "actions")
    value: dict[str, Any] = json.loads(actions["elements"][0]["value"])
    return value


def press(
    lab: Lab,
    message: StoredMessage,
    action_id: str,
    *,
    name: str = "buttons",
    trigger_id: str | None = None,
) -> dict[str, Any]:
    """Press a button under ``message`` (as Slack sends it); the payload, to send it again."""
    actions = next(b for b in message.blocks if b["type"] == "actions")
    value = actions["elements"][0]["value"]
    payload: dict[str, Any] = {
        "type": "block_actions",
        "user": {"id": USER, "username": "alice"},
        "channel": {"id": CHANNEL, "name": "gpu-team"},
        "container": {
            "type": "message",
            "message_ts": message.ts,
            "channel_id": CHANNEL,
            "is_ephemeral": False,
        },
        "message": {
            "ts": message.ts,
            "text": message.text,
            "blocks": message.blocks,
            **({"thread_ts": message.thread_ts} if message.thread_ts else {}),
        },
        "response_url": lab.bot.api.response_url(name),
        "actions": [
            {
                "type": "button",
                "action_id": action_id,
                "block_id": "summary_actions",
                "value": value,
                "action_ts": f"{time.time():.6f}",
            }
        ],
    }
    if trigger_id is not None:
        payload["trigger_id"] = trigger_id
    response = lab.bot.sender.interaction(payload)
    assert response.status == 200 and response.elapsed_seconds < ACK_LIMIT_SECONDS
    return payload


def updated_in_place(api: SlackWebApi, ts: str, text: str, timeout: float = 30.0) -> StoredMessage:
    """The message at ``ts`` once an update put ``text`` in it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        message = api.message(CHANNEL, ts)
        if text in blocks_text(message.blocks):
            return message
        time.sleep(0.02)
    raise AssertionError(f"message {ts} never showed {text!r}")


def test_follow_ups_in_a_real_usage_thread_keep_it_from_the_same_reading(lab: Lab) -> None:
    api = lab.bot.api
    lab.bot.sender.command("lab usage", response_url=api.response_url("usage"))
    root = final_message(api, has(USAGE_SECTION))
    # A real-usage summary offers no Real usage button: it has it already.
    assert button_labels(root) == ["Refresh", "GPUs", "Workloads", "CSV"]
    execs, scrapes = len(lab.cluster.execs), lab.scheduler_scrapes()
    assert execs == 5 and scrapes == 1

    lab.bot.sender.mention("ns team-a", thread_ts=root.ts)
    filtered = final_message(api, has("filter `namespace=team-a`"), thread_ts=root.ts)
    text = blocks_text(filtered.blocks)
    assert_valid(filtered.blocks)
    assert filtered.blocks[0]["text"]["text"] == (
        "HAMi GPU allocation and real usage: lab, namespace team-a"
    )
    # The filter narrows real usage to the namespace's pods (two of the five read).
    assert "*Real usage (nvidia-smi, point in time)*  _2 pods read of 2" in text
    assert row("team-a/llm-infer-0", "41.0%", "8.8/10.0 GiB", "87.9%", "high").search(text)
    assert "team-b/embed-svc-0" not in text
    assert button_value(filtered)["us"] == 1 and button_value(filtered)["ns"] == "team-a"

    lab.bot.sender.mention("node gpu-node-1", thread_ts=root.ts)
    on_node = final_message(api, has("filter `node=gpu-node-1`"), thread_ts=root.ts)
    assert USAGE_SECTION in blocks_text(on_node.blocks)

    # `all` forgets the thread's filter: what follows is the whole cluster again.
    lab.bot.sender.mention("all", thread_ts=root.ts)

    def unfiltered(message: StoredMessage) -> bool:
        text = blocks_text(message.blocks)
        return USAGE_SECTION in text and "filter `" not in text

    final_message(api, unfiltered, thread_ts=root.ts)
    lab.bot.sender.mention("gpus", thread_ts=root.ts)
    gpus = blocks_text(final_message(api, has("All 6 GPUs"), thread_ts=root.ts).blocks)
    assert "with real usage per pod" in gpus
    assert re.search(r"team-b/embed-svc-0\s+2\.0%\s+300 MiB/8\.0 GiB", gpus)

    lab.bot.sender.mention("workloads", thread_ts=root.ts)
    workloads = blocks_text(
        final_message(api, has("workload allocations"), thread_ts=root.ts).blocks
    )
    assert "with real usage per pod" in workloads
    assert re.search(r"team-a/train-full-0\s+97\.0%", workloads)

    lab.bot.sender.mention("csv", thread_ts=root.ts)
    csv_answer = blocks_text(final_message(api, has("Full tables of"), thread_ts=root.ts).blocks)
    assert (
        "Real usage (nvidia-smi, point in time): 4 of 5 pods read · idle 1 · "
        "low / over-allocated 0 · normal 1 · high 2"
    ) in csv_answer
    api.wait_for(
        "files.completeUploadExternal",
        where=lambda c: "workloads, real usage" in json.dumps(c.json_param("files")),
    )
    tables = next(f for f in api.uploaded_files() if f.filename == "hami-summary-tables.txt")
    assert tables.thread_ts == root.ts and tables.content is not None
    assert b"Real usage (nvidia-smi, point in time)" in tables.content
    assert b"nvidia-smi unavailable" in tables.content

    lab.bot.sender.mention("chart", thread_ts=root.ts)
    chart = blocks_text(final_message(api, has("Chart: who holds"), thread_ts=root.ts).blocks)
    assert "Real usage (nvidia-smi, point in time): 4 of 5 pods read" in chart

    lab.bot.sender.mention("thanks!", thread_ts=root.ts)
    words = blocks_text(final_message(api, has("Not a follow-up I know"), thread_ts=root.ts).blocks)
    assert (
        "This thread has the live summary of cluster *lab* (context `lab`) with real usage "
        "(nvidia-smi)"
    ) in words
    assert "`refresh` — scrape the cluster and run nvidia-smi in its pods again now" in words

    # Every follow-up was answered from the one cached collection: no exec, no scrape.
    assert len(lab.cluster.execs) == execs and lab.scheduler_scrapes() == scrapes

    # Refresh reads again, and keeps the real usage.
    press(lab, root, "summary_refresh")
    api.wait_for(
        "chat.update",
        where=lambda c: (
            c.params.get("ts") == root.ts and "Refreshing" not in str(c.params.get("blocks"))
        ),
        count=2,
    )
    refreshed = updated_in_place(api, root.ts, USAGE_SECTION)
    assert refreshed.updates >= 3
    assert len(lab.cluster.execs) == 2 * execs and lab.scheduler_scrapes() == scrapes + 1


def test_real_usage_button_replaces_the_summary_in_place_once(lab: Lab) -> None:
    api = lab.bot.api
    lab.bot.sender.command("lab ns=team-a", response_url=api.response_url("lab"))
    summary = final_message(api, has("filter `namespace=team-a`"))
    assert USAGE_SECTION not in blocks_text(summary.blocks)
    assert button_labels(summary) == ["Refresh", "GPUs", "Workloads", "CSV", "Real usage"]
    assert lab.cluster.execs == []

    payload = press(lab, summary, "summary_usage", trigger_id="trigger.usage.1")
    # The same delivery again (same trigger): acknowledged, not answered a second time.
    again = lab.bot.sender.interaction(payload)
    assert again.status == 200 and again.elapsed_seconds < ACK_LIMIT_SECONDS
    answer = updated_in_place(api, summary.ts, USAGE_SECTION)
    text = blocks_text(answer.blocks)
    assert_valid(answer.blocks)
    assert answer.blocks[0]["text"]["text"] == (
        "HAMi GPU allocation and real usage: lab, namespace team-a"
    )
    assert "filter `namespace=team-a`" in text  # the same filters, now with real usage
    assert row("team-a/train-full-0", "97.0%", "38.1/40.0 GiB", "95.2%", "high").search(text)
    assert button_labels(answer) == ["Refresh", "GPUs", "Workloads", "CSV"]
    assert button_value(answer) == {"cl": "lab", "cx": "lab", "us": 1, "ns": "team-a"}
    # In place: still one message in the channel, nvidia-smi run once per pod.
    assert [m.ts for m in api.messages.values() if m.thread_ts is None] == [summary.ts]
    time.sleep(0.3)
    assert len(lab.cluster.execs) == 5
    notes = [
        c
        for c in api.calls_to("chat.update")
        if c.params.get("ts") == summary.ts
        and "Running nvidia-smi in the pods" in str(c.params.get("blocks"))
    ]
    assert len(notes) == 1

    # The thread now remembers real usage: a follow-up keeps it, from the same reading.
    lab.bot.sender.mention("ns team-b", thread_ts=summary.ts)
    follow_up = final_message(api, has("filter `namespace=team-b`"), thread_ts=summary.ts)
    assert row("team-b/embed-svc-0", "2.0%", "300 MiB/8.0 GiB", "3.7%", "idle").search(
        blocks_text(follow_up.blocks)
    )
    assert len(lab.cluster.execs) == 5


def test_clusters_that_do_not_allow_real_usage_show_no_button(lab: Lab) -> None:
    api = lab.bot.api
    lab.bot.sender.command("plain", response_url=api.response_url("plain"))
    summary = final_message(api, has("cores"))
    assert button_labels(summary) == ["Refresh", "GPUs", "Workloads", "CSV"]
    lab.bot.sender.mention("ns team-a", thread_ts=summary.ts)
    follow_up = final_message(api, has("filter `namespace=team-a`"), thread_ts=summary.ts)
    assert button_labels(follow_up) == ["Refresh", "GPUs", "Workloads", "CSV"]
    # A press that reaches the bot anyway (an old message, a crafted payload) is refused to
    # the presser alone; the summary stays as it was and nothing is run in the pods.
    before = api.message(CHANNEL, summary.ts).blocks
    press(lab, summary, "summary_usage")
    refusal = api.wait_for("chat.postEphemeral")[0]
    assert refusal.params["user"] == USER
    assert 'nvidia-smi exec is not enabled for cluster "plain"' in blocks_text(
        refusal.json_param("blocks")
    )
    api.wait_for("chat.update", where=lambda c: c.params.get("ts") == summary.ts, count=3)
    assert api.message(CHANNEL, summary.ts).blocks == before
    assert lab.cluster.execs == []
