"""Every ``Reply`` of the conversation as a Slack message: Block Kit, fallback text and files.

The summary itself is laid out in ``bot.slack.blocks``; this module adds the picker, cluster
list, help and problem messages, tables and the "working on it" placeholder.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    CheckboxesElement,
    ContextBlock,
    HeaderBlock,
    InputBlock,
    MarkdownTextObject,
    Option,
    PlainTextInputElement,
    PlainTextObject,
    SectionBlock,
    StaticSelectElement,
)

from bot.conversation.admin import admin_text
from bot.conversation.attachments import full_table_attachments
from bot.conversation.fleet import fleet_line
from bot.conversation.formatting import table_text
from bot.conversation.replies import (
    AdminReply,
    Attachment,
    ClusterOption,
    ClustersReply,
    FilesReply,
    FleetLine,
    FleetReply,
    MessageReply,
    PickerReply,
    Reply,
    SummaryReply,
    TableReply,
)
from bot.conversation.rich import Rich, plain
from bot.slack.blocks import (
    HEADER_TEXT_MAX,
    SECTION_TEXT_MAX,
    clip,
    summary_message,
)
from bot.slack.markup import (
    encode_blocks,
    encode_text,
    escaped_length,
)
from bot.slack.mrkdwn import code_block, mrkdwn, mrkdwn_line

# Block and action ids of the picker, matched in ``bot.slack.listeners.actions``.
PICKER_CLUSTER = "picker_cluster"
PICKER_CONTEXT = "picker_context"
PICKER_NAMESPACE = "picker_namespace"
PICKER_USAGE = "picker_usage"
USAGE_OPTION_VALUE = "usage"
PICKER_CONFIRM = "picker_confirm"
PICKER_CANCEL = "picker_cancel"

# Slack: a static_select holds at most 100 options, option text at most 75 characters.
MAX_OPTIONS = 100
OPTION_TEXT_MAX = 75


@dataclass(frozen=True, slots=True)
class SlackMessage:
    """What the delivery layer sends, already in Slack's wire encoding.

    Built from plain text and blocks (as the views write them); construction encodes both with
    ``bot.slack.markup``, so nothing a view forgets to escape can reach Slack raw. Files' titles
    are encoded when uploaded (``Delivery.upload``).
    """

    blocks: list[dict[str, Any]]
    text: str
    attachments: tuple[Attachment, ...] = ()
    problem: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "blocks", encode_blocks(self.blocks))
        object.__setattr__(self, "text", encode_text(self.text))


@dataclass(frozen=True, slots=True)
class SlackView:
    """A Home tab or a modal as the delivery layer sends it (``views.publish``,
    ``views.open``): construction encodes every text object in it, like ``SlackMessage``.
    ``fields`` are the view's other keys (title, submit, callback_id, private_metadata)."""

    kind: Literal["home", "modal"]
    blocks: list[dict[str, Any]]
    fields: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "blocks", encode_blocks(self.blocks))
        object.__setattr__(self, "fields", encode_blocks([self.fields])[0])

    def payload(self) -> dict[str, Any]:
        return {"type": self.kind, **self.fields, "blocks": self.blocks}


def _prefix_within(text: str, limit: int) -> int:
    """How many leading characters of ``text`` stay within ``limit`` once encoded."""
    used = 0
    for index, char in enumerate(text):
        used += escaped_length(char)
        if used > limit:
            return index
    return len(text)


def _sections(text: str) -> list[Block]:
    """Long text split over as many sections as needed, at line breaks where possible; each
    section fits Slack's limit once encoded."""
    blocks: list[Block] = []
    rest = text
    limit = SECTION_TEXT_MAX
    while rest:
        fits = _prefix_within(rest, limit)
        if fits == len(rest):
            chunk, rest = rest, ""
        else:
            cut = rest.rfind("\n", 0, fits)
            cut = cut if cut > 0 else max(fits, 1)
            chunk, rest = rest[:cut], rest[cut:].lstrip("\n")
        blocks.append(SectionBlock(text=MarkdownTextObject(text=chunk)))
    return blocks


