"""How much of a screen a Block Kit message takes: its visible text and rendered lines.

A model of Slack's rendering in a thread pane on a laptop, where the bot's answers appear:
running text wraps at about ``TEXT_WIDTH`` characters, a code block shows ``CODE_WIDTH``
monospace characters per line, a header, a divider and a row of buttons take one line each,
and section fields sit two to a row. Visible text is what a reader sees: markup (``*bold*``,
``_italic_``, code fences and backticks) removed, entities (``&amp;``) and links
(``<url|label>``) shown as they read, an emoji code (``:warning:``) as one character.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

TEXT_WIDTH = 80
CODE_WIDTH = 72
FENCE = "```"

# Slack's link and mention markup reads as its label (or as the id after @ / #).
_LINK = re.compile(r"<(?:[^<>|]*+\|)?+([^<>]*+)>")
_EMOJI = re.compile(r":[a-z_][a-z0-9_+-]*+:")
_EMPHASIS = re.compile(r"(?<![\w*_~`])([*_~])(?=\S)([^\n]*?\S)\1(?![\w*_~`])")


def _plain(mrkdwn: str) -> str:
    text = _LINK.sub(r"\1", mrkdwn)
    text = _EMOJI.sub("?", text)
    text = _EMPHASIS.sub(r"\2", text)
    text = text.replace("`", "")
    return html.unescape(text)


def _segments(mrkdwn: str) -> Iterable[tuple[bool, str]]:
    """(inside a code block?, text) in order."""
    for index, part in enumerate(mrkdwn.split(FENCE)):
        if part:
            yield index % 2 == 1, part


def text_lines(mrkdwn: str, width: int = TEXT_WIDTH) -> list[str]:
    """The visible lines of one mrkdwn text (code block lines separate), before wrapping."""
    lines: list[str] = []
    for code, part in _segments(mrkdwn):
        shown = html.unescape(part) if code else _plain(part)
        lines.extend(line for line in shown.split("\n"))
    return [line for line in lines if line.strip() or len(lines) == 1]


def _wrapped(mrkdwn: str) -> int:
    count = 0
    for code, part in _segments(mrkdwn):
        shown = html.unescape(part) if code else _plain(part)
        width = CODE_WIDTH if code else TEXT_WIDTH
        for line in shown.strip("\n").split("\n"):
            count += max(1, math.ceil(len(line) / width))
    return count


def _texts(block: Mapping[str, Any]) -> list[str]:
    kind = block.get("type")
    if kind in ("section", "header"):
        texts = [block["text"]["text"]] if "text" in block else []
        texts += [f["text"] for f in block.get("fields", ())]
        return texts
    if kind == "context":
        return [e["text"] for e in block.get("elements", ()) if "text" in e]
    if kind == "actions":
        return [e["text"]["text"] for e in block.get("elements", ()) if "text" in e]
    return []


def visible_text(blocks: Sequence[Mapping[str, Any]]) -> str:
    """Everything a reader sees of the message, markup removed, one block per line."""
    parts = []
    for block in blocks:
        for text in _texts(block):
            parts.append("\n".join(text_lines(text)))
    return "\n".join(parts)


def rendered_lines(blocks: Sequence[Mapping[str, Any]]) -> int:
    """How many lines the message takes on screen (see the module's docstring)."""
    total = 0
    for block in blocks:
        kind = block.get("type")
        if kind in ("header", "divider", "actions"):
            total += 1
        elif kind == "section":
            if "text" in block:
                total += _wrapped(block["text"]["text"])
            fields = [_wrapped(f["text"]) for f in block.get("fields", ())]
            total += sum(max(fields[i : i + 2]) for i in range(0, len(fields), 2))
        elif kind == "context":
            total += _wrapped(" ".join(_texts(block)))
        else:
            total += 1
    return total


def code_blocks(blocks: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    """The lines of every code block in the message, as shown."""
    found = []
    for block in blocks:
        for text in _texts(block):
            for code, part in _segments(text):
                if code:
                    found.append(html.unescape(part).strip("\n").split("\n"))
    return found
