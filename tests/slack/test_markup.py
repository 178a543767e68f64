"""Slack's wire encoding (``bot.slack.markup``): what any text becomes, what our mentions
become, where text is cut, and that nothing but ``bot.slack.delivery`` posts to Slack."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from bot.slack.markup import (
    encode_blocks,
    encode_text,
    escape,
    escaped_length,
    mention_channel,
    mention_group,
    mention_user,
)
from bot.slack.messages import SlackMessage

SLACK_PACKAGE = Path(__file__).resolve().parents[2] / "bot" / "slack"
# Web API methods that put text in front of people, and Bolt's senders.
SENDING_CALLS = frozenset(
    {
        "chat_postMessage",
        "chat_update",
        "chat_postEphemeral",
        "chat_scheduleMessage",
        "chat_meMessage",
        "files_upload",
        "files_upload_v2",
        "files_completeUploadExternal",
        "views_open",
        "views_update",
        "views_push",
        "views_publish",
        "say",
    }
)

plain_text = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Co")), max_size=400)


ENTITY = re.compile(r"&(amp|lt|gt);")


def decode(encoded: str) -> str:
    """Slack's reading of the three entities, in one pass."""
    return ENTITY.sub(lambda m: {"amp": "&", "lt": "<", "gt": ">"}[m.group(1)], encoded)


@given(plain_text)
def test_any_text_decodes_back_to_itself_and_holds_no_markup(text: str) -> None:
    encoded = encode_text(text)
    assert "<" not in encoded and ">" not in encoded
    assert decode(encoded) == text
    assert len(encoded) == escaped_length(text)


def test_our_mentions_survive_and_only_slack_ids_become_mentions() -> None:
    text = (
        f"for {mention_user('U0ALICE1')} in {mention_channel('C0TEAM01')} and "
        f"{mention_group('S0GPUTEAM')}; not {mention_user('!channel')} <@U123>"
    )
    assert encode_text(text) == (
        "for <@U0ALICE1> in <#C0TEAM01> and <!subteam^S0GPUTEAM>; not !channel &lt;@U123&gt;"
    )


def test_marker_characters_from_user_data_are_dropped() -> None:
    assert encode_text("\ue000@U0EVIL01\ue001 \ue000!channel\ue001") == "@U0EVIL01 !channel"


def test_a_cut_never_splits_an_entity_or_a_mention() -> None:
    assert encode_text("ab<cd", limit=4) == "ab…"  # not "ab&l…"
    assert encode_text("ab&cd", limit=5) == "ab…"
    assert encode_text(f"a {mention_user('U0ALICE1')} b", limit=8) == "a …"
    assert encode_text("abcdef", limit=4) == "abc…"


def test_blocks_are_encoded_in_text_objects_only_and_cut_to_their_place() -> None:
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": "<" * 100}},
        {
            "type": "section",
            "text": {"type": "mrkdwn", "text": "a & b"},
            "fields": [{"type": "mrkdwn", "text": "<!here>"}],
        },
        {
            "type": "actions",
            "block_id": "x<y",
            "elements": [
                {
                    "type": "button",
                    "action_id": "go",
                    "value": '{"ns":"a<b"}',
                    "text": {"type": "plain_text", "text": "<" * 30},
                }
            ],
        },
    ]
    header, section, actions = encode_blocks(blocks)
    assert header["text"]["text"] == "&lt;" * 37 + "…"  # 150 characters at most
    assert section["text"]["text"] == "a &amp; b"
    assert section["fields"][0]["text"] == "&lt;!here&gt;"
    button = actions["elements"][0]
    assert button["value"] == '{"ns":"a<b"}' and actions["block_id"] == "x<y"
    assert len(button["text"]["text"]) <= 75 and button["text"]["text"].endswith("…")


def test_a_slack_message_is_encoded_once() -> None:
    message = SlackMessage(
        [{"type": "section", "text": {"type": "mrkdwn", "text": "<!channel>"}}], "a <b> & c"
    )
    assert message.text == "a &lt;b&gt; &amp; c"
    assert message.blocks[0]["text"]["text"] == "&lt;!channel&gt;"
    assert escape("&lt;") == "&amp;lt;"  # text that looks escaped is shown as typed


def test_the_marker_pattern_is_linear_on_long_hostile_text() -> None:
    # 50,000 characters of near-markers: one pass each, no backtracking (would take minutes).
    for hostile in ("\ue000" * 50_000, ("\ue000@U" + "A" * 40) * 1_200, "<@U" * 17_000):
        assert len(encode_text(hostile)) <= 200_000


def test_only_the_delivery_layer_calls_slack_senders() -> None:
    """Every post goes through ``Delivery`` (which sends only ``SlackMessage``s) or Bolt's
    ``respond``/``ack`` with a ``SlackMessage``'s text and blocks."""
    offenders = []
    for path in SLACK_PACKAGE.rglob("*.py"):
        if path.name == "delivery.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if name in SENDING_CALLS:
                    offenders.append(f"{path.relative_to(SLACK_PACKAGE)}:{node.lineno} {name}")
                if name in ("respond", "ack"):
                    for keyword in node.keywords:
                        if keyword.arg in ("text", "blocks"):
                            value = ast.unparse(keyword.value)
                            if not value.startswith(("message.", "SlackMessage(")):
                                offenders.append(f"{path.name}:{node.lineno} {name}({value})")
    assert offenders == []
