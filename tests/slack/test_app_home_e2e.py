"""App Home end to end: signed ``app_home_opened`` events and Home-tab interactions in, views
published and DM answers out through the local Slack Web API, state in a real Redis.

The Home tab shows exactly the clusters the registry lets the user query (by user, by user
group, or through channels open to everyone), never one opened only to a channel or to someone
else; its buttons answer in the user's DM and are checked against the registry again.
"""

from __future__ import annotations

import html
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.clusters.registry import load_registry
from bot.slack.home import HOME_STALE_SECONDS
from bot.store.redis_store import RedisStore
from core.simulate import render_exposition, simulate_cluster
from tests.slack.conftest import CHANNEL, USER, MetricsServer, RunningBot, start_bot, stop_bot
from tests.slack.test_http_e2e import blocks_text
from tests.support.slack_api import SlackWebApi, dm_channel_of

GROUP = "S0GPUTEAM"
BOB = "U0BOB0002"
DM = dm_channel_of(USER)


@pytest.fixture
def home(
    slack_api: SlackWebApi, redis_url: str, redis_key_prefix: str, tmp_path: Path
) -> Iterator[tuple[RunningBot, MetricsServer, MetricsServer]]:
    mine = MetricsServer(render_exposition(simulate_cluster(3, 2, seed=2)))
    others = MetricsServer(render_exposition(simulate_cluster(2, 2, seed=3)))
    slack_api.usergroups[GROUP] = [USER]
    registry = tmp_path / "clusters.yaml"
    registry.write_text(
        "clusters:\n"
        "  - name: mine\n"
        '    display_name: "My <!here> cluster"\n'
        f"    metrics_url: {mine.url}\n"
        f"    allowed_users: [{USER}]\n"
        "  - name: everyone\n"
        f"    metrics_url: {mine.url}\n"
        '    allowed_channels: ["*"]\n'
        "  - name: grouped\n"
        f"    metrics_url: {mine.url}\n"
        f"    allowed_user_groups: [{GROUP}]\n"
        "  - name: team-channel\n"
        f"    metrics_url: {others.url}\n"
        f"    allowed_channels: [{CHANNEL}]\n"
        "  - name: bobs\n"
        f"    metrics_url: {others.url}\n"
        f"    allowed_users: [{BOB}]\n"
    )
    store = RedisStore(redis_url, redis_key_prefix)
    bot, server = start_bot(slack_api, load_registry(registry), store=store)
    try:
        yield bot, mine, others
    finally:
        stop_bot(bot, server)
        mine.stop()
        others.stop()
        store.close()


def _open_home(bot: RunningBot, user: str = USER, *, shown: dict[str, Any] | None = None) -> None:
    event: dict[str, Any] = {
        "type": "app_home_opened",
        "user": user,
        "channel": dm_channel_of(user),
        "tab": "home",
        "event_ts": f"1710000000.{bot.sender.next_id():06d}",
    }
    if shown is not None:
        event["view"] = shown
    assert bot.sender.event(event).status == 200


def _refreshed(bot: RunningBot, user: str = USER) -> None:
    """Wait until the refresh in progress is over: the tab is published before the bot notes
    when and lets go of its refresh lock, and an opening in between finds the lock taken."""
    state = bot.slack.services.state
    deadline = time.monotonic() + 20
    while True:
        token = state.claim_home_refresh(user, 5)
        if token is not None:
            state.release_home_refresh(user, token)
            if state.home_published_at(user) is not None:
                return
        assert time.monotonic() < deadline, "the Home tab refresh never finished"
        time.sleep(0.02)


def _cluster_names(view: dict[str, Any]) -> list[str]:
    """The clusters a Home view has buttons for, from the buttons' values."""
    names = []
    for block in view["blocks"]:
        for element in block.get("elements", []):
            if element.get("action_id") == "home_summary":
                names.append(json.loads(element["value"])["cl"])
    return names


def _press(bot: RunningBot, action_id: str, value: str, user: str = USER) -> None:
    bot.sender.interaction(
        {
            "type": "block_actions",
            "user": {"id": user},
            "container": {"type": "view", "view_id": "V00000001"},
            "view": {"id": "V00000001", "type": "home"},
            "actions": [
                {
                    "type": "button",
                    "action_id": action_id,
                    "value": value,
                    "action_ts": f"1710000002.{bot.sender.next_id()}",
                }
            ],
        }
    )


