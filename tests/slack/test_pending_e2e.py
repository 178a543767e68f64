"""Why pods are pending, in Slack end to end: signed requests to the real bot, the local Web
API, and a kubeconfig-registered cluster on the local Kubernetes API server serving pending
pods, their events and the scheduler's metrics (the cross-check's figures are computed here
from that metrics text). Pasted ``kubectl describe pod`` outputs of several shapes are
answered in channel threads, DMs and as attached files."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.clusters.registry import load_registry
from tests.conftest import read_fixture
from tests.kube.fake_apiserver import (
    FakeApiServer,
    FakeCluster,
    FakeContainer,
    FakeEvent,
    FakePod,
    hami_cluster,
)
from tests.slack.conftest import CHANNEL, MetricsServer, RunningBot, start_bot, stop_bot
from tests.slack.test_blocks import assert_valid
from tests.slack.test_http_e2e import answer_in, blocks_text, pasted, thread_reply
from tests.slack.test_real_usage_e2e import final_message, has
from tests.support.slack_api import SlackWebApi

REGISTRY = """\
clusters:
  - name: lab
    display_name: GPU lab
    kubeconfig: lab.kubeconfig
    context: lab
    allowed_channels: [{channel}, D0ALICE1]
{extra}  - name: demo
    metrics_url: {metrics_url}
    allowed_channels: [{channel}]
