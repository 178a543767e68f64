"""Reading slash-command arguments, follow-ups and pasted metrics."""

from __future__ import annotations

import pytest

from bot.conversation.parsing import (
    AdminCommand,
    ClusterCommand,
    ClustersCommand,
    FollowUp,
    HelpCommand,
    PickerCommand,
    looks_like_metrics,
    parse_command,
    parse_follow_up,
)
from bot.slack.incoming import typed_text
from core.errors import InputError


def test_commands() -> None:
    assert parse_command("") == PickerCommand()
    assert parse_command("  help ") == HelpCommand()
    assert parse_command("clusters") == ClustersCommand()
    assert parse_command("admin") == AdminCommand()
    assert parse_command("Admin CHECK") == AdminCommand(check=True)
    assert parse_command("prod ns=team-a node=gpu-node-1 context=admin runtime fresh") == (
        ClusterCommand("prod", "admin", "team-a", "gpu-node-1", True, True)
    )


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("prod ns=Team_A", ["'Team_A' is not a Kubernetes namespace name"]),
        ("prod colour=blue", ["Unknown option 'colour=blue'", "Usage"]),
        ("prod please", ["Unknown word 'please'"]),
        ("ns=team-a", ["'ns=team-a' is not a cluster name"]),
        ("clusters all", ["takes no arguments"]),
        ("admin everything", ["'admin' takes only `check`", "/hami-summary admin [check]"]),
    ],
)
def test_bad_commands_say_what_was_wrong(text: str, words: list[str]) -> None:
    with pytest.raises(InputError) as error:
        parse_command(text)
    for word in words:
        assert word in error.value.message


def test_usage_is_asked_for_by_name() -> None:
    assert parse_command("prod usage") == ClusterCommand("prod", usage=True)
    assert parse_command("prod ns=team-a nvidia-smi") == ClusterCommand(
        "prod", namespace="team-a", usage=True
    )
    assert parse_command("prod").usage is False  # type: ignore[union-attr]
    # Alone, "usage" still asks for the help text (how to use the command).
    assert parse_command("usage") == HelpCommand()
    assert parse_follow_up("usage") == FollowUp("usage")
    assert parse_follow_up("usage ns team-a") == FollowUp("usage", namespace="team-a")


def test_follow_ups() -> None:
    assert parse_follow_up("ns team-a") == FollowUp(namespace="team-a")
    assert parse_follow_up(typed_text("<@UBOT> node gpu-node-1")) == FollowUp(node="gpu-node-1")
    assert parse_follow_up("gpus ns=team-b") == FollowUp("gpus", namespace="team-b")
    assert parse_follow_up("CSV") == FollowUp("csv")
    assert parse_follow_up("chart") == FollowUp("chart")
    assert parse_follow_up("what is going on with the cluster today?") is None
    with pytest.raises(InputError):
        parse_follow_up("ns")


def test_slack_formatting_is_undone() -> None:
    assert typed_text("<@U1|bot> a &lt;b&gt; &amp; <https://x.io|x.io>") == ("a <b> & https://x.io")


def test_metrics_are_recognised_inside_code_fences() -> None:
    assert looks_like_metrics('```hami_gpu_shared_count{node="n"} 2```')
    assert looks_like_metrics("# HELP hami_build_info build\n")
    assert looks_like_metrics("x_total 4.294967296e+10")
    assert not looks_like_metrics("ns team-a")
    assert not looks_like_metrics("hello there, can you help")