def _dm_text(bot: RunningBot, words: str) -> str:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        for message in list(bot.api.messages.values()):
            text = html.unescape(blocks_text(message.blocks))
            if message.channel == DM and words in text:
                return text
        time.sleep(0.05)
    raise AssertionError(f"no DM message with {words!r}")


def test_the_home_tab_shows_only_the_clusters_the_user_may_query(
    home: tuple[RunningBot, MetricsServer, MetricsServer],
) -> None:
    bot, _, others = home
    _open_home(bot)
    publishes = bot.api.wait_for("views.publish", 2)
    _refreshed(bot)
    first = publishes[0].json_param("view")
    assert "Reading the clusters you may query" in blocks_text(first["blocks"])
    view = bot.api.home_views[USER]
    assert _cluster_names(view) == ["mine", "everyone", "grouped"]
    text = html.unescape(blocks_text(view["blocks"]))
    assert "team-channel" not in text and "bobs" not in text
    assert others.scrapes == 0  # nothing of the others was even collected
    assert "*mine* (My <!here> cluster)\n6 GPUs on 3 nodes · cores " in text
    raw = blocks_text(view["blocks"])  # as Slack receives it: names escaped, never markup
    assert "My &lt;!here&gt; cluster" in raw and "<!here>" not in raw
    # The last scrape as a Slack date (the reader's time zone), and the alerts line.
    assert "Last scrape <!date^" in text and "{date_short_pretty} {time_secs}|" in text
    assert "No alert firing" in text

    # Opened again at once: the tab on show is fresh, nothing is collected or published.
    _open_home(bot, shown=view)
    _press(bot, "home_refresh", "refresh")  # the Refresh button always publishes
    bot.api.wait_for("views.publish", 3)
    time.sleep(1.0)  # room for a wrong extra publish of the second opening to show
    assert len(bot.api.calls_to("views.publish")) == 3


def test_a_stale_home_tab_is_published_again_when_opened(
    home: tuple[RunningBot, MetricsServer, MetricsServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    bot, _, _ = home
    _open_home(bot)
    bot.api.wait_for("views.publish", 2)
    _refreshed(bot)
    # The bot's clock, a minute and more later: the tab on show is now stale.
    later = HOME_STALE_SECONDS + 1
    monkeypatch.setattr(bot.slack.services.state, "_clock", lambda: time.time() + later)
    _open_home(bot, shown=bot.api.home_views[USER])
    third = bot.api.wait_for("views.publish", 3)[2].json_param("view")
    assert _cluster_names(third) == ["mine", "everyone", "grouped"]  # no loading view first


def test_home_buttons_answer_in_the_dm_and_check_access_again(
    home: tuple[RunningBot, MetricsServer, MetricsServer],
) -> None:
    bot, _, others = home
    _press(bot, "home_summary", '{"cl":"mine"}')
    summary = _dm_text(bot, "HAMi GPU allocation: mine")
    assert "*By GPU model*" in summary
    opened = bot.api.calls_to("conversations.open")
    assert opened and opened[0].params["users"] == USER

    _press(bot, "home_changes", '{"cl":"mine"}')
    _dm_text(bot, "No history to compare with yet")

    # A button naming a cluster the user may not query (a forged or outdated value).
    _press(bot, "home_summary", '{"cl":"bobs"}')
    refusal = _dm_text(bot, "'bobs' is not a cluster you may query here")
    assert "GPUs" not in refusal
    assert others.scrapes == 0


def test_the_fit_button_asks_for_a_shape_and_places_it(
    home: tuple[RunningBot, MetricsServer, MetricsServer],
) -> None:
    bot, _, _ = home
    _press(bot, "home_fit", '{"cl":"mine"}')
    modal = bot.api.wait_for("views.open")[0].json_param("view")
    assert modal["callback_id"] == "home_fit_shape"
    assert "in *mine* now?" in blocks_text(modal["blocks"])

    def submit(shape: str) -> Any:
        return bot.sender.interaction(
            {
                "type": "view_submission",
                "user": {"id": USER},
                "view": {
                    "id": "VM0000001",
                    "type": "modal",
                    "callback_id": modal["callback_id"],
                    "private_metadata": modal["private_metadata"],
                    "state": {"values": {"fit_shape": {"fit_shape_input": {"value": shape}}}},
                },
            }
        )

    refused = submit("eight gpus please")
    assert refused.status == 200
    body = refused.json()
    assert body["response_action"] == "errors" and "fit_shape" in body["errors"]
    accepted = submit("1")
    assert accepted.status == 200 and accepted.body == b""  # the form closes
    _dm_text(bot, "1 GPU, whole GPU")