"""
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "pending"


def pending_pod(name: str, limits: dict[str, str], since: str, namespace: str = "ml") -> FakePod:
    return FakePod(
        namespace=namespace,
        name=name,
        containers=[FakeContainer("main", limits=limits)],
        node_name="",
        phase="Pending",
        scheduler_name="hami-scheduler",
        unschedulable_since=since,
    )


def lab_cluster() -> FakeCluster:
    found = hami_cluster()
    found.pods += [
        pending_pod(
            "trainer-0",
            {"nvidia.com/gpu": "2", "nvidia.com/gpumem": "30000"},
            "2026-08-21T06:00:00Z",
        ),
        pending_pod("infer-1", {"nvidia.com/gpu": "1"}, "2026-08-21T06:30:00Z"),
        pending_pod("cpu-only", {"cpu": "2"}, "2026-08-21T06:10:00Z"),
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
        ),
        FakeEvent(
            "ml", "infer-1", "FilteringFailed", "1 nodes CardTimeSlicingExhausted(gpu-node-1)"
        ),
    ]
    return found


@dataclass
class Lab:
    bot: RunningBot
    kube: FakeApiServer
    cluster: FakeCluster


def _start(
    slack_api: SlackWebApi,
    tmp_path: Path,
    cluster: FakeCluster,
    metrics_url: str,
    extra: str = "",
) -> Iterator[Lab]:
    with FakeApiServer(cluster) as kube:
        kube.write_kubeconfig(tmp_path / "lab.kubeconfig", context="lab")
        registry_file = tmp_path / "clusters.yaml"
        registry_file.write_text(
            REGISTRY.format(channel=CHANNEL, extra=extra, metrics_url=metrics_url)
        )
        running, server = start_bot(slack_api, load_registry(registry_file))
        try:
            yield Lab(running, kube, cluster)
        finally:
            stop_bot(running, server)


@pytest.fixture
def lab(slack_api: SlackWebApi, tmp_path: Path, metrics_server: MetricsServer) -> Iterator[Lab]:
    yield from _start(slack_api, tmp_path, lab_cluster(), metrics_server.url)


def free_mib_per_gpu(model: str = "") -> list[float]:
    """Free memory of each GPU of the fixture whose model holds ``model``, read from its text
    here (limit - allocated)."""
    text = read_fixture("scheduler-small.prom")

    def per_uuid(family: str) -> dict[str, tuple[str, float]]:
        pattern = rf'^{family}\{{[^}}]*device_type="([^"]+)",device_uuid="([^"]+)"[^}}]*\}} (\S+)$'
        found = re.findall(pattern, text, re.MULTILINE)
        return {uuid: (kind, float(value)) for kind, uuid, value in found}

    limits = per_uuid("hami_gpu_memory_limit_bytes")
    used = per_uuid("hami_gpu_memory_allocated_bytes")
    return [
        (limit - used.get(uuid, ("", 0.0))[1]) / (1024 * 1024)
        for uuid, (kind, limit) in limits.items()
        if model in kind
    ]


def memory_line(asked_mib: float, model: str = "") -> str:
    """The memory check's first line, from the fixture's free memory per GPU read here."""
    free = free_mib_per_gpu(model)
    taking = sum(1 for value in free if value >= asked_mib)
    return (
        f"Asked {asked_mib / 1024:,.1f} GiB per GPU; the most free on one GPU now is "
        f"{max(free) / 1024:,.1f} GiB ({taking} of {len(free)} allowed GPUs would take it)."
    )


def private_answer(api: SlackWebApi, name: str) -> str:
    """What only the asker saw (posted to the command's ``response_url`` named ``name``)."""
    api.wait_for("response_url", where=lambda call: call.path.endswith(f"/{name}"))
    return "\n".join(blocks_text(payload.get("blocks", [])) for payload in api.response_posts[name])


def test_pending_lists_by_reason_and_why_follows_in_its_thread(lab: Lab) -> None:
    api = lab.bot.api
    response = lab.bot.sender.command("lab pending", response_url=api.response_url("p"))
    assert response.status == 200
    answer = final_message(api, has("pending on HAMi"))
    assert_valid(answer.blocks)
    text = blocks_text(answer.blocks)
    assert "2 pods pending on HAMi's resources in cluster lab, by reason:" in text
    assert "- CardInsufficientMemory: 1 (not enough free GPU memory" in text
    assert "- CardTimeSlicingExhausted: 1" in text
    assert text.index("ml/trainer-0") < text.index("ml/infer-1")  # longest waiting first
    assert "cpu-only" not in text
    # ``why`` in the thread asks the same cluster, checked against the metrics served beside.
    lab.bot.sender.mention("why trainer-0", thread_ts=answer.ts)
    story = thread_reply(api, answer.ts, "Why is ml/trainer-0 pending?")
    assert "CardInsufficientMemory on 2 nodes: gpu-node-1, gpu-node-2" in story
    assert "not enough free GPU memory on the GPU for the memory asked per GPU" in story
    assert memory_line(30_000) in story
    # ``pending`` in the same thread is the list again.
    lab.bot.sender.mention("pending", thread_ts=answer.ts)
    assert "ml/infer-1" in thread_reply(api, answer.ts, "2 pods pending")


def test_why_command_checks_time_slicing_against_the_shared_counts(lab: Lab) -> None:
    api = lab.bot.api
    lab.bot.sender.command("lab why ml/infer-1", response_url=api.response_url("w"))
    answer = final_message(api, has("Why is ml/infer-1 pending?"))
    assert_valid(answer.blocks)
    text = blocks_text(answer.blocks)
    assert "CardTimeSlicingExhausted on 1 node: gpu-node-1" in text
    assert "the GPU already runs as many tasks as it may share" in text
    shared = [
        int(float(value))
        for value in re.findall(
            r"^hami_gpu_shared_count\{[^}]*\} (\S+)$",
            read_fixture("scheduler-small.prom"),
            re.MULTILINE,
        )
    ]
    full = sum(1 for count in shared if count >= 10)
    assert (
        f"{full} of {len(shared)} allowed GPUs are at 10 tasks (HAMi's default "
        f"deviceSplitCount 10, not in the metrics); {len(shared) - full} have a slot." in text
    )


def test_a_channel_that_may_not_query_the_cluster_sees_nothing_of_its_pods(lab: Lab) -> None:
    api = lab.bot.api
    body = lab.bot.sender.command(
        "lab why ml/trainer-0", response_url=api.response_url("x"), channel="C0OTHER99"
    ).json()
    assert body["response_type"] == "ephemeral"
    assert "'lab' is not a cluster you may query here" in blocks_text(body["blocks"])
    assert not [r for r in lab.kube.requests if "/pods" in r.path and "trainer" in r.path]
    assert api.calls_to("chat.postMessage") == []


def test_a_metrics_url_cluster_has_no_pods_to_list(lab: Lab) -> None:
    api = lab.bot.api
    lab.bot.sender.command("demo pending", response_url=api.response_url("d"))
    text = private_answer(api, "d")
    assert 'Cluster "demo" is read through a metrics URL' in text
    assert "no Kubernetes API to ask for its pods" in text and "kubectl describe pod" in text


def test_refused_events_are_named_never_a_trace(lab: Lab) -> None:
    lab.cluster.forbid("list", "events")
    api = lab.bot.api
    lab.bot.sender.command("lab pending", response_url=api.response_url("f"))
    text = private_answer(api, "f")
    assert "events" in text
    assert "403" in text or "forbidden" in text.lower()
    assert "Traceback" not in text and "internal error" not in text


@pytest.fixture
def bounded_lab(
    slack_api: SlackWebApi, tmp_path: Path, metrics_server: MetricsServer
) -> Iterator[Lab]:
    cluster = lab_cluster()
    cluster.pods.append(
        pending_pod("other", {"nvidia.com/gpu": "1"}, "2026-08-21T06:20:00Z", namespace="team-x")
    )
    yield from _start(
        slack_api, tmp_path, cluster, metrics_server.url, extra="    pod_namespaces: [team-x]\n"
    )


def test_pod_namespaces_bound_what_is_read(bounded_lab: Lab) -> None:
    api = bounded_lab.bot.api
    bounded_lab.bot.sender.command("lab why ml/trainer-0", response_url=api.response_url("b"))
    refused = private_answer(api, "b")
    assert 'Namespace "ml" is not one the registry lets me read pods in' in refused
    bounded_lab.bot.sender.command("lab pending", response_url=api.response_url("c"))
    listed = final_message(api, has("1 pod pending"))
    assert "team-x/other" in blocks_text(listed.blocks)
    paths = {r.path for r in bounded_lab.kube.requests if r.path.endswith(("/pods", "/events"))}
    assert paths == {"/api/v1/namespaces/team-x/pods", "/api/v1/namespaces/team-x/events"}


@pytest.fixture
def crowded_lab(
    slack_api: SlackWebApi, tmp_path: Path, metrics_server: MetricsServer
) -> Iterator[Lab]:
    cluster = hami_cluster()
    for index in range(40):
        cluster.pods.append(
            pending_pod(
                f"batch-{index:02d}",
                {"nvidia.com/gpu": "1", "nvidia.com/gpucores": "60"},
                f"2026-08-21T05:{index:02d}:00Z",
            )
        )
        cluster.events.append(
            FakeEvent(
                "ml",
                f"batch-{index:02d}",
                "FilteringFailed",
                "2 nodes CardInsufficientCore(gpu-node-1,gpu-node-2)",
            )
        )
    yield from _start(slack_api, tmp_path, cluster, metrics_server.url)


def test_many_pending_pods_fit_one_screen_and_every_one_is_in_the_file(crowded_lab: Lab) -> None:
    api = crowded_lab.bot.api
    crowded_lab.bot.sender.command("lab pending ns=ml", response_url=api.response_url("m"))
    answer = final_message(api, has("40 pods pending"))
    assert_valid(answer.blocks)
    text = blocks_text(answer.blocks)
    assert "40 pods pending on HAMi's resources in cluster lab, namespace ml" in text
    assert "Longest waiting (10 of 40):" in text
    assert "ml/batch-00" in text and "ml/batch-10" not in text
    assert "… and 30 more: every pod is in `hami-pending.txt` below." in text
    api.wait_for("files.completeUploadExternal")
    (listing,) = [f for f in api.uploaded_files() if f.filename == "hami-pending.txt"]
    assert listing.content is not None
    content = listing.content.decode()
    assert all(f"ml/batch-{index:02d}" in content for index in range(40))


# -- pasted describe output -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fixture", "says"),
    [
        ("describe-reason-codes.txt", "CardInsufficientMemory on 2 nodes: gpu-node-1, gpu-node-2"),
        ("describe-older-scheduler.txt", "HAMi: no node fits (seen 14 times)"),
        ("describe-default-scheduler.txt", "handled by default-scheduler, not hami-scheduler"),
        ("describe-two-containers.txt", "Request, init container warmup: 1 GPU"),
    ],
)
def test_a_pasted_describe_is_answered_without_cluster_access(
    bot: RunningBot, fixture: str, says: str
) -> None:
    _, ts = bot.sender.mention(pasted((FIXTURES / fixture).read_text()))
    answer = answer_in(bot.api, CHANNEL, ts)
    assert_valid(answer.blocks)
    text = blocks_text(answer.blocks)
    assert text.startswith("*Why is ")
    assert says in text
    assert "Not checked against the allocation: this thread has no metrics" in text
    assert "No HAMi scheduler" not in text


