"""The App Home tab: the user's clusters at a glance, each with Summary, Changes and Fit.

Built from the same ``FleetReply`` as ``/hami-summary fleet`` (so it shows exactly the
clusters the registry lets this user query, and nothing of the others). Per cluster: its
headline, when it was last scraped (a Slack date, shown in the reader's time zone) and its
firing alerts, then the buttons. The fit button opens a small form for the job shape
(``fit_modal``); answers go to the user's DM with the bot.

Views are plain text here and encoded by ``bot.slack.markup`` like every message.
"""

from __future__ import annotations

import json
from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    DividerBlock,
    HeaderBlock,
    InputBlock,
    MarkdownTextObject,
    PlainTextInputElement,
    PlainTextObject,
    SectionBlock,
)

from bot.conversation.fleet import alerts_text, fleet_line, status_text
from bot.conversation.help import ALLOCATION_NOTE
from bot.conversation.replies import FleetLine, FleetReply
from bot.conversation.rich import Rich
from bot.slack.blocks import clip
from bot.slack.markup import encode_text, slack_date
from bot.slack.messages import SlackView, fleet_icon
from bot.slack.mrkdwn import mrkdwn
from core.errors import InputError
from core.fit_shape import SHAPE_EXAMPLES

HOME_REFRESH = "home_refresh"
HOME_SUMMARY = "home_summary"
HOME_CHANGES = "home_changes"
HOME_FIT = "home_fit"
HOME_ACTIONS = (HOME_REFRESH, HOME_SUMMARY, HOME_CHANGES, HOME_FIT)
FIT_MODAL = "home_fit_shape"
FIT_SHAPE_BLOCK = "fit_shape"
FIT_SHAPE_INPUT = "fit_shape_input"

# Slack: at most 100 blocks in a Home tab. A cluster takes four; past this many clusters the
# rest are listed as lines without buttons.
MAX_BLOCKS = 100
CLUSTERS_WITH_BUTTONS = 22


def cluster_value(line: FleetLine) -> str:
    """What a cluster's buttons carry: its name and context (checked again when pressed)."""
    data = {"cl": line.option.name}
    if line.context:
        data["cx"] = line.context
    return json.dumps(data, separators=(",", ":"))


def read_cluster_value(value: str) -> tuple[str, str | None]:
    """(cluster, context) from a Home button or the fit form; ``InputError`` otherwise."""
    try:
        data = json.loads(value)
    except ValueError:
        data = None
    cluster = data.get("cl") if isinstance(data, dict) else None
    context = data.get("cx") if isinstance(data, dict) else None
    if not isinstance(cluster, str) or not cluster:
        raise InputError("That button belongs to a Home tab this bot cannot read any more.")
    return cluster, context if isinstance(context, str) and context else None


def _cluster_blocks(line: FleetLine, wait_seconds: float) -> list[Block]:
    option = line.option
    name = f"*{option.name}*" + (
        f" ({option.display_name})" if option.display_name != option.name else ""
    )
    blocks: list[Block] = [
        SectionBlock(
            text=MarkdownTextObject(
                text=clip(f"{fleet_icon(line)} {name}\n{status_text(line, wait_seconds)}", 3000)
            )
        )
    ]
    facts = []
    if line.scraped_at is not None:
        facts.append(f"Last scrape {slack_date(line.scraped_at)}")
    facts.append(alerts_text(line.alerts) if line.alerts else "No alert firing")
    blocks.append(ContextBlock(elements=[MarkdownTextObject(text=clip(" · ".join(facts), 2000))]))
    if not line.needs_context:
        value = cluster_value(line)
        blocks.append(
            ActionsBlock(
                elements=[
                    ButtonElement(text="Summary", action_id=HOME_SUMMARY, value=value),
                    ButtonElement(text="Changes (1 h)", action_id=HOME_CHANGES, value=value),
                    ButtonElement(text="Fit a job…", action_id=HOME_FIT, value=value),
                ]
            )
        )
    blocks.append(DividerBlock())
    return blocks


