"""Slack's message markup undone, so the conversation reads text as the person typed it.

Slack sends mentions, links and escaped characters in its own markup; every listener passes
message and command text through ``typed_text`` before the conversation sees it (the terminal
has no such markup).
"""

from __future__ import annotations

import html
import re

# Slack encodes mentions as <@U123> / <@U123|name>, channels as <#C123|name>, links as
# <https://x|label>, and escapes &, <, > as entities in message text
# (https://api.slack.com/reference/surfaces/formatting#escaping). No part may run past a '<':
# a scan from one '<' then never covers the text a later '<' scans again, so a message full of
# unclosed "<@U1|" costs one pass, not one pass per '<'.
_MENTION = re.compile(r"<@[A-Z0-9]++(?:\|[^<>]*+)?+>")
_SLACK_LINK = re.compile(r"<((?:https?|mailto):[^<>|]*+)(?:\|[^<>]*+)?+>")


def mentions_user(text: str, user_id: str | None) -> bool:
    """Whether Slack's text mentions user_id."""
    return bool(user_id) and f"<@{user_id}" in text


def typed_text(text: str) -> str:
    """Slack's message text as the person typed it: mentions removed, links and entities
    undone."""
    without_mentions = _MENTION.sub("", text)
    linked = _SLACK_LINK.sub(lambda m: m.group(1), without_mentions)
    return html.unescape(linked).strip()
