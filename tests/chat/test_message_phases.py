"""Messages and the message shortcut in the conversation's two phases: ``handle`` reads the
message once (its metrics, a fit, or a follow-up) and answers at once or plans; ``run`` carries
the plan out and only then does the thread remember what it is about."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.conversation.intents import GivenFile, MessageIntent, ShortcutIntent, ThreadWork
from bot.conversation.parsing import FollowUp
from bot.conversation.paste import NO_METRICS_IN_MESSAGE
from bot.conversation.replies import MessageReply, SummaryReply, TableReply
from bot.conversation.service import Conversation
from bot.store.state import PastedMetrics
from tests.conftest import FIXTURES
from tests.support.demo_conversation import CHANNEL, demo_conversation

THREAD = "100.1"
METRICS = (FIXTURES / "scheduler-small.prom").read_text()


@pytest.fixture
def conversation(tmp_path: Path) -> Conversation:
    return demo_conversation(tmp_path)


def _summary(conversation: Conversation, intent: MessageIntent | ShortcutIntent) -> SummaryReply:
    decision = conversation.handle(intent)
    assert decision.reply is None and decision.plan is not None
    reply = conversation.run(decision.plan)
    assert isinstance(reply, SummaryReply)
    return reply


def test_pasted_metrics_are_read_once_and_summarised_by_the_plan(
    conversation: Conversation,
) -> None:
    decision = conversation.handle(MessageIntent(METRICS, "U1", CHANNEL, THREAD))
    assert decision.reply is None and decision.plan is not None
    work = decision.plan.command
    assert isinstance(work, ThreadWork) and work.thread_ts == THREAD
    assert isinstance(work.metrics, PastedMetrics) and work.metrics.kind == "paste"
    # Deciding remembers nothing: the thread is about the metrics once the plan has run.
    assert conversation.state.thread_subject(CHANNEL, THREAD) is None
    reply = conversation.run(decision.plan)
    assert isinstance(reply, SummaryReply) and reply.ref.thread_ts == THREAD
    assert isinstance(conversation.state.thread_subject(CHANNEL, THREAD), PastedMetrics)


def test_a_follow_up_is_parsed_once_and_answered_from_the_threads_metrics(
    conversation: Conversation,
) -> None:
    _summary(conversation, MessageIntent(METRICS, "U1", CHANNEL, THREAD))
    decision = conversation.handle(MessageIntent("gpus", "U1", CHANNEL, THREAD))
    assert decision.plan is not None
    assert decision.plan.command == ThreadWork(THREAD, follow_up=FollowUp(action="gpus"))
    reply = conversation.run(decision.plan)
    assert isinstance(reply, TableReply) and reply.title.startswith("All ")


def test_words_not_understood_are_answered_at_once(conversation: Conversation) -> None:
    decision = conversation.handle(MessageIntent("what is the weather", "U1", CHANNEL, THREAD))
    assert decision.plan is None
    assert isinstance(decision.reply, MessageReply)


def test_another_bot_without_metrics_gets_no_answer(conversation: Conversation) -> None:
    decision = conversation.handle(MessageIntent("gpus", "B1", CHANNEL, THREAD, from_bot=True))
    assert decision.reply is None and decision.plan is None


def test_an_unreadable_file_is_told_at_once(conversation: Conversation) -> None:
    given = (GivenFile("big.prom", problem="it is larger than my limit of 1 KB."),)
    decision = conversation.handle(MessageIntent("", "U1", CHANNEL, THREAD, given))
    assert decision.plan is None and isinstance(decision.reply, MessageReply)
    assert decision.reply.tone == "problem" and "big.prom" in decision.reply.text


def test_the_paste_allowance_is_checked_when_the_message_is_read(tmp_path: Path) -> None:
    conversation = demo_conversation(tmp_path, paste_limit=1)
    _summary(conversation, MessageIntent(METRICS, "U1", CHANNEL, THREAD))
    refused = conversation.handle(MessageIntent(METRICS, "U1", CHANNEL, "200.1"))
    assert refused.plan is None and isinstance(refused.reply, MessageReply)
    assert refused.reply.tone == "problem"
    assert conversation.state.thread_subject(CHANNEL, "200.1") is None


def test_a_dm_answered_elsewhere_makes_that_thread_ask_about_the_summary(
    conversation: Conversation,
) -> None:
    top_level = "TOP"
    reply = _summary(
        conversation, MessageIntent(METRICS, "U1", CHANNEL, THREAD, shown_in=top_level)
    )
    assert reply.ref.thread_ts == THREAD
    # Pasted metrics are kept for their own thread; the other thread learns of cluster
    # summaries only.
    assert conversation.state.thread_subject(CHANNEL, top_level) is None


def test_the_shortcut_summarises_a_file_and_refuses_a_message_without_metrics(
    conversation: Conversation,
) -> None:
    given = (GivenFile("scheduler.prom", text=METRICS),)
    reply = _summary(conversation, ShortcutIntent("see attached", "U1", CHANNEL, THREAD, given))
    assert reply.summary.source.label == "scheduler.prom"
    refused = conversation.handle(ShortcutIntent("no numbers here", "U1", CHANNEL, "300.1"))
    assert refused.plan is None and refused.reply == NO_METRICS_IN_MESSAGE