def test_a_describe_pasted_in_a_thread_with_metrics_is_checked_against_them(
    bot: RunningBot,
) -> None:
    _, root = bot.sender.mention(pasted(read_fixture("scheduler-small.prom")))
    answer_in(bot.api, CHANNEL, root)
    bot.sender.mention(pasted((FIXTURES / "describe-reason-codes.txt").read_text()), thread_ts=root)
    text = thread_reply(bot.api, root, "Why is ml-team/gpu-pod pending?")
    assert "Checked against the allocation now (pasted metrics):" in text
    # The pod asks for A100s (nvidia.com/use-gputype): only those are counted.
    assert memory_line(20_000, model="A100") in text
    assert "CardInsufficientMemory (contradicts HAMi)" in text


def test_a_describe_in_a_dm_and_as_an_attached_file(bot: RunningBot) -> None:
    bot.sender.direct_message((FIXTURES / "describe-two-containers.txt").read_text())
    text = blocks_text(answer_in(bot.api, "D0ALICE1", None).blocks)
    assert "Why is serving/infer-7c9d pending?" in text
    assert "AllocatedCardsInsufficientRequest on 3 nodes" in text
    file = bot.api.add_private_file("trainer.txt", (FIXTURES / "get-events.txt").read_bytes())
    _, ts = bot.sender.mention("", files=[file])
    events = blocks_text(answer_in(bot.api, CHANNEL, ts).blocks)
    assert "CardTimeSlicingExhausted on 2 nodes: gpu-node-2, gpu-node-3" in events
    assert "CardInsufficientCore on 1 node: gpu-node-1" in events