def working_message(what: str) -> SlackMessage:
    text = f":hourglass_flowing_sand: Working on it: {what}…"
    return SlackMessage(
        [SectionBlock(text=MarkdownTextObject(text=clip(text, 3000))).to_dict()],
        f"Working on it: {what}…",
    )


def text_message(reply: MessageReply) -> SlackMessage:
    blocks: list[Block] = []
    prefix = ":warning: " if reply.tone == "problem" else ""
    if reply.title:
        blocks.append(
            SectionBlock(text=MarkdownTextObject(text=clip(f"{prefix}*{reply.title}*", 3000)))
        )
        prefix = ""
    text = mrkdwn(reply.text)
    blocks.extend(_sections(prefix + text))
    fallback = f"{reply.title}: {text}" if reply.title else text
    return SlackMessage(
        [b.to_dict() for b in blocks[:50]],
        clip(fallback, 3000),
        problem=reply.tone == "problem",
        attachments=reply.attachments,
    )


def table_message(reply: TableReply) -> SlackMessage:
    """The tables in a code block, laid out at the reply's screen width (optional columns left
    out); when they do not fit a message, as a file laid out at its full width."""
    screen_width = reply.width if reply.screen_width is None else reply.screen_width
    screen = table_text(reply.sections, screen_width)
    fenced = f"*{reply.title}*\n{code_block(screen)}"
    if escaped_length(fenced) <= SECTION_TEXT_MAX:
        return SlackMessage(
            [SectionBlock(text=MarkdownTextObject(text=fenced)).to_dict()],
            reply.title,
            attachments=reply.attachments,
        )
    whole = screen if screen_width == reply.width else table_text(reply.sections, reply.width)
    attachment = Attachment(reply.filename, reply.title, lambda: whole.encode("utf-8"))
    rows = reply.rows if reply.rows is not None else whole.count("\n") + 1
    text = (
        f"*{reply.title}*\n{rows:,} rows are too many for a message; "
        f"the whole table is in `{reply.filename}` below."
    )
    return SlackMessage(
        [SectionBlock(text=MarkdownTextObject(text=text)).to_dict()],
        reply.title,
        attachments=(attachment, *reply.attachments),
    )


def files_message(reply: FilesReply) -> SlackMessage:
    names = ", ".join(f"`{a.filename}`" for a in reply.attachments)
    text = f"{reply.text} Attached: {names}."
    return SlackMessage(
        [SectionBlock(text=MarkdownTextObject(text=clip(text, 3000))).to_dict()],
        reply.text,
        attachments=reply.attachments,
    )


def _option(option: ClusterOption) -> Option:
    label = (
        option.display_name
        if option.display_name == option.name
        else (f"{option.display_name} ({option.name})")
    )
    return Option(value=option.name, text=clip(label, OPTION_TEXT_MAX))


def _context_select(chosen: ClusterOption, context: str | None) -> Block:
    context_options = [
        Option(value=c, text=clip(c, OPTION_TEXT_MAX)) for c in chosen.contexts[:MAX_OPTIONS]
    ]
    return SectionBlock(
        block_id=PICKER_CONTEXT,
        text=MarkdownTextObject(text=f"*Context* of {chosen.name}"),
        accessory=StaticSelectElement(
            action_id=PICKER_CONTEXT,
            placeholder="Choose a context",
            options=context_options,
            initial_option=next((o for o in context_options if o.value == context), None),
        ),
    )


def _namespace_input(namespace: str | None) -> Block:
    return InputBlock(
        block_id=PICKER_NAMESPACE,
        label="Namespace (optional)",
        optional=True,
        element=PlainTextInputElement(
            action_id=PICKER_NAMESPACE,
            placeholder="e.g. team-a",
            initial_value=namespace,
            max_length=63,
        ),
    )


