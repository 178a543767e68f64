"""The conversation's two phases, as every surface calls them: ``handle`` decides without
collecting (an answer now, or a plan), ``run`` carries the plan out; a button is read once and
refused at once when pressed away from its summary. Replies hold emphasis as data, written as
mrkdwn for Slack and as plain words for the terminal."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.conversation.buttons import ELSEWHERE, TOP_LEVEL, ButtonIntent, ButtonPress
from bot.conversation.intents import CHECKING_KUBECONFIGS, CommandIntent
from bot.conversation.parsing import ClusterCommand
from bot.conversation.replies import MessageReply, SummaryRef
from bot.conversation.rich import Aside, Code, Fixed, Mention, Rich, Strong, plain
from bot.conversation.service import Conversation
from bot.slack.markup import encode_text
from bot.slack.mrkdwn import mrkdwn
from tests.support.demo_conversation import CHANNEL, demo_conversation


@pytest.fixture
def conversation(tmp_path: Path) -> Conversation:
    return demo_conversation(tmp_path)


def test_quick_commands_are_answered_in_the_acknowledgement(conversation: Conversation) -> None:
    decision = conversation.handle(CommandIntent("help", "U1", CHANNEL))
    assert decision.plan is None
    assert isinstance(decision.reply, MessageReply) and decision.reply.title == "hami-summary help"


def test_a_cluster_summary_is_planned_with_its_command_parsed_once(
    conversation: Conversation,
) -> None:
    decision = conversation.handle(CommandIntent("demo ns=team-a", "U1", CHANNEL, "t1"))
    assert decision.reply is None and decision.plan is not None
    assert decision.plan.command == ClusterCommand("demo", namespace="team-a")
    assert decision.plan.public and decision.plan.decided and decision.plan.thread_ts == "t1"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("demo ns=Team_A", "'Team_A' is not a Kubernetes namespace name"),
        ("demo runtime", "Runtime (vGPU monitor) scrapes are not enabled for cluster"),
    ],
)
def test_problems_are_answered_at_once_and_nothing_is_planned(
    conversation: Conversation, text: str, words: str
) -> None:
    decision = conversation.handle(CommandIntent(text, "U1", CHANNEL))
    assert decision.plan is None
    assert isinstance(decision.reply, MessageReply) and decision.reply.tone == "problem"
    assert words in plain(decision.reply.text)


def test_a_cluster_elsewhere_is_refused_without_naming_it(conversation: Conversation) -> None:
    decision = conversation.handle(CommandIntent("demo", "U1", "C0ELSEWHERE"))
    assert decision.plan is None and isinstance(decision.reply, MessageReply)
    assert "'demo' is not a cluster you may query here" in plain(decision.reply.text)


def test_admin_check_says_it_is_checking_and_answers_only_the_admin(
    conversation: Conversation,
) -> None:
    # The terminal's operator (no user id) is the admin.
    decision = conversation.handle(CommandIntent("admin check", None, CHANNEL))
    assert decision.reply == CHECKING_KUBECONFIGS
    assert decision.plan is not None and not decision.plan.public


def _press(
    ref: SummaryRef,
    *,
    channel: str = CHANNEL,
    thread: str | None = "1.0",
    message: str | None = "2.0",
) -> ButtonIntent:
    return ButtonIntent("gpus", ref.to_value(), "U1", channel, thread, message)


def test_a_button_pressed_away_from_its_summary_is_refused_at_once(
    conversation: Conversation,
) -> None:
    pasted_here = SummaryRef(channel=CHANNEL, thread_ts="1.0")
    for press in (
        _press(pasted_here, channel="C0OTHER01"),
        _press(pasted_here, thread="9.0"),
        _press(SummaryRef(channel=CHANNEL, thread_ts=TOP_LEVEL), thread="1.0", message="2.0"),
    ):
        decision = conversation.handle(press)
        assert decision.plan is None and isinstance(decision.reply, MessageReply)
        assert decision.reply.text == ELSEWHERE
    # Where it was given: planned, read once, not in place.
    decision = conversation.handle(_press(pasted_here))
    assert decision.reply is None and decision.plan is not None
    assert decision.plan.command == ButtonPress("gpus", pasted_here, in_place=False)
    top = conversation.handle(_press(SummaryRef(channel=CHANNEL, thread_ts=TOP_LEVEL), thread=None))
    assert top.plan is not None


def test_an_unreadable_button_is_explained_where_its_answer_goes(
    conversation: Conversation,
) -> None:
    decision = conversation.handle(ButtonIntent("refresh", "not json", "U1", CHANNEL))
    assert decision.reply is None and decision.plan is not None
    reply = conversation.run(decision.plan)
    assert isinstance(reply, MessageReply) and reply.tone == "problem"
    assert "cannot read any more" in plain(reply.text)


def test_emphasis_is_written_by_each_surface() -> None:
    text = Rich.of(
        Strong("Heading"),
        (
            "Cluster ",
            Strong("demo"),
            " context ",
            Code("a`b"),
            " for ",
            Mention("user", "U0ALICE01"),
        ),
        Aside("what the numbers mean."),
        Fixed("a  b\n1  2"),
    )
    # As sent: the mention made real when the message is encoded.
    assert encode_text(mrkdwn(text)) == (
        "*Heading*\nCluster *demo* context `a'b` for <@U0ALICE01>\n_what the numbers mean._\n"
        "```a  b\n1  2```"
    )
    assert plain(text) == (
        "Heading\nCluster demo context a`b for U0ALICE01\nwhat the numbers mean.\na  b\n1  2"
    )
