"""Reading ``changes`` and ``since=`` in slash commands and thread follow-ups."""

from __future__ import annotations

import pytest

from bot.conversation.parsing import ClusterCommand, FollowUp, parse_command, parse_follow_up
from core.errors import InputError


def test_changes_with_and_without_since() -> None:
    assert parse_command("prod changes") == ClusterCommand("prod", changes=True)
    assert parse_command("prod changes since=24h context=admin") == ClusterCommand(
        "prod", "admin", changes=True, since_seconds=86_400.0
    )
    assert parse_command("prod changes since=30m") == ClusterCommand(
        "prod", changes=True, since_seconds=1800.0
    )
    assert parse_command("prod changes since=7D") == ClusterCommand(
        "prod", changes=True, since_seconds=604_800.0
    )
    assert parse_follow_up("changes") == FollowUp("changes")
    assert parse_follow_up("changes since=1h") == FollowUp("changes", since_seconds=3600.0)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("prod changes since=90d", "'since=90d' is not a time span I keep history for"),
        ("prod changes since=0h", "'since=0h' is not a time span"),
        ("prod changes since=yesterday", "e.g. since=30m, since=24h or since=7d"),
        ("prod since=1h", "since= goes with `changes`"),
        ("prod changes ns=team-a", "takes only context= and since= (not namespace)"),
        ("prod changes runtime fresh", "(not fresh, runtime)"),
    ],
)
def test_bad_changes_commands_are_named(text: str, message: str) -> None:
    with pytest.raises(InputError) as error:
        parse_command(text)
    assert message in error.value.message


def test_since_in_a_follow_up_goes_with_changes_only() -> None:
    with pytest.raises(InputError, match="since= goes with `changes`"):
        parse_follow_up("gpus since=1h")
    with pytest.raises(InputError, match="not a time span"):
        parse_follow_up("changes since=3w")


def test_titles_say_which_snapshot_was_compared() -> None:
    from bot.conversation.changes import _cluster_title

    now = 1_767_225_600.0 + 86_400
    hour = 3600.0
    assert _cluster_title("prod", now - hour - 60, now, now - hour, hour) == (
        "Changes in cluster prod since 2026-01-01 22:59 UTC (61 min ago)"
    )
    assert _cluster_title("prod", now - 1800, now, now - 86_400, 86_400) == (
        "Changes in cluster prod since 2026-01-01 23:30 UTC (30 min ago; the oldest snapshot "
        "kept, you asked for 24.0 h)"
    )
    assert _cluster_title("prod", now - 3 * 86_400, now, now - hour, hour) == (
        "Changes in cluster prod since 2025-12-30 00:00 UTC (3.0 days ago; the newest snapshot "
        "kept from before 60 min ago)"
    )


def test_gpu_hours_takes_since_namespace_and_context() -> None:
    assert parse_command("prod gpu-hours") == ClusterCommand("prod", gpu_hours=True)
    assert parse_command("prod GPU-HOURS since=7d ns=team-a context=admin") == ClusterCommand(
        "prod", "admin", namespace="team-a", since_seconds=604_800.0, gpu_hours=True
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("prod gpu-hours runtime", "`gpu-hours` counts the kept history and takes only"),
        ("prod gpu-hours node=gpu-1", "(not node)"),
        ("prod gpu-hours changes", "(not changes)"),
        ("prod gpu-hours fit 1xA100", "(not fit or why)"),
        ("prod gpu-hours since=99d", "'since=99d' is not a time span I keep history for"),
    ],
)
def test_gpu_hours_refuses_what_does_not_go_with_it(text: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_command(text)
    assert message in caught.value.message


def test_gpu_hours_as_a_thread_follow_up() -> None:
    assert parse_follow_up("gpu-hours") == FollowUp("gpu-hours")
    assert parse_follow_up("gpu-hours since=7d ns team-a") == FollowUp(
        "gpu-hours", namespace="team-a", since_seconds=604_800.0
    )
    with pytest.raises(InputError) as caught:
        parse_follow_up("gpus since=7d")
    assert "since= goes with `changes` or `gpu-hours`" in caught.value.message


def test_gpu_hours_reach_back_as_far_as_usage_is_kept_and_changes_do_not() -> None:
    month = 30 * 86_400.0
    assert parse_command("prod gpu-hours since=30d").since_seconds == month
    assert parse_follow_up("gpu-hours since=30d") == FollowUp("gpu-hours", since_seconds=month)
    assert parse_follow_up("since=30d gpu-hours") == FollowUp("gpu-hours", since_seconds=month)
    with pytest.raises(InputError, match="up to 35 days"):
        parse_command("prod gpu-hours since=36d")
    with pytest.raises(InputError, match="up to 15 days"):
        parse_command("prod changes since=30d")
    with pytest.raises(InputError, match="up to 15 days"):
        parse_follow_up("changes since=30d")