def _usage_box() -> Block:
    """Only where the registry allows nvidia-smi exec for the chosen cluster; its value is
    read from the Confirm payload's state, like the namespace."""
    return InputBlock(
        block_id=PICKER_USAGE,
        label="Real usage",
        optional=True,
        element=CheckboxesElement(
            action_id=PICKER_USAGE,
            options=[
                Option(
                    value=USAGE_OPTION_VALUE,
                    label="Also run nvidia-smi in the pods (real usage)",
                    description="Point-in-time utilisation and memory used per pod",
                )
            ],
        ),
    )


def _picker_end() -> list[Block]:
    return [
        ActionsBlock(
            block_id="picker_actions",
            elements=[
                ButtonElement(
                    text="Confirm", action_id=PICKER_CONFIRM, style="primary", value="confirm"
                ),
                ButtonElement(text="Cancel", action_id=PICKER_CANCEL, value="cancel"),
            ],
        ),
        ContextBlock(
            elements=[
                MarkdownTextObject(
                    text="Nothing is collected until you press *Confirm*. The summary shows HAMi's "
                    "allocation state, not live GPU utilisation."
                )
            ]
        ),
    ]


def picker_message(reply: PickerReply) -> SlackMessage:
    blocks: list[Block] = [
        HeaderBlock(
            text=PlainTextObject(text=clip("Summarise a registered cluster", HEADER_TEXT_MAX))
        )
    ]
    if not reply.options:
        blocks.extend(_sections(reply.hint or "No clusters are registered for this channel."))
        return SlackMessage([b.to_dict() for b in blocks], "No clusters to pick from")
    options = [_option(o) for o in reply.options[:MAX_OPTIONS]]
    chosen = next((o for o in reply.options if o.name == reply.cluster), None)
    initial = next((o for o in options if chosen and o.value == chosen.name), None)
    blocks.append(
        SectionBlock(
            block_id=PICKER_CLUSTER,
            text=MarkdownTextObject(text="*Cluster*"),
            accessory=StaticSelectElement(
                action_id=PICKER_CLUSTER,
                placeholder="Choose a cluster",
                options=options,
                initial_option=initial,
            ),
        )
    )
    if len(reply.options) > MAX_OPTIONS:
        blocks.append(
            ContextBlock(
                elements=[
                    MarkdownTextObject(
                        text=f"{len(reply.options) - MAX_OPTIONS} more clusters are not in"
                        " this list; use `/hami-summary clusters` and `/hami-summary <cluster>`."
                    )
                ]
            )
        )
    if chosen is not None and len(chosen.contexts) > 1:
        blocks.append(_context_select(chosen, reply.context))
    blocks.append(_namespace_input(reply.namespace))
    if chosen is not None and chosen.nvidia_smi_allowed:
        blocks.append(_usage_box())
    blocks.extend(_picker_end())
    return SlackMessage([b.to_dict() for b in blocks], "Pick a cluster to summarise")


def clusters_message(reply: ClustersReply) -> SlackMessage:
    if not reply.options:
        return text_message(
            MessageReply(
                title="Registered clusters",
                text=(reply.hint or "") + _admin_notes(reply.admin_notes),
            )
        )
    lines = []
    for option in reply.options:
        line = f"• *{option.name}*"
        if option.display_name != option.name:
            line += f" ({option.display_name})"
        if option.contexts:
            line += " — contexts: " + ", ".join(f"`{c}`" for c in option.contexts)
        if option.runtime_allowed:
            line += " · runtime allowed"
        if option.nvidia_smi_allowed:
            line += " · real usage (`usage`) allowed"
        lines.append(line)
    text = "\n".join(lines) + "\n\nAsk with `/hami-summary <cluster> [ns=NAMESPACE]`."
    text += _admin_notes(reply.admin_notes)
    return text_message(MessageReply(title="Clusters you may query here", text=text))


# The admin report answers ephemerally (no files possible there): whole lines up to this many
# characters, then a count and where to see everything. Split into sections of at most 3,000,
# it stays far below the 50-block limit.
ADMIN_REPORT_MAX_CHARS = 20_000


