"""Slack's wire encoding of text: the one place where ``&``, ``<`` and ``>`` are escaped.

Views (``bot.slack.blocks``, ``bot.slack.messages``, the admin report) write *plain* text:
node, pod and namespace names, cluster names, URLs and messages exactly as they are, plus
mrkdwn emphasis (``*bold*``, backticks). They never escape. ``SlackMessage`` (the only thing
the delivery layer sends) runs ``encode_text`` and ``encode_blocks`` over everything it
carries, so a label value such as ``<!channel>`` reaches Slack as ``&lt;!channel&gt;`` and is
shown, not executed, whichever view produced it.

Our own Slack markup (a user, channel or user-group mention, a date) is the one exception. It
is written with ``mention_user`` / ``mention_channel`` / ``mention_group`` / ``slack_date``,
which wrap a checked id (or a number) in markers carrying a random per-process nonce;
``encode_text`` turns only those into ``<@U…>`` after escaping everything else. Text from
metrics cannot forge the markers without the nonce, and the id inside must look like a Slack
id (a date, a fixed form), so ``<!channel>`` can never be made.

Escaping can lengthen text (``<`` becomes ``&lt;``); each text object is cut again to Slack's
limit for its place, never inside an entity or a mention.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

_OPEN = "\ue000"
_CLOSE = "\ue001"
_NONCE = secrets.token_hex(8)

# Slack ids: users U…/W…, channels C…/D…/G…, user groups S….
_USER_ID = re.compile(r"[UW][A-Z0-9]{2,30}")
_CHANNEL_ID = re.compile(r"[CDG][A-Z0-9]{2,30}")
_GROUP_ID = re.compile(r"S[A-Z0-9]{2,30}")
# A date Slack shows in the reader's own time zone (``slack_date``): the time and its fallback.
_DATE = r"!date\^[0-9]{1,12}\^\{date_short_pretty\} \{time_secs\}\|[0-9: -]{19} UTC"
# A marker as ``mention_*`` writes it; the id part is bounded, so matching is linear.
_MARKER = re.compile(
    _OPEN
    + _NONCE
    + r"(@[UW][A-Z0-9]{2,30}|#[CDG][A-Z0-9]{2,30}|!subteam\^S[A-Z0-9]{2,30}|"
    + _DATE
    + ")"
    + _CLOSE
)

# Slack's limits per text object (https://api.slack.com/reference/block-kit): a header's text,
# a button's or option's text, a field or context element, anything else.
TEXT_OBJECT_MAX = 3000
FIELD_MAX = 2000
HEADER_MAX = 150
PLACEHOLDER_MAX = 150
BUTTON_OR_OPTION_MAX = 75
# chat.postMessage's top-level ``text``: Slack truncates at 40,000 characters.
MESSAGE_TEXT_MAX = 40_000


def escape(text: str) -> str:
    """``&``, ``<`` and ``>`` as Slack's entities (formatting reference, "Escaping")."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def escaped_length(text: str) -> int:
    """How long ``text`` is once encoded (for views that budget Slack's character limits)."""
    return len(text) + 4 * text.count("&") + 3 * (text.count("<") + text.count(">"))


def _marker(body: str) -> str:
    return f"{_OPEN}{_NONCE}{body}{_CLOSE}"


def mention_user(user_id: str) -> str:
    """A mention of ``user_id`` (``<@U…>`` on the wire); an id that is not one is shown as text."""
    return _marker(f"@{user_id}") if _USER_ID.fullmatch(user_id) else user_id


def mention_channel(channel_id: str) -> str:
    return _marker(f"#{channel_id}") if _CHANNEL_ID.fullmatch(channel_id) else channel_id


def mention_group(group_id: str) -> str:
    return _marker(f"!subteam^{group_id}") if _GROUP_ID.fullmatch(group_id) else group_id


def slack_date(unix_seconds: float) -> str:
    """A moment as Slack shows dates: "today 14:02:07" in the reader's own time zone
    (``<!date^…>`` on the wire), with the UTC time as the fallback text."""
    moment = datetime.fromtimestamp(int(unix_seconds), UTC)
    fallback = moment.strftime("%Y-%m-%d %H:%M:%S UTC")
    return _marker(f"!date^{int(unix_seconds)}^{{date_short_pretty}} {{time_secs}}|{fallback}")


def _cut(encoded: str, limit: int) -> str:
    """``encoded`` within ``limit`` characters, ending with an ellipsis, never inside an entity
    (``&lt;``) or one of our mentions."""
    if len(encoded) <= limit:
        return encoded
    head = encoded[: limit - 1]
    amp = head.rfind("&", max(0, len(head) - 5))
    if amp >= 0 and ";" not in head[amp:]:
        head = head[:amp]
    opened = head.rfind("<")
    if opened > head.rfind(">"):
        head = head[:opened]
    return head + "…"


def encode_text(text: str, limit: int = MESSAGE_TEXT_MAX) -> str:
    """Plain text (with our mentions) as Slack text: escaped, mentions restored, within
    ``limit``. Stray marker characters (from user data or a cut marker) are dropped."""
    escaped = escape(text)
    restored = _MARKER.sub(lambda m: f"<{m.group(1)}>", escaped)
    cleaned = restored.replace(_OPEN, "").replace(_CLOSE, "")
    return _cut(cleaned, limit)


def _text_limit(parent: str | None, element_type: str | None) -> int:
    if parent == "header":
        return HEADER_MAX
    if element_type in ("button", "option"):
        return BUTTON_OR_OPTION_MAX
    if parent == "placeholder":
        return PLACEHOLDER_MAX
    if parent in ("fields", "context"):
        return FIELD_MAX
    return TEXT_OBJECT_MAX


def _encode(value: Any, parent: str | None, owner_type: str | None) -> Any:
    if isinstance(value, Mapping):
        kind = value.get("type")
        if kind in ("mrkdwn", "plain_text") and isinstance(value.get("text"), str):
            limit = _text_limit(parent, owner_type)
            return {**value, "text": encode_text(value["text"], limit)}
        own_type = str(kind) if isinstance(kind, str) else owner_type
        if parent in ("options", "initial_option", "initial_options"):
            own_type = "option"
        encoded: dict[str, Any] = {}
        for key, item in value.items():
            # Values, ids and URLs are data, not displayed text: sent as they are.
            if key in ("value", "action_id", "block_id", "url", "initial_value", "type"):
                encoded[key] = item
            elif key == "alt_text" and isinstance(item, str):
                encoded[key] = encode_text(item, 2000)
            else:
                child_parent = "context" if own_type == "context" and key == "elements" else key
                if parent == "header" or own_type == "header":
                    child_parent = "header"
                encoded[key] = _encode(item, child_parent, own_type)
        return encoded
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return [_encode(item, parent, owner_type) for item in value]
    return value


def encode_blocks(blocks: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Block Kit dicts with every text object's text encoded and cut to its place's limit;
    button values, action and block ids are left untouched."""
    return [_encode(block, None, None) for block in blocks]
