"""The pieces of ``bot.ops.instrument`` that need no bot; the bot's own requests are measured
end to end in ``tests/slack/test_request_metrics_e2e.py``."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from bot.ops.instrument import RequestObservation, answers_later, outcome_of, surface_of
from bot.ops.metrics import OpsMetrics


@pytest.mark.parametrize(
    ("body", "surface"),
    [
        ({"command": "/hami-summary"}, "command"),
        ({"type": "event_callback", "event": {"type": "app_mention"}}, "event:app_mention"),
        ({"type": "event_callback", "event": {"type": "message"}}, "event:message"),
        ({"type": "event_callback", "event": {"type": "reaction_added"}}, "event:other"),
        ({"type": "block_actions"}, "action"),
        ({"type": "message_action"}, "message_shortcut"),
        ({"type": "view_submission"}, "view"),
        ({"type": "url_verification"}, "url_verification"),
        ({"type": "made-up"}, "other"),
        ({}, "other"),
    ],
)
def test_surfaces_are_a_bounded_set(body: dict[str, Any], surface: str) -> None:
    assert surface_of(body) == surface


@pytest.mark.parametrize(
    ("status", "outcome"),
    [(200, "ok"), (401, "unauthorized"), (404, "unhandled"), (500, "error"), (400, "http_400")],
)
def test_outcomes_are_named_by_status(status: int, outcome: str) -> None:
    assert outcome_of(status) == outcome


def test_a_request_records_one_reply_and_survives_bolts_copy() -> None:
    metrics = OpsMetrics()
    observation = RequestObservation("command", metrics)
    # Bolt deep-copies the context for each lazy listener; they must all share the original.
    assert copy.deepcopy({"observation": observation})["observation"] is observation
    assert observation.record_reply() is not None
    assert observation.record_reply() is None
    assert metrics.value("hami_summary_reply_latency_seconds_count", {"surface": "command"}) == 1


def test_a_lazy_listener_without_context_cannot_be_timed() -> None:
    def reply(body: dict[str, Any]) -> None:
        pass

    with pytest.raises(TypeError, match="reply must take a 'context' argument"):
        answers_later(reply)