def admin_message(reply: AdminReply) -> SlackMessage:
    """The admin report, with real mentions of the users, channels and user groups allowed to
    query each cluster."""
    text = admin_text(
        reply.report,
        check_hint="`/hami-summary admin check`",
        max_chars=ADMIN_REPORT_MAX_CHARS,
        measure=lambda line: len(mrkdwn_line(line)),
    )
    title = "Admin: kubeconfig discovery and cluster access"
    if reply.report.checked:
        title += " (API servers checked)"
    return text_message(MessageReply(title=title, text=text))


def _admin_notes(notes: tuple[str, ...]) -> str:
    if not notes:
        return ""
    return "\n\n*For the bot's admin:*\n" + "\n".join(f"• {note}" for note in notes)


# Sections of one fleet message; the list goes into a file beyond that (Slack: 50 blocks).
FLEET_MAX_SECTIONS = 45
FLEET_FILE = "hami-fleet.txt"


def fleet_icon(line: FleetLine) -> str:
    """How a fleet line starts: what kind of answer the cluster gave, at a glance."""
    if line.alerts:
        return ":rotating_light:"
    if line.timed_out:
        return ":hourglass_flowing_sand:"
    if line.needs_context:
        return ":grey_question:"
    if line.headline is None:
        return ":warning:"
    return "•"


def fleet_note(reply: FleetReply) -> str:
    return (
        "HAMi allocation (what the scheduler handed out), not GPU utilisation. Clusters were "
        f"collected in parallel through the shared cache, at most {reply.wait_seconds:g} s in "
        "all. `/hami-summary <cluster>` for one cluster's summary."
    )


def fleet_message(reply: FleetReply) -> SlackMessage:
    if not reply.lines:
        return text_message(MessageReply(reply.hint or "", title="No clusters to show"))
    lines = [
        f"{fleet_icon(line)} {mrkdwn(Rich.of(fleet_line(line, reply.wait_seconds)))}"
        for line in reply.lines
    ]
    title = f"Fleet: {len(lines):,} cluster{'s' if len(lines) != 1 else ''} you may query here"
    sections = _sections("\n".join(lines))
    attachments: tuple[Attachment, ...] = ()
    if len(sections) > FLEET_MAX_SECTIONS:
        whole = plain(Rich(tuple(fleet_line(line, reply.wait_seconds) for line in reply.lines)))
        sections = sections[:FLEET_MAX_SECTIONS]
        sections.append(
            SectionBlock(
                text=MarkdownTextObject(text=f"…the other clusters are in `{FLEET_FILE}` below.")
            )
        )
        attachments = (Attachment(FLEET_FILE, title, lambda: whole.encode("utf-8")),)
    blocks: list[Block] = [
        HeaderBlock(text=PlainTextObject(text=clip(title, HEADER_TEXT_MAX))),
        *sections,
        ContextBlock(elements=[MarkdownTextObject(text=clip(fleet_note(reply), 2000))]),
    ]
    fallback = f"{title}: " + ", ".join(line.option.name for line in reply.lines)
    return SlackMessage(
        [b.to_dict() for b in blocks], clip(fallback, 3000), attachments=attachments
    )


def slack_message(reply: Reply, *, files_possible: bool = True) -> SlackMessage:
    """``reply`` as a Slack message; with ``files_possible`` False no file is promised."""
    if isinstance(reply, SummaryReply):
        built = summary_message(
            reply.summary,
            age_seconds=reply.age_seconds,
            actions=reply.actions,
            notes=reply.notes,
            files_possible=files_possible,
            pending=reply.pending,
        )
        attachments = list(reply.attachments)
        if built.needs_files:
            # Nothing is silently cut: what the message and its buttons cannot bring goes with
            # it as files.
            attachments.extend(full_table_attachments(reply.summary))
        return SlackMessage(built.blocks, built.text, tuple(attachments))
    if isinstance(reply, TableReply):
        return table_message(reply)
    if isinstance(reply, FilesReply):
        return files_message(reply)
    if isinstance(reply, PickerReply):
        return picker_message(reply)
    if isinstance(reply, ClustersReply):
        return clusters_message(reply)
    if isinstance(reply, AdminReply):
        return admin_message(reply)
    if isinstance(reply, FleetReply):
        return fleet_message(reply)
    return text_message(reply)
