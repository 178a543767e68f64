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