def _intro(reply: FleetReply, published_at: float) -> list[Block]:
    return [
        HeaderBlock(text=PlainTextObject(text="Your GPU clusters")),
        SectionBlock(
            text=MarkdownTextObject(
                text=(
                    "The clusters the registry lets you query, each with HAMi's allocation. "
                    "Summary, Changes and Fit answer in our DM."
                )
            )
        ),
        ContextBlock(
            elements=[
                MarkdownTextObject(
                    text=clip(
                        f"Updated {slack_date(published_at)}; each cluster had at most "
                        f"{reply.wait_seconds:g} s to answer. " + mrkdwn(Rich.of(ALLOCATION_NOTE)),
                        2000,
                    )
                )
            ]
        ),
        ActionsBlock(
            elements=[ButtonElement(text="Refresh", action_id=HOME_REFRESH, value="refresh")]
        ),
        DividerBlock(),
    ]


def home_view(reply: FleetReply, published_at: float) -> SlackView:
    """The Home tab of ``reply``'s clusters."""
    blocks = _intro(reply, published_at)
    if not reply.lines:
        blocks.append(
            SectionBlock(
                text=MarkdownTextObject(
                    text=clip(reply.hint or "No cluster is registered for you.", 3000)
                )
            )
        )
    for line in reply.lines[:CLUSTERS_WITH_BUTTONS]:
        blocks.extend(_cluster_blocks(line, reply.wait_seconds))
    rest = reply.lines[CLUSTERS_WITH_BUTTONS:]
    if rest:
        listed = "\n".join(
            f"• {mrkdwn(Rich.of(fleet_line(line, reply.wait_seconds)))}" for line in rest
        )
        blocks.append(
            SectionBlock(
                text=MarkdownTextObject(
                    text=clip(
                        f"*{len(rest):,} more clusters* (`/hami-summary fleet` shows them all):"
                        f"\n{listed}",
                        3000,
                    )
                )
            )
        )
    return SlackView("home", [b.to_dict() for b in blocks[:MAX_BLOCKS]])


def loading_view() -> SlackView:
    """Shown on the first opening while the clusters are collected."""
    blocks = [
        HeaderBlock(text=PlainTextObject(text="Your GPU clusters")),
        SectionBlock(
            text=MarkdownTextObject(
                text=":hourglass_flowing_sand: Reading the clusters you may query…"
            )
        ),
    ]
    return SlackView("home", [b.to_dict() for b in blocks])


def fit_modal(cluster: str, context: str | None) -> SlackView:
    """The form the Fit button opens: one job shape, checked when submitted."""
    metadata = json.dumps({"cl": cluster, **({"cx": context} if context else {})})
    examples = ", ".join(SHAPE_EXAMPLES)
    blocks = [
        SectionBlock(
            text=MarkdownTextObject(
                text=f"Where would a job of this shape be placed in *{cluster}* now?"
            )
        ),
        InputBlock(
            block_id=FIT_SHAPE_BLOCK,
            label="Job shape",
            element=PlainTextInputElement(
                action_id=FIT_SHAPE_INPUT,
                placeholder=clip(f"e.g. {examples}", 150),
                max_length=200,
            ),
            hint=clip(f"GPUs, then cores and memory per GPU, and the model: {examples}", 2000),
        ),
    ]
    fields = {
        "callback_id": FIT_MODAL,
        "title": {"type": "plain_text", "text": "Fit a job"},
        "submit": {"type": "plain_text", "text": "Place it"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "private_metadata": metadata,
    }
    return SlackView("modal", [b.to_dict() for b in blocks], fields)


def shape_error(message: str) -> dict[str, Any]:
    """The ``errors`` answer to a submitted form whose shape is not one (shown under it)."""
    return {"response_action": "errors", "errors": {FIT_SHAPE_BLOCK: encode_text(message, 150)}}
