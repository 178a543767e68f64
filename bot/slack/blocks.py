"""The first reply to a summary as a Slack Block Kit message, built with slack_sdk's models.

One screen at any cluster size: the page of ``core.views.digest`` (headline, capacity by GPU
model, top namespaces, what needs attention, the outlook per model) with the buttons under it
that bring every full table (GPUs, Workloads, CSV). The same function builds what the bot posts
and what ``hami-summary summarize --format blocks`` prints, so the preview is the message.

Slack's limits (https://api.slack.com/reference/block-kit/blocks): at most 50 blocks, section
text at most 3,000 characters, header text at most 150; the models validate themselves when
serialised (``to_dict``). Code blocks are at most 72 characters wide, so they do not wrap in a
thread pane on a laptop. Names and messages go in as plain text, never escaped here:
``bot.slack.markup`` encodes every text object on its way out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    HeaderBlock,
    MarkdownTextObject,
    PlainTextObject,
    SectionBlock,
)

from bot.conversation.formatting import CODE_BLOCK_WIDTH, filter_text, given_text
from bot.conversation.help import ALLOCATION_NOTE
from bot.conversation.replies import ReplyAction
from bot.conversation.rich import Rich
from bot.slack.mrkdwn import code_block, inline_code, mrkdwn
from core.model import Summary
from core.pending.pending_list import PendingCount
from core.summary.input_notes import scheduler_state_words
from core.views.attention import Hints, Line
from core.views.digest import Digest, Section, names_in_full, plain
from core.views.first_page import build_digest
from core.views.outcome_words import SINCE_START, lifetime_words
from core.views.pending_attention import with_pending
from core.views.table_spec import fixed_width
from core.views.tables import age_text
from core.visible_text import visible

MAX_BLOCKS = 50
SECTION_TEXT_MAX = 3000
HEADER_TEXT_MAX = 150
CONTEXT_TEXT_MAX = 2000
BUTTON_VALUE_MAX = 2000
# Fallback ``text`` of chat.postMessage is shown in notifications; Slack truncates at 40,000.
FALLBACK_TEXT_MAX = 3000

# A summary's actions become buttons with this action_id prefix, matched (and taken off) in
# ``bot.slack.listeners.actions``.
SUMMARY_ACTION_PREFIX = "summary_"

# Where the full lists are, in the words of the message: the buttons under it.
SLACK_HINTS = Hints(
    gpus="GPUs button",
    nodes="CSV button",
    namespaces="CSV button",
    workloads="Workloads button",
    runtime="CSV button",
    everything="CSV button",
    fit="`fit 4xH100` in this thread",
    more="Every list in full: the GPUs, Workloads and CSV buttons.",
)
# The same when the message has no buttons: the files attached in the thread.
FILES_HINTS = Hints(
    gpus="files in this thread",
    nodes="files in this thread",
    namespaces="files in this thread",
    workloads="files in this thread",
    runtime="files in this thread",
    everything="files in this thread",
    fit="`fit 4xH100` in this thread",
    more="Every list in full: the files in this thread.",
)


def count(number: int, noun: str, plural_noun: str | None = None) -> str:
    """``1 pod`` / ``2 pods``."""
    return f"{number:,} {noun if number == 1 else plural_noun or noun + 's'}"


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, marking the cut with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


# Sections of measurements asked for (runtime, real usage): rows they leave out go with the
# message as files, as the person asked for them; the allocation tables come from buttons.
MEASURED_SECTIONS = ("hosts", "containers", "real usage")


@dataclass(frozen=True, slots=True)
class SummaryMessage:
    """The message as Slack receives it (blocks not yet encoded), and whether the full tables
    must go with it as files: when it has no buttons to bring them, or when runtime or real
    usage rows did not fit."""

    blocks: list[dict[str, Any]]
    text: str
    needs_files: bool


def _section(text: str) -> SectionBlock:
    return SectionBlock(text=MarkdownTextObject(text=clip(text, SECTION_TEXT_MAX)))


def _context(text: str) -> ContextBlock:
    return ContextBlock(elements=[MarkdownTextObject(text=clip(text, CONTEXT_TEXT_MAX))])


def _when_text(summary: Summary, age_seconds: float | None) -> str:
    """The time of scrape and its age, worded like the text report."""
    src = summary.source
    if src.kind == "cluster":
        fetched = src.fetched_at
        if fetched is None and age_seconds is not None:
            fetched = datetime.now(UTC) - timedelta(seconds=max(0.0, age_seconds))
        return age_text(fetched)
    # Pasted text and files carry no scrape time; a follow-up answered later also says when
    # the metrics were given.
    when = age_text(src.fetched_at, verb="saved" if src.kind == "file" else "scraped")
    if src.fetched_at is None and age_seconds:
        when += f"; {given_text(age_seconds)}"
    return when


def _source_line(summary: Summary, age_seconds: float | None) -> str:
    src = summary.source
    if src.kind == "cluster":
        where = f"cluster *{src.cluster or src.label}*"
        if src.context:
            where += f" (context `{src.context}`)"
    else:
        where = src.label
    inp = summary.input
    parts = [
        f"Source: {where}",
        _when_text(summary, age_seconds),
        f"{inp.surface} metric names from {', '.join(inp.components) or 'no HAMi exporter'}",
    ]
    if inp.hami_version:
        parts.append(f"HAMi {inp.hami_version}")
    state = scheduler_state_words(inp)
    if state:
        parts.append(state)
    if summary.outcomes is not None:
        parts.append(f"{SINCE_START.lower()}: {lifetime_words(summary.outcomes)}")
    filters = filter_text(summary)
    if filters:
        parts.append(f"filter `{filters}`")
    return visible(" · ".join(parts))


def _mrkdwn(line: Line) -> str:
    """Facts with their strong part in bold; names in them shown with control characters
    escaped, so a line stays one line."""
    return " · ".join(
        visible(f"{f.before}*{f.strong}*{f.after}" if f.strong else f.before + f.after)
        for f in line
    )


def _section_text(section: Section) -> str:
    note = f"  _{visible(section.note)}_" if section.note else ""
    parts = [f"*{visible(section.title)}*{note}"]
    if section.table is not None:
        table_lines = fixed_width(section.table, CODE_BLOCK_WIDTH)
        parts.append(code_block("\n".join(table_lines)))
        in_full = names_in_full(section, table_lines)
        if in_full:  # as inline code: a name is shown as written, never as formatting
            names = ", ".join(inline_code(visible(name)) for name in in_full)
            parts.append(f"Nodes: {names}.")
    if section.after:
        parts.append(visible(section.after))
    if section.lines_title:
        parts.append(f"*{visible(section.lines_title)}*")
    parts.extend(f"• {_mrkdwn(item)}" for item in section.lines)
    return "\n".join(parts)


def _digest_blocks(digest: Digest) -> list[Block]:
    blocks: list[Block] = []
    if digest.warnings:
        blocks.append(_section(":warning: " + visible(" ".join(digest.warnings))))
    if digest.scope:
        blocks.append(_context(visible(digest.scope)))
    blocks.append(_section("\n".join(_mrkdwn(line) for line in digest.headline)))
    blocks.extend(_section(_section_text(section)) for section in digest.sections)
    return blocks


def _fallback_text(summary: Summary, digest: Digest) -> str:
    """What a notification shows: the headline and what needs attention, in plain words."""
    text = (
        f"HAMi GPU allocation, {digest.title}: "
        + "; ".join(plain(line) for line in digest.headline)
        + "."
    )
    attention = next((s for s in digest.sections if s.key == "attention"), None)
    items = [item[0].strong for item in attention.lines] if attention is not None else []
    if items and items[0] != "Nothing found":
        text += " Needs attention: " + ", ".join(items) + "."
    runtime = summary.runtime
    if runtime is not None:
        text += (
            f" Runtime: {count(len(runtime.host_gpus), 'host GPU')} and "
            f"{count(len(runtime.containers), 'container')} measured by the vGPU monitors, "
            f"{count(len(runtime.missing_monitors), 'monitor')} not reached."
        )
    if summary.real_usage is not None:
        unread = sum(1 for u in summary.real_usage if u.failure is not None)
        text += (
            f" Real usage: {count(len(summary.real_usage) - unread, 'pod')} read by nvidia-smi, "
            f"{unread:,} could not be read."
        )
    return clip(visible(text), FALLBACK_TEXT_MAX)


# How the attention line about pending pods goes on, under a cluster summary in Slack.
PENDING_ASK = "mention me with `pending` in this thread for HAMi's reasons"


def summary_message(
    summary: Summary,
    *,
    age_seconds: float | None = None,
    actions: Sequence[ReplyAction] = (),
    notes: Sequence[str] = (),
    files_possible: bool = True,
    pending: PendingCount | None = None,
) -> SummaryMessage:
    """The first reply to ``summary``: Block Kit, notification text, and whether it has buttons.

    ``actions`` (the reply's, decided by the conversation) become buttons, unless a value is
    longer than Slack allows. ``files_possible`` False: the bot cannot
    post files here, so a message without buttons points at nothing it cannot deliver.
    """
    buttons = bool(actions) and all(len(a.value) <= BUTTON_VALUE_MAX for a in actions)
    hints = SLACK_HINTS if buttons or not files_possible else FILES_HINTS
    digest = with_pending(build_digest(summary, hints), pending, datetime.now(UTC), PENDING_ASK)
    what = "allocation and real usage" if summary.real_usage is not None else "allocation"
    title = visible(f"HAMi GPU {what}: {digest.title}")
    blocks: list[Block] = [
        HeaderBlock(text=PlainTextObject(text=clip(title, HEADER_TEXT_MAX))),
        _context(_source_line(summary, age_seconds)),
        *_digest_blocks(digest),
    ]
    footer = [digest.more, *notes]
    if digest.basis is not None:
        footer.append(mrkdwn(Rich.of(ALLOCATION_NOTE)))
    blocks.append(_context(visible(" ".join(footer))))
    if buttons:
        blocks.append(
            ActionsBlock(
                block_id="summary_actions",
                elements=[
                    ButtonElement(
                        text=a.label, action_id=SUMMARY_ACTION_PREFIX + a.action, value=a.value
                    )
                    for a in actions
                ],
            )
        )
    measured_left_out = any(
        section.key in MEASURED_SECTIONS and section.table is not None and section.table.omitted
        for section in digest.sections
    )
    return SummaryMessage(
        blocks=[block.to_dict() for block in blocks[:MAX_BLOCKS]],
        text=_fallback_text(summary, digest),
        needs_files=not buttons or measured_left_out,
    )
