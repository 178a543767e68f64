"""Access by Slack user group (the registry's ``allowed_user_groups``), end to end: the real bot
over HTTP reads membership from the local Web API's ``usergroups.users.list``."""

from __future__ import annotations

import logging
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

GROUP = "S0GPUTEAM"
OUTSIDER = "U0MALLORY"


def start_group_bot(
    slack_api: SlackWebApi, metrics_server: MetricsServer, tmp_path: Path
) -> Iterator[RunningBot]:
    registry = tmp_path / "clusters.yaml"
    registry.write_text(
        "clusters:\n"
        "  - name: gpu-team\n"
        f"    metrics_url: {metrics_server.url}\n"
        f"    allowed_user_groups: [{GROUP}]\n"
        "  - name: demo\n"
        f"    metrics_url: {metrics_server.url}\n"
        f"    allowed_channels: [{CHANNEL}]\n"
    )
    slack_api.usergroups[GROUP] = ["U0BOB0001", USER]
    running, server = start_bot(slack_api, load_registry(registry))
    yield running
    stop_bot(running, server)


@pytest.fixture
def group_bot(
    slack_api: SlackWebApi, metrics_server: MetricsServer, tmp_path: Path
) -> Iterator[RunningBot]:
    yield from start_group_bot(slack_api, metrics_server, tmp_path)


@pytest.fixture
def bot_without_the_scope(
    slack_api: SlackWebApi, metrics_server: MetricsServer, tmp_path: Path
) -> Iterator[RunningBot]:
    slack_api.scopes.discard("usergroups:read")  # an app installed before the scope was added
    yield from start_group_bot(slack_api, metrics_server, tmp_path)


def lookups(api: SlackWebApi) -> list[str]:
    return [str(call.params.get("usergroup")) for call in api.calls_to("usergroups.users.list")]


def test_a_user_allowed_only_through_a_group_sees_and_queries_the_cluster(
    group_bot: RunningBot, metrics_server: MetricsServer
) -> None:
    api = group_bot.api
    listing = blocks_text(
        group_bot.sender.command("clusters", response_url=api.response_url("c")).json()["blocks"]
    )
    assert "*gpu-team*" in listing and "*demo*" in listing
    assert "For the bot's admin" not in listing
    assert lookups(api) == [GROUP]
    lookup = api.calls_to("usergroups.users.list")[0]
    assert lookup.headers["authorization"] == f"Bearer {api.bot_token}"

    group_bot.sender.command("gpu-team ns=team-a", response_url=api.response_url("q"))
    answer = answer_in(api, CHANNEL, None)
    text = blocks_text(answer.blocks)
    assert "cluster *gpu-team*" in text and "275 / 600 cores" in text
    assert metrics_server.scrapes == 1
    # Membership comes from the store for the next minutes: one lookup served all of this.
    assert lookups(api) == [GROUP]


def test_a_user_outside_the_group_is_refused(
    group_bot: RunningBot, metrics_server: MetricsServer
) -> None:
    api = group_bot.api
    listing = blocks_text(
        group_bot.sender.command(
            "clusters", response_url=api.response_url("c"), user=OUTSIDER
        ).json()["blocks"]
    )
    assert "*demo*" in listing and "gpu-team" not in listing
    refusal = group_bot.sender.command(
        "gpu-team", response_url=api.response_url("q"), user=OUTSIDER
    ).json()
    assert refusal["response_type"] == "ephemeral"
    text = blocks_text(refusal["blocks"])
    assert (
        "'gpu-team' is not a cluster you may query here. Clusters you may query here: "
        "`demo`." in text
    )
    assert "usergroups:read" not in text  # membership was read; the answer is a decision
    picker = group_bot.sender.command("", response_url=api.response_url("p"), user=OUTSIDER)
    select = next(b for b in picker.json()["blocks"] if b.get("block_id") == "picker_cluster")
    assert [o["value"] for o in select["accessory"]["options"]] == ["demo"]
    time.sleep(0.3)
    assert api.calls_to("chat.postMessage") == [] and metrics_server.scrapes == 0


def test_missing_scope_refuses_politely_and_tells_the_admin(
    bot_without_the_scope: RunningBot,
    metrics_server: MetricsServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    group_bot = bot_without_the_scope
    api = group_bot.api
    with caplog.at_level(logging.WARNING, logger="hami_summary.slack.usergroups"):
        refusal = group_bot.sender.command("gpu-team", response_url=api.response_url("q"))
    assert refusal.status == 200
    body = refusal.json()
    assert body["response_type"] == "ephemeral"
    text = blocks_text(body["blocks"])
    assert "'gpu-team' is not a cluster you may query here." in text
    assert (
        "Slack user groups cannot be read: the app lacks the `usergroups:read` scope "
        "(Slack answered `missing_scope` to usergroups.users.list)"
    ) in text
    assert "Traceback" not in text and api.bot_token not in text
    # Read by the refresher at start or by this request, whichever came first.
    records = caplog.get_records("setup") + caplog.records
    logged = [r.getMessage() for r in records if "missing_scope" in r.getMessage()]
    assert logged and GROUP in logged[0] and api.bot_token not in logged[0]

    listing = blocks_text(
        group_bot.sender.command("clusters", response_url=api.response_url("c")).json()["blocks"]
    )
    assert "*demo*" in listing and "gpu-team" not in listing
    assert "For the bot's admin:" in listing and "`usergroups:read`" in listing
    help_text = blocks_text(
        group_bot.sender.command("help", response_url=api.response_url("h")).json()["blocks"]
    )
    assert "For the bot's admin" in help_text and "`usergroups:read`" in help_text
    # The failure is remembered for a minute: Slack is not asked again on every request.
    assert lookups(api) == [GROUP]
    time.sleep(0.3)
    assert api.calls_to("chat.postMessage") == [] and metrics_server.scrapes == 0


def test_membership_is_cached_for_the_ttl_then_read_again(slack_api: SlackWebApi) -> None:
    now = [1000.0]
    directory = SlackUserGroups(
        lookup_client(slack_api.bot_token, slack_api.base_url),
        MemoryStore(clock=lambda: now[0]),
        ttl_seconds=300,
    )
    slack_api.usergroups[GROUP] = [USER]
    assert directory.groups_of(USER, [GROUP, "S0UNKNOWN"]) == {GROUP}
    assert directory.problems([GROUP, "S0UNKNOWN"]) == (
        "Slack user group S0UNKNOWN, named in allowed_user_groups of the cluster registry, does "
        "not exist in this workspace (Slack answered `no_such_subteam`). Correct or remove it.",
    )
    slack_api.usergroups[GROUP] = []  # removed from the group in Slack
    now[0] += 299
    assert directory.groups_of(USER, [GROUP]) == {GROUP}  # still within the TTL
    now[0] += 2
    assert directory.groups_of(USER, [GROUP]) == frozenset()
    # The first two groups are read side by side, in either order.
    first, then = lookups(slack_api)[:2], lookups(slack_api)[2:]
    assert sorted(first) == sorted([GROUP, "S0UNKNOWN"]) and then == [GROUP]
    assert directory.problems([GROUP, "S0UNKNOWN"]) == ()  # the failure was remembered 60 s
