"""Slack-like messages never make the chat parser raise anything but ``InputError``.

Mentions, channel pings, links, entities, code fences, metric-looking lines and control
characters, in any order, go through the public parse functions of
``bot.conversation.parsing``. Examples are derandomized with no example database, so CI runs
the same cases every time.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bot.conversation import parsing
from core.errors import InputError
from tests.core.test_fuzz_hostile_input import FUZZ

slack_piece = st.one_of(
    st.sampled_from(
        (
            "ns",
            "namespace=",
            "node",
            "gpus",
            "workloads",
            "csv",
            "chart",
            "help",
            "admin",
            "check",
            "clusters",
            "demo",
            "context=prod",
            "runtime",
            "usage",
            "fresh",
            "ns=team-a",
            "fit",
            "8xH100",
            "2x50c/20GiB",
            "memory=30GiB",
            "gpumem-percentage=150",
            "4",
            "changes",
            "since=24h",
            "since=0s",
            "since=99999d",
            "<@U0123ABC>",
            "<@U0123ABC|bot>",
            "<#C0123|general>",
            "<!channel>",
            "<!here>",
            "<https://example.com|link>",
            "<mailto:a@b.c>",
            "&amp;",
            "&lt;",
            "&gt;",
            "```",
            "> quoted",
            'hami_gpu_core_allocated_ratio{node="n"} NaN',
            "# HELP x y",
            "1e308",
            "-Inf",
            "\u00a0",
            "\u200b",
            "\t",
            "\r",
            "\n",
        )
    ),
    st.text(max_size=20),
)
slack_message = st.lists(slack_piece, max_size=12).map(" ".join)


@FUZZ
@given(message=slack_message)
def test_slack_like_messages_parse_or_raise_input_error(message: str) -> None:
    for parse in (parsing.parse_command, parsing.parse_follow_up):
        try:
            parse(message)
        except InputError as error:
            assert error.message.strip()
    assert isinstance(parsing.looks_like_metrics(message), bool)
