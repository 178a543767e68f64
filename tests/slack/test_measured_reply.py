"""Runtime and real-usage replies stay near one screen at fleet size: the first screen in the
message, every row left out in the files that go with it.

Measurements come from the vGPU monitor text written for a simulated cluster's allocations
and from nvidia-smi readings made up for each of its pods (some pods unreadable, for three
causes), with and without a filter.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from bot.conversation.replies import SummaryRef, SummaryReply
from bot.slack.messages import slack_message
from core.api import summarize_text
from core.model import ExecFailure, GpuReading, PodExecResult, SourceInfo, Summary
from core.simulate import simulate_exposition
from tests.slack.test_blocks import assert_valid, monitor_exposition
from tests.support.block_measure import code_blocks, rendered_lines

# Near one screen: the first reply's 45 lines, and a few for what was measured.
MAX_LINES = 50
CODE_BLOCK_WIDTH = 72
CAUSES: tuple[ExecFailure, ...] = ("nvidia-smi unavailable", "exec blocked by policy", "pod gone")

SIZES = [
    pytest.param(60, id="480-gpus"),
    pytest.param(1000, id="8000-gpus", marks=pytest.mark.slow),
]


@pytest.fixture(scope="module", params=SIZES)
def scheduler(request: pytest.FixtureRequest) -> tuple[str, Summary]:
    text = simulate_exposition(request.param, 8, seed=0)
    return text, summarize_text(text, SourceInfo("paste", "p"))


def readings(allocation: Summary) -> list[PodExecResult]:
    """An nvidia-smi reading for every pod; one in thirteen could not be read."""
    rng = random.Random(1)
    pods = sorted({(w.namespace, w.pod) for w in allocation.workloads})
    results = []
    for number, (namespace, pod) in enumerate(pods):
        if number % 13 == 0:
            cause = CAUSES[number % len(CAUSES)]
            results.append(PodExecResult(namespace, pod, None, (), failure=cause, detail="why"))
        else:
            reading = GpuReading(0, "GPU-x", rng.uniform(0, 100), rng.uniform(0, 20_000), 40_960.0)
            results.append(PodExecResult(namespace, pod, "main", (reading,)))
    return results


def message(summary: Summary, **filters: str) -> tuple[list[dict[str, Any]], list[str]]:
    built = slack_message(
        SummaryReply(summary, SummaryRef(channel="C", thread_ts="1.2", **filters), 3.0)
    )
    return built.blocks, [a.filename for a in built.attachments]


def filters_of(allocation: Summary) -> list[dict[str, str]]:
    return [{}, {"namespace": "team-a"}, {"node": allocation.nodes[3].node}]


def assert_near_one_screen(blocks: list[dict[str, Any]]) -> None:
    assert_valid(blocks)
    assert rendered_lines(blocks) <= MAX_LINES
    widths = [len(line) for block in code_blocks(blocks) for line in block]
    assert max(widths) <= CODE_BLOCK_WIDTH


def test_a_runtime_reply_is_near_one_screen_and_sends_the_rest(
    scheduler: tuple[str, Summary],
) -> None:
    text, allocation = scheduler
    with_monitor = text + "\n" + monitor_exposition(allocation)
    for filters in filters_of(allocation):
        summary = summarize_text(with_monitor, SourceInfo("cluster", "c", cluster="c"), **filters)
        blocks, files = message(summary, **filters)
        assert_near_one_screen(blocks)
        assert summary.runtime is not None
        if len(summary.runtime.containers) > 3:
            assert "hami-runtime.csv" in files, filters


def test_a_real_usage_reply_is_near_one_screen_and_sends_the_rest(
    scheduler: tuple[str, Summary],
) -> None:
    text, allocation = scheduler
    exec_results = readings(allocation)
    for filters in filters_of(allocation):
        summary = summarize_text(
            text, SourceInfo("cluster", "c", cluster="c"), real_usage=exec_results, **filters
        )
        blocks, files = message(summary, **filters)
        assert_near_one_screen(blocks)
        assert summary.real_usage is not None
        read = [u for u in summary.real_usage if u.failure is None]
        if len(read) > 6:
            assert "hami-summary-tables.txt" in files, filters
