"""``why``: HAMi's reason codes read from the event formats its scheduler writes, in plain words,
and each checked against an allocation whose figures the test computes from its own inputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.api import summarize_text
from core.model import SourceInfo, Summary
from core.pending.describe import read_pod_text
from core.pending.reasons import REASON_CODES, reason_words
from core.pending.story import PodStory, pod_story
from core.views.why_view import why_document, why_text
from tests.core.exposition_builder import Scheduler

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "pending"

# The codes of HAMi's pkg/device/common/common.go (v2.10), as written there.
HAMI_CODES = (
    "CardTypeMismatch", "CardUuidMismatch", "CardTimeSlicingExhausted",
    "CardComputeUnitsExhausted", "CardInsufficientMemory", "CardInsufficientCore",
    "CardNotHealth", "CardCordoned", "NumaNotFit", "ExclusiveDeviceAllocateConflict",
    "CardNotFoundCustomFilterRule", "CardMigTopologyInfeasible", "NodeInsufficientDevice",
    "AllocatedCardsInsufficientRequest", "NodeUnfitPod", "ResourceQuotaNotFit", "ModeNotFit",
)  # fmt: skip


def describe(*events: str, limits: str = "", annotations: str = "<none>", ns: str = "ml") -> str:
    """A describe output as kubectl prints it, with ``events`` as FilteringFailed messages."""
    rows = "\n".join(
        f"  Warning  FilteringFailed  30s (x4 over 3m)  hami-scheduler  {message}"
        for message in events
    )
    limit_lines = limits or "      nvidia.com/gpu:  1"
    return (
        f"Name:         trainer-0\nNamespace:    {ns}\nNode:         <none>\n"
        f"Annotations:  {annotations}\nStatus:       Pending\nContainers:\n  main:\n"
        f"    Image:  cuda\n    Limits:\n{limit_lines}\nEvents:\n"
        "  Type     Reason           Age   From            Message\n"
        "  ----     ------           ----  ----            -------\n"
        f"{rows}\n"
    )


def hami_event(code: str, nodes: list[str]) -> str:
    # pkg/scheduler/score.go, recordFilteringFailures: "%d nodes %s(%s)"
    return f"{len(nodes)} nodes {code}({','.join(sorted(nodes))})"


def summary_of(scheduler: Scheduler) -> Summary:
    return summarize_text(scheduler.text(), SourceInfo(kind="file", label="test metrics"))


def story(text: str, scheduler: Scheduler | None = None) -> PodStory:
    summary = summary_of(scheduler) if scheduler is not None else None
    return pod_story(read_pod_text(text), summary, source="test metrics")


def gib(mib: float) -> str:
    return f"{mib / 1024:,.1f} GiB"


@pytest.mark.parametrize("code", HAMI_CODES)
def test_every_hami_reason_code_is_read_and_named_in_plain_words(code: str) -> None:
    told = story(describe(hami_event(code, ["node-b", "node-a"])))
    assert [(r.code, r.node_count, r.nodes) for r in told.reasons] == [
        (code, 2, ("node-a", "node-b"))
    ]
    assert code in REASON_CODES
    text = why_text(told)
    assert reason_words(code) in text
    assert "does not know" not in text


def test_an_unknown_code_is_shown_as_written_never_dropped() -> None:
    told = story(describe(hami_event("CardQuantumDecoherence", ["n1"])))
    text = why_text(told)
    assert "CardQuantumDecoherence on 1 node: n1" in text
    assert "a reason code this version does not know" in text


def test_each_reason_of_a_pod_is_one_event_and_all_are_kept() -> None:
    told = story((FIXTURES / "describe-reason-codes.txt").read_text())
    assert told.pod.ref == "ml-team/gpu-pod"
    assert [r.code for r in told.reasons] == ["CardInsufficientMemory", "CardTypeMismatch"]
    assert told.reached_hami
    assert [e.event.times_seen for e in told.events] == [1, 14, 14]
    request = told.requests[0]
    assert request.shape is not None
    assert (request.shape.gpus, request.shape.cores, request.shape.mem_mib) == (2, 30, 20_000)


def test_memory_short_checked_against_the_free_memory_now() -> None:
    metrics = Scheduler()
    allocated = {("node-a", 0): 30_000, ("node-a", 1): 28_000, ("node-b", 0): 5_000}
    for (node, index), mem in allocated.items():
        metrics.device(node, index, cores=20, mem_mib=mem, limit_mib=40_960)
    limits = (
        "      nvidia.com/gpu:  2\n      nvidia.com/gpumem:  20000\n      nvidia.com/gpucores:  30"
    )
    told = story(
        describe(hami_event("CardInsufficientMemory", ["node-a", "node-b"]), limits=limits),
        metrics,
    )
    free = {key: 40_960 - mem for key, mem in allocated.items()}
    largest = max(free.values())
    taking = sum(1 for value in free.values() if value >= 20_000)
    # Two GPUs on one node: only node-a has two, and its second-largest free memory bounds it.
    second_on_a = sorted((free[("node-a", 0)], free[("node-a", 1)]))[0]
    (finding,) = told.findings
    assert not finding.contradicts
    assert finding.lines[0] == (
        f"Asked {gib(20_000)} per GPU; the most free on one GPU now is {gib(largest)} "
        f"({taking} of 3 allowed GPUs would take it)."
    )
    assert finding.lines[1] == f"This shape fits now on 1 node at <= {gib(second_on_a)} per GPU."


def test_a_reason_the_figures_contradict_is_said_with_both_numbers() -> None:
    metrics = Scheduler()
    metrics.device("node-a", 0, cores=0, mem_mib=0, limit_mib=40_960)
    told = story(
        describe(
            hami_event("CardInsufficientMemory", ["node-a"]),
            limits="      nvidia.com/gpu:  1\n      nvidia.com/gpumem:  10000",
        ),
        metrics,
    )
    (finding,) = told.findings
    assert finding.contradicts
    assert (
        f"Asked {gib(10_000)} per GPU; the most free on one GPU now is {gib(40_960)}"
        in (finding.lines[0])
    )
    assert "fits on 1 node (first node-a)" in finding.lines[-1]
    assert "(contradicts HAMi)" in why_text(told)


def test_cores_short_checked_against_the_free_cores_now() -> None:
    metrics = Scheduler()
    cores = {("node-a", 0): 80, ("node-a", 1): 60, ("node-b", 0): 90}
    for (node, index), used in cores.items():
        metrics.device(node, index, cores=used, mem_mib=1_000)
    told = story(
        describe(
            hami_event("CardInsufficientCore", ["node-a", "node-b"]),
            limits="      nvidia.com/gpu:  1\n      nvidia.com/gpucores:  50\n"
            "      nvidia.com/gpumem:  1000",
        ),
        metrics,
    )
    (finding,) = told.findings
    largest_free = max(100 - used for used in cores.values())
    assert finding.lines[0] == (
        f"Asked 50 cores per GPU; the most free on one GPU now is {largest_free} "
        "(0 of 3 allowed GPUs would take it)."
    )
    assert finding.lines[1] == f"This shape fits now on 1 node at <= {largest_free} cores per GPU."


def test_quota_use_and_what_the_request_would_bring_it_to() -> None:
    metrics = Scheduler()
    metrics.device("node-a", 0, cores=0, mem_mib=0)
    metrics.quota("ml", "nvidia.com/gpumem", 30_000, limit=50_000)
    told = story(
        describe(
            hami_event("ResourceQuotaNotFit", ["node-a"]),
            limits="      nvidia.com/gpu:  2\n      nvidia.com/gpumem:  12000",
        ),
        metrics,
    )
    (finding,) = told.findings
    assert finding.lines == (
        f"nvidia.com/gpumem: 30,000 used of 50,000; this pod would bring it to "
        f"{30_000 + 2 * 12_000:,} (over)",
    )


def test_time_slicing_counts_the_gpus_at_their_task_limit() -> None:
    metrics = Scheduler()
    shared = [10, 10, 4]
    for index, count in enumerate(shared):
        metrics.device("node-a", index, cores=10, mem_mib=1_000, shared=count)
    told = story(describe(hami_event("CardTimeSlicingExhausted", ["node-a"])), metrics)
    (finding,) = told.findings
    at_limit = sum(1 for count in shared if count >= 10)
    assert finding.lines[0].startswith(f"{at_limit} of 3 allowed GPUs are at 10 tasks")
    assert f"; {3 - at_limit} have a slot." in finding.lines[0]


def test_too_few_gpus_on_one_node_names_the_most_on_any_node() -> None:
    metrics = Scheduler()
    for index in range(3):
        metrics.device("node-a", index, cores=0, mem_mib=0)
    metrics.device("node-b", 0, cores=0, mem_mib=0)
    told = story(
        describe(
            hami_event("NodeInsufficientDevice", ["node-a", "node-b"]),
            limits="      nvidia.com/gpu:  4",
        ),
        metrics,
    )
    (finding,) = told.findings
    assert finding.lines == (
        "Asked 4 GPUs on one node; most that would take one GPU of it now:",
        "  NVIDIA A100-PCIE-40GB: 3 on node-a",
    )


def test_model_mismatch_lists_the_models_present_against_the_annotation() -> None:
    metrics = Scheduler()
    metrics.device("node-a", 0, cores=0, mem_mib=0)
    told = story(
        describe(
            hami_event("CardTypeMismatch", ["node-a"]),
            annotations="nvidia.com/use-gputype: H100",
        ),
        metrics,
    )
    (finding,) = told.findings
    assert finding.lines == (
        "Models present: NVIDIA A100-PCIE-40GB.",
        "The pod asks for H100: no model present matches.",
    )


def test_older_scheduler_free_form_verdict() -> None:
    told = story((FIXTURES / "describe-older-scheduler.txt").read_text())
    assert told.reasons == ()
    assert told.reached_hami
    text = why_text(told)
    assert "HAMi: no node fits (seen 14 times): no available node, all node scores" in text


def test_pod_handled_by_the_default_scheduler_never_reached_hami() -> None:
    told = story((FIXTURES / "describe-default-scheduler.txt").read_text())
    assert not told.reached_hami
    assert "default-scheduler, not hami-scheduler" in why_text(told)


def test_several_containers_and_vendor_annotations() -> None:
    told = story((FIXTURES / "describe-two-containers.txt").read_text())
    assert [(r.container, r.init) for r in told.requests] == [("warmup", True), ("server", False)]
    server = told.requests[1].shape
    assert server is not None and (server.gpus, server.mem_percent) == (4, 50)
    assert told.pod.annotations["nvidia.com/use-gputype"] == "H100,A100"
    assert [r.code for r in told.reasons] == [
        "AllocatedCardsInsufficientRequest",
        "NodeInsufficientDevice",
    ]
    assert "HAMi: no node fits: no available node, 4 nodes do not meet" in why_text(told)


def test_kubectl_get_events_output() -> None:
    told = story((FIXTURES / "get-events.txt").read_text())
    assert [(r.code, r.node_count) for r in told.reasons] == [
        ("CardTimeSlicingExhausted", 2),
        ("CardInsufficientCore", 1),
    ]
    assert [e.event.times_seen for e in told.events] == [1, 1, 3]


def test_a_cut_paste_keeps_what_it_holds_and_says_the_list_was_cut() -> None:
    text = describe("4 nodes CardInsufficientMemory(gpu-1,gpu-2,gp")
    told = story(text)
    (reason,) = told.reasons
    assert (reason.node_count, reason.nodes, reason.nodes_cut_short) == (
        4,
        ("gpu-1", "gpu-2", "gp"),
        True,
    )
    assert "(node list cut short)" in why_text(told)


def test_no_events_at_all() -> None:
    text = describe().replace(
        "  Warning  FilteringFailed", "IGNORED"
    )  # an Events section with its header only
    told = story(text + "  <none>\n")
    assert told.events == ()
    assert "did not reach HAMi's scheduler" in why_text(told)


def test_hostile_names_are_shown_escaped() -> None:
    text = describe(hami_event("CardInsufficientMemory", ["node\x1b[31m-a"])).replace(
        "trainer-0", "evil\x07pod"
    )
    shown = why_text(story(text))
    assert "\x1b" not in shown and "\x07" not in shown
    assert "node\\x1b[31m-a" in shown


def test_json_document_names_every_reason() -> None:
    told = story((FIXTURES / "describe-reason-codes.txt").read_text())
    document = why_document(told)
    assert [r["code"] for r in document["reasons"]] == [
        "CardInsufficientMemory",
        "CardTypeMismatch",
    ]
    assert document["pod"] == {"namespace": "ml-team", "name": "gpu-pod", "status": "Pending"}
