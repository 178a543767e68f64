"""Signed bodies of a shape Slack never sends: a JSON 500 naming an error id, the traceback
under that id in the log, nothing posted (signed requests to the running bot)."""

from __future__ import annotations

import json
import logging

import pytest

from bot.slack.app import drain
from tests.slack.conftest import RunningBot


@pytest.mark.parametrize("event", [[1, 2], "text"], ids=["list", "string"])
def test_an_event_that_is_not_an_object_is_a_json_500_with_an_error_id(
    bot: RunningBot, caplog: pytest.LogCaptureFixture, event: object
) -> None:
    caplog.set_level(logging.ERROR, logger="hami_summary.slack")
    body = {"type": "event_callback", "team_id": "T0TEST", "event_id": "Ev0BAD", "event": event}
    response = bot.sender.post(json.dumps(body), "application/json")
    assert response.status == 500
    answer = response.json()
    assert answer["error"] == "internal error" and len(answer["error_id"]) == 8
    logged = [r for r in caplog.records if answer["error_id"] in r.getMessage()]
    assert len(logged) == 1 and logged[0].exc_info is not None
    assert logged[0].getMessage().startswith(f"internal error {answer['error_id']} in a listener")
    assert drain(bot.slack.app, timeout_seconds=60)
    assert not [c for c in bot.api.calls if c.method.startswith(("chat.", "files."))]
