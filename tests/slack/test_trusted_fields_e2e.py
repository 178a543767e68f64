"""Fields a signed payload carries but Slack does not vouch for: a summary button's stored
channel and thread must be where it was pressed, and an event without a user is nobody's
(signed requests in, the local Slack Web API recording every call out)."""

from __future__ import annotations

import json
from typing import Any

from bot.conversation.buttons import ELSEWHERE
from bot.slack.app import drain
from tests.conftest import read_fixture
from tests.slack.conftest import CHANNEL, USER, RunningBot
from tests.slack.test_http_e2e import answer_in, blocks_text, pasted
from tests.support.slack_api import BOT_USER_ID, StoredMessage

PRIVATE = "G0PRIVATE"


def press(
    bot: RunningBot,
    answer: StoredMessage,
    *,
    channel: str,
    thread_ts: str | None,
    action_id: str = "summary_workloads",
    value: str | None = None,
) -> str:
    """A signed block_actions payload for ``answer``'s button, as if pressed in ``channel``."""
    if value is None:
        actions = next(b for b in answer.blocks if b["type"] == "actions")["elements"]
        value = str(actions[0]["value"])
    message: dict[str, Any] = {"ts": answer.ts, "text": answer.text, "blocks": answer.blocks}
    container: dict[str, Any] = {
        "type": "message",
        "message_ts": answer.ts,
        "channel_id": channel,
        "is_ephemeral": False,
    }
    if thread_ts is not None:
        message["thread_ts"] = thread_ts
        container["thread_ts"] = thread_ts
    name = f"press-{bot.sender.next_id()}"
    bot.sender.interaction(
        {
            "type": "block_actions",
            "user": {"id": USER},
            "channel": {"id": channel},
            "container": container,
            "message": message,
            "response_url": bot.api.response_url(name),
            "actions": [
                {"type": "button", "action_id": action_id, "value": value, "action_ts": "9.1"}
            ],
        }
    )
    return name


def refusal(bot: RunningBot, name: str) -> str:
    posted = bot.api.wait_for("response_url", where=lambda c: name in c.path)[-1]
    assert posted.params["response_type"] == "ephemeral"
    return blocks_text(posted.params["blocks"])


def private_summary(bot: RunningBot) -> tuple[StoredMessage, str]:
    _, root = bot.sender.mention(pasted(read_fixture("scheduler-small.prom")), channel=PRIVATE)
    answer = answer_in(bot.api, PRIVATE, root)
    assert "train-full-0" not in json.dumps(answer.blocks)  # workloads only on request
    bot.api.wait_for("files.completeUploadExternal")  # the chart: the answer is complete
    return answer, root


def posts_and_updates(bot: RunningBot) -> list[str]:
    return [
        json.dumps(c.params)
        for c in bot.api.calls
        if c.method in ("chat.postMessage", "chat.update", "files.completeUploadExternal")
    ]


def test_a_button_pressed_in_another_channel_is_refused_and_posts_nothing(
    bot: RunningBot,
) -> None:
    answer, root = private_summary(bot)
    before = len(posts_and_updates(bot))
    name = press(bot, answer, channel=CHANNEL, thread_ts=root)
    assert ELSEWHERE in refusal(bot, name)
    assert drain(bot.slack.app, timeout_seconds=60)
    assert len(posts_and_updates(bot)) == before
    assert not any("train-full-0" in call for call in posts_and_updates(bot))


def test_a_button_pressed_in_another_thread_of_the_channel_is_refused(bot: RunningBot) -> None:
    answer, _ = private_summary(bot)
    before = len(posts_and_updates(bot))
    name = press(bot, answer, channel=PRIVATE, thread_ts="1710009999.000001")
    assert ELSEWHERE in refusal(bot, name)
    top = press(bot, answer, channel=PRIVATE, thread_ts=None, action_id="summary_csv")
    assert ELSEWHERE in refusal(bot, top)
    assert drain(bot.slack.app, timeout_seconds=60)
    assert len(posts_and_updates(bot)) == before


def test_a_button_pressed_under_its_own_summary_still_works(bot: RunningBot) -> None:
    answer, root = private_summary(bot)
    press(bot, answer, channel=PRIVATE, thread_ts=root)
    update = bot.api.wait_for(
        "chat.update", where=lambda c: "workload allocations" in str(c.params.get("text"))
    )[-1]
    assert update.params["channel"] == PRIVATE
    assert "train-full-0" in json.dumps(update.params)


def test_buttons_of_a_top_level_direct_message_summary_still_work(bot: RunningBot) -> None:
    bot.sender.direct_message(read_fixture("scheduler-small.prom"), channel="D0ALICE1")
    answer = answer_in(bot.api, "D0ALICE1", None)
    press(bot, answer, channel="D0ALICE1", thread_ts=None, action_id="summary_gpus")
    update = bot.api.wait_for(
        "chat.update", where=lambda c: "All 6 GPUs" in str(c.params.get("text"))
    )[-1]
    assert update.params["channel"] == "D0ALICE1"


def test_a_crafted_value_naming_a_private_thread_is_refused(bot: RunningBot) -> None:
    answer, root = private_summary(bot)
    crafted = json.dumps({"ch": PRIVATE, "th": root})
    # A message in the team channel whose button carries the private thread's value.
    decoy = StoredMessage(CHANNEL, "1710008888.000001", "decoy", answer.blocks, None)
    name = press(bot, decoy, channel=CHANNEL, thread_ts=None, value=crafted)
    assert ELSEWHERE in refusal(bot, name)
    assert drain(bot.slack.app, timeout_seconds=60)
    assert not any(CHANNEL in call and "train-full-0" in call for call in posts_and_updates(bot))


def test_events_without_a_user_are_ignored(bot: RunningBot) -> None:
    metrics = pasted(read_fixture("scheduler-small.prom"))
    for text in ("admin", metrics):
        bot.sender.event(
            {
                "type": "app_mention",
                "channel": CHANNEL,
                "text": f"<@{BOT_USER_ID}> {text}",
                "ts": f"1710000700.00000{len(text)}",
            }
        )
    bot.sender.event(
        {
            "type": "message",
            "channel_type": "im",
            "channel": "D0ALICE1",
            "text": "admin",
            "ts": "1710000701.000001",
        }
    )
    assert drain(bot.slack.app, timeout_seconds=60)
    sent = [c for c in bot.api.calls if c.method.startswith(("chat.", "files.", "response"))]
    assert sent == []
