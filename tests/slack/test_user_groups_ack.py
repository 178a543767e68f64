"""User groups never hold up an acknowledgement, end to end: the real bot over signed HTTP, a
local Web API whose ``usergroups.users.list`` answers slowly, and Slack's user-group events."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.clusters.registry import load_registry
from bot.slack.usergroups import SlackUserGroups, lookup_client
from bot.store.memory import MemoryStore
from tests.slack.conftest import CHANNEL, USER, MetricsServer, RunningBot, start_bot, stop_bot
from tests.slack.test_http_e2e import answer_in, blocks_text
from tests.support.slack_api import SlackWebApi

GROUPS = [f"S0GROUP{n:02d}" for n in range(1, 21)]
OUTSIDER = "U0MALLORY"
# Each usergroups.users.list takes this long: twenty of them one after another would take 30 s.
SLOW_ANSWER_SECONDS = 1.5


def lookups(api: SlackWebApi) -> list[str]:
    return [str(call.params.get("usergroup")) for call in api.calls_to("usergroups.users.list")]


def write_registry(tmp_path: Path, metrics_url: str, groups: list[str]) -> Path:
    registry = tmp_path / "clusters.yaml"
    registry.write_text(
        "clusters:\n"
        "  - name: gpu-team\n"
        f"    metrics_url: {metrics_url}\n"
        f"    allowed_user_groups: [{', '.join(groups)}]\n"
        "  - name: demo\n"
        f"    metrics_url: {metrics_url}\n"
        f"    allowed_channels: [{CHANNEL}]\n"
    )
    return registry


@pytest.fixture
def slow_groups_bot(
    slack_api: SlackWebApi, metrics_server: MetricsServer, tmp_path: Path
) -> Iterator[RunningBot]:
    for group in GROUPS:
        slack_api.usergroups[group] = ["U0BOB0001"]
    slack_api.usergroups[GROUPS[-1]] = ["U0BOB0001", USER]  # the last group read lets USER in
    slack_api.usergroups_delay_seconds = SLOW_ANSWER_SECONDS
    # No lookup is answered until the test has its acknowledgement: one that waited for a
    # lookup would never come (the request times out), however slow or fast the machine.
    slack_api.hold_usergroups()
    registry = load_registry(write_registry(tmp_path, metrics_server.url, GROUPS))
    running, server = start_bot(slack_api, registry)
    yield running
    slack_api.release_usergroups()
    stop_bot(running, server)


def response_posts(api: SlackWebApi, name: str) -> list[str]:
    return [blocks_text(post.get("blocks") or []) for post in api.response_posts.get(name, [])]


@pytest.mark.slow
def test_a_member_is_acknowledged_at_once_and_answered_after_the_lookups(
    slow_groups_bot: RunningBot, metrics_server: MetricsServer
) -> None:
    api = slow_groups_bot.api
    ack = slow_groups_bot.sender.command("gpu-team", response_url=api.response_url("q"))
    api.release_usergroups()  # acknowledged while no lookup could be answered
    body = ack.json()
    assert body["response_type"] == "ephemeral"
    assert "Checking access" in blocks_text(body["blocks"])
    assert len(lookups(api)) < len(GROUPS)  # the acknowledgement did not wait for them

    answer = answer_in(api, CHANNEL, None)
    text = blocks_text(answer.blocks)
    assert "cluster *gpu-team*" in text and "275 / 600 cores" in text
    assert metrics_server.scrapes == 1
    assert sorted(set(lookups(api))) == GROUPS
    assert len(lookups(api)) == len(GROUPS)  # each group read once, refresher included
    assert api.response_posts.get("q") is None  # the answer went to the channel only


@pytest.mark.slow
def test_an_outsider_is_refused_after_the_lookups_and_nothing_is_posted(
    slow_groups_bot: RunningBot, metrics_server: MetricsServer
) -> None:
    api = slow_groups_bot.api
    ack = slow_groups_bot.sender.command(
        "gpu-team", response_url=api.response_url("q"), user=OUTSIDER
    )
    api.release_usergroups()  # acknowledged while no lookup could be answered
    assert "Checking access" in blocks_text(ack.json()["blocks"])

    api.wait_for("response_url", timeout=30)
    (refusal,) = api.response_posts["q"]
    assert refusal["response_type"] == "ephemeral"
    assert (
        "'gpu-team' is not a cluster you may query here. Clusters you may query here: `demo`."
    ) in blocks_text(refusal["blocks"])
    assert sorted(set(lookups(api))) == GROUPS
    time.sleep(0.3)
    assert api.calls_to("chat.postMessage") == [] and metrics_server.scrapes == 0


@pytest.mark.slow
def test_a_listing_is_deferred_the_same_way(slow_groups_bot: RunningBot) -> None:
    api = slow_groups_bot.api
    ack = slow_groups_bot.sender.command("clusters", response_url=api.response_url("c"))
    api.release_usergroups()  # acknowledged while no lookup could be answered
    assert "Checking access" in blocks_text(ack.json()["blocks"])
    api.wait_for("response_url", timeout=30)
    (listing,) = response_posts(api, "c")
    assert "*gpu-team*" in listing and "*demo*" in listing
    # Now cached: the next acknowledgement answers by itself, without any lookup.
    before = len(lookups(api))
    again = slow_groups_bot.sender.command(
        "clusters", response_url=api.response_url("c2"), user=OUTSIDER
    )
    text = blocks_text(again.json()["blocks"])
    assert "*demo*" in text and "gpu-team" not in text
    assert len(lookups(api)) == before


@pytest.fixture
def group_bot(
    slack_api: SlackWebApi, metrics_server: MetricsServer, tmp_path: Path
) -> Iterator[RunningBot]:
    slack_api.usergroups[GROUPS[0]] = [USER]
    registry = load_registry(write_registry(tmp_path, metrics_server.url, GROUPS[:1]))
    running, server = start_bot(slack_api, registry)
    yield running
    stop_bot(running, server)


def visible_clusters(bot: RunningBot, user: str) -> str:
    reply = bot.sender.command("clusters", response_url=bot.api.response_url("c"), user=user)
    return blocks_text(reply.json()["blocks"])


def test_user_group_events_update_membership_without_a_lookup(group_bot: RunningBot) -> None:
    api = group_bot.api
    assert "gpu-team" not in visible_clusters(group_bot, OUTSIDER)
    assert lookups(api) == [GROUPS[0]]
    added = group_bot.sender.event(
        {
            "type": "subteam_members_changed",
            "subteam_id": GROUPS[0],
            "team_id": "T0TEST",
            "date_previous_update": 1446670362,
            "date_update": 1492906952,
            "added_users": [OUTSIDER],
            "added_users_count": "1",
            "removed_users": [USER],
            "removed_users_count": "1",
        }
    )
    assert added.status == 200
    assert "*gpu-team*" in visible_clusters(group_bot, OUTSIDER)
    assert "gpu-team" not in visible_clusters(group_bot, USER)

    updated = group_bot.sender.event(
        {
            "type": "subteam_updated",
            "subteam": {
                "id": GROUPS[0],
                "team_id": "T0TEST",
                "is_usergroup": True,
                "name": "GPU team",
                "handle": "gpu-team",
                "users": [USER],
                "user_count": 1,
            },
        }
    )
    assert updated.status == 200
    assert "*gpu-team*" in visible_clusters(group_bot, USER)
    assert "gpu-team" not in visible_clusters(group_bot, OUTSIDER)
    assert lookups(api) == [GROUPS[0]]  # every change came from the events

    # Slack tells about every group of the workspace; one the registry does not name is ignored.
    group_bot.sender.event(
        {
            "type": "subteam_updated",
            "subteam": {
                "id": "S0OTHERS1",
                "users": [f"U0X{n:06d}" for n in range(500)],
                "user_count": 900,
            },
        }
    )
    time.sleep(0.3)
    assert lookups(api) == [GROUPS[0]]


def test_an_answer_given_in_the_acknowledgement_is_not_repeated(
    group_bot: RunningBot, metrics_server: MetricsServer
) -> None:
    api = group_bot.api
    # Slack answers at once: the acknowledgement decides by itself, as before.
    refusal = group_bot.sender.command(
        "gpu-team", response_url=api.response_url("q"), user=OUTSIDER
    ).json()
    assert "'gpu-team' is not a cluster you may query here." in blocks_text(refusal["blocks"])
    listing = visible_clusters(group_bot, USER)
    assert "*gpu-team*" in listing and "Checking access" not in listing
    time.sleep(0.5)
    assert api.response_posts == {} and api.calls_to("chat.postMessage") == []
    assert metrics_server.scrapes == 0


def test_a_cut_member_list_has_the_group_read_again(group_bot: RunningBot) -> None:
    api = group_bot.api
    assert "*gpu-team*" in visible_clusters(group_bot, USER)
    api.usergroups[GROUPS[0]] = [OUTSIDER]
    # Slack lists at most 500 members in the event; a bigger group is read whole.
    group_bot.sender.event(
        {
            "type": "subteam_updated",
            "subteam": {
                "id": GROUPS[0],
                "users": [f"U0X{n:06d}" for n in range(500)],
                "user_count": 1200,
            },
        }
    )
    api.wait_for("usergroups.users.list", 2)
    deadline = time.monotonic() + 10
    while "*gpu-team*" not in visible_clusters(group_bot, OUTSIDER):
        assert time.monotonic() < deadline, "the group was not read again"
        time.sleep(0.05)


def test_the_refresher_reads_groups_before_they_expire(slack_api: SlackWebApi) -> None:
    now = [1000.0]
    directory = SlackUserGroups(
        lookup_client(slack_api.bot_token, slack_api.base_url),
        MemoryStore(clock=lambda: now[0]),
        ttl_seconds=300,
        clock=lambda: now[0],
    )
    slack_api.usergroups[GROUPS[0]] = [USER]
    try:
        directory.start_refreshing([GROUPS[0]], check_seconds=0.05)
        slack_api.wait_for("usergroups.users.list")
        time.sleep(0.3)
        assert lookups(slack_api) == [GROUPS[0]]  # read once, then fresh enough
        slack_api.usergroups[GROUPS[0]] = [OUTSIDER]
        now[0] += 151  # past half the TTL
        slack_api.wait_for("usergroups.users.list", 2)
        deadline = time.monotonic() + 10
        while directory.groups_of(OUTSIDER, [GROUPS[0]]) != {GROUPS[0]}:
            assert time.monotonic() < deadline, "the refreshed members were not stored"
            time.sleep(0.05)
        assert lookups(slack_api) == [GROUPS[0], GROUPS[0]]  # requests never waited for one
    finally:
        directory.stop()