def test_the_summary_and_the_fleet_view_say_pods_are_pending(lab: Lab) -> None:
    api = lab.bot.api
    lab.bot.sender.command("lab", response_url=api.response_url("s"))
    summary = final_message(api, has("cores *45.8%* allocated"))
    text = blocks_text(summary.blocks)
    attention = text[text.index("*Needs attention*") :]
    assert re.search(
        r"\*2 pods pending on HAMi's resources\* \(longest wait [\d,.]+ h\): mention me with "
        r"`pending` in this thread for HAMi's reasons",
        attention,
    )
    assert "Nothing found" not in attention
    # The count came with the scrape: one pod list, no event list.
    assert [r.path for r in lab.kube.requests if r.path.endswith("/events")] == []
    lab.bot.sender.command("fleet", response_url=api.response_url("fl"))
    fleet = final_message(api, has("Fleet"))
    assert "2 pods pending on HAMi's resources" in blocks_text(fleet.blocks)
    assert "`/hami-summary lab pending` gives the reasons" in blocks_text(fleet.blocks)


def test_a_hostile_pasted_describe_is_escaped_and_a_truncated_one_answered(
    bot: RunningBot,
) -> None:
    hostile = (FIXTURES / "describe-reason-codes.txt").read_text()
    hostile = hostile.replace("gpu-pod", "<!channel> *boom* <https://evil.example|x>", 1)
    _, ts = bot.sender.mention(pasted(hostile))
    answer = answer_in(bot.api, CHANNEL, ts)
    assert_valid(answer.blocks)
    text = blocks_text(answer.blocks)
    assert "<!channel>" not in text and "<https://evil" not in text
    assert "&lt;!channel&gt;" in text
    # Cut before its events: the request is read, and the missing events are said.
    cut = (FIXTURES / "describe-two-containers.txt").read_text().split("Events:")[0]
    _, ts = bot.sender.mention(pasted(cut + "Events:  <none>\n"))
    shown = blocks_text(answer_in(bot.api, CHANNEL, ts).blocks)
    assert "Request, container server: 4 GPUs" in shown
    assert "Traceback" not in shown and "internal error" not in shown
