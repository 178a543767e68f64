"""What a conversation answers, independent of where it is shown.

The Slack surfaces turn these into Block Kit and file uploads; the chat mode prints them and
saves files. Files are produced lazily (``Attachment.render``) so Slack can show the text first
and upload a chart afterwards.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from bot.conversation.admin import AdminReport
from bot.conversation.alerts import FiringAlert
from bot.conversation.rich import Text
from bot.store.state import ClusterTarget
from core.errors import InputError
from core.headline import ClusterHeadline
from core.history.changes import Changes
from core.history.gpu_hours import UsageReport
from core.model import Summary
from core.notify.rules import AlertRule
from core.notify.schedule import Digest
from core.pending.pending_list import PendingCount
from core.views.table_spec import Table

Tone = Literal["info", "problem"]


@dataclass(frozen=True, slots=True)
class Attachment:
    """A file to hand over with a reply (chart PNG, CSV, Markdown table)."""

    filename: str
    title: str
    render: Callable[[], bytes]


@dataclass(frozen=True, slots=True)
class SummaryRef:
    """Enough to build a summary again: for the Refresh/GPUs/Workloads/CSV buttons.

    Pasted metrics are found through the thread they were given in; a cluster by name.
    Encoded into a button ``value`` (Slack allows 2,000 characters there). The cluster's
    ``usage`` keeps a real-usage (nvidia-smi) summary one on Refresh.
    """

    channel: str | None = None
    thread_ts: str | None = None
    cluster: ClusterTarget | None = None
    namespace: str | None = None
    node: str | None = None

    @property
    def usage(self) -> bool:
        """Whether the summary has real usage (nvidia-smi), which only clusters can have."""
        return self.cluster is not None and self.cluster.usage

    def to_value(self) -> str:
        data: dict[str, object] = {}
        if self.channel:
            data["ch"] = self.channel
        if self.thread_ts:
            data["th"] = self.thread_ts
        if self.cluster is not None:
            data["cl"] = self.cluster.cluster
            if self.cluster.context:
                data["cx"] = self.cluster.context
            if self.cluster.runtime:
                data["rt"] = 1
            if self.cluster.usage:
                data["us"] = 1
        if self.namespace:
            data["ns"] = self.namespace
        if self.node:
            data["no"] = self.node
        return json.dumps(data, separators=(",", ":"))

    @classmethod
    def from_value(cls, value: str) -> SummaryRef:
        try:
            data = json.loads(value)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise InputError("That button belongs to a message this bot cannot read any more.")

        def text(key: str) -> str | None:
            item = data.get(key)
            return item if isinstance(item, str) and item else None

        cluster_name = text("cl")
        cluster = (
            ClusterTarget(
                cluster_name, text("cx"), runtime=bool(data.get("rt")), usage=bool(data.get("us"))
            )
            if cluster_name
            else None
        )
        return cls(
            channel=text("ch"),
            thread_ts=text("th"),
            cluster=cluster,
            namespace=text("ns"),
            node=text("no"),
        )


@dataclass(frozen=True, slots=True)
class ReplyAction:
    """A follow-up offered under a reply (Slack: a button): ``action`` is what a press asks
    (``ButtonIntent.action``), ``value`` the ``SummaryRef`` it asks it of."""

    label: str
    action: str
    value: str


# Offered under every summary, in this order: (action, label).
SUMMARY_ACTIONS = (
    ("refresh", "Refresh"),
    ("gpus", "GPUs"),
    ("workloads", "Workloads"),
    ("csv", "CSV"),
)
# After them, under an allocation-only summary of a cluster whose registry entry allows
# nvidia-smi: the same cluster, context and filters again with real usage, in place.
USAGE_ACTION = ("usage", "Real usage")


@dataclass(frozen=True, slots=True)
class SummaryReply:
    """A whole summary to show, with its chart (and tables that do not fit, added by the view)."""

    summary: Summary
    ref: SummaryRef
    age_seconds: float | None
    attachments: tuple[Attachment, ...] = ()
    notes: tuple[str, ...] = ()
    # The cluster's registry entry allows nvidia-smi and this summary is allocation only:
    # surfaces offer real usage for the same cluster, context and filters (Slack: a button).
    usage_available: bool = False
    # A cluster's pods pending on HAMi's resources, for the attention list (None: not known).
    pending: PendingCount | None = None

    @property
    def actions(self) -> tuple[ReplyAction, ...]:
        """The follow-ups offered under this summary, each naming it by its ``ref``."""
        value = self.ref.to_value()
        offered = [*SUMMARY_ACTIONS, *([USAGE_ACTION] if self.usage_available else [])]
        return tuple(ReplyAction(label, action, value) for action, label in offered)


@dataclass(frozen=True, slots=True)
class TableSection:
    """One table of a ``TableReply``: its columns and shown cells (``TableSpec.table``). A
    titled one has its own title and underline above it; an untitled one is named by the
    reply's title."""

    table: Table
    titled: bool = False


@dataclass(frozen=True, slots=True)
class ChangesSection:
    """What changed between two snapshots, worded and laid out by ``core.views.changes_view``;
    ``subject`` names what was compared when it is not a cluster (two pastes)."""

    changes: Changes
    subject: str | None = None


@dataclass(frozen=True, slots=True)
class GpuHoursSection:
    """GPU-hours per namespace over the kept history, laid out by
    ``core.views.gpu_hours_view``; ``subject`` names the cluster."""

    report: UsageReport
    subject: str


ReplySection = TableSection | ChangesSection | GpuHoursSection


@dataclass(frozen=True, slots=True)
class TableReply:
    """Full tables (all GPUs, all workloads, what changed) as data, shown or sent as a file.

    Each surface lays the sections out in fixed-width text, a blank line between two
    (``bot.conversation.formatting.table_text``): at ``width`` for files and terminals, at
    ``screen_width`` for a chat code block, which leaves optional columns out.
    """

    title: str
    sections: tuple[ReplySection, ...]
    filename: str
    # How many rows the tables have; None: as many as the text laid out at ``width`` splits
    # into at its newlines.
    rows: int | None
    width: int
    attachments: tuple[Attachment, ...] = ()  # sent with it (e.g. a chart)
    # None: the code block shows the ``width`` layout too.
    screen_width: int | None = None


@dataclass(frozen=True, slots=True)
class FilesReply:
    """Files asked for (CSV, chart), with a line saying what they are."""

    text: str
    attachments: tuple[Attachment, ...]


@dataclass(frozen=True, slots=True)
class MessageReply:
    """Words only: help, a hint, or a problem with the input (``tone='problem'``)."""

    text: Text
    title: str | None = None
    tone: Tone = "info"
    attachments: tuple[Attachment, ...] = ()  # sent with it (the whole list it shortens)


@dataclass(frozen=True, slots=True)
class ClusterOption:
    """A registered cluster as the picker and ``clusters`` show it."""

    name: str
    display_name: str
    contexts: tuple[str, ...]
    runtime_allowed: bool = False
    nvidia_smi_allowed: bool = False
    # "file:line" of the cluster's registry entry: where an admin changes what it allows.
    defined_at: str = ""
    # What the notifier posts of it unasked (``bot.notify``): its digests and alert rules.
    digests: tuple[Digest, ...] = ()
    alerts: tuple[AlertRule, ...] = ()


@dataclass(frozen=True, slots=True)
class PickerReply:
    """The ephemeral cluster picker: nothing is collected until Confirm."""

    options: tuple[ClusterOption, ...]
    cluster: str | None = None
    context: str | None = None
    namespace: str | None = None
    hint: str | None = None


@dataclass(frozen=True, slots=True)
class ClustersReply:
    options: tuple[ClusterOption, ...]
    hint: str | None = None
    # For whoever runs the bot: access that could not be checked (e.g. a missing scope).
    admin_notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class AdminReply:
    """The admin report (kubeconfig discovery, cluster access); only ever shown to an admin."""

    report: AdminReport


@dataclass(frozen=True, slots=True)
class FleetLine:
    """One cluster in the fleet view: collected, failed, still collecting, or not collected
    because it has several contexts and the bot never picks one itself."""

    option: ClusterOption
    context: str | None = None
    headline: ClusterHeadline | None = None
    age_seconds: float | None = None  # of the collection shown
    scraped_at: float | None = None  # Unix time of that collection
    problem: str | None = None
    timed_out: bool = False
    alerts: tuple[FiringAlert, ...] = ()
    pending: PendingCount | None = None  # pods pending on HAMi's resources at that scrape

    @property
    def needs_context(self) -> bool:
        return len(self.option.contexts) > 1 and self.context is None


@dataclass(frozen=True, slots=True)
class FleetReply:
    lines: tuple[FleetLine, ...]
    wait_seconds: float
    hint: str | None = None  # what to do when there is no cluster to show


Reply = (
    SummaryReply
    | TableReply
    | FilesReply
    | MessageReply
    | PickerReply
    | ClustersReply
    | AdminReply
    | FleetReply
)


def problem_reply(error: InputError) -> MessageReply:
    """A problem with what a person gave or asked, in their words (``core.errors.InputError``)."""
    return MessageReply(text=error.message, tone="problem", title="I could not use that")


def new_error_id() -> str:
    """A short id that ties an apology shown to a person to the log entry with the details."""
    return uuid.uuid4().hex[:8]


def internal_error_reply(error_id: str) -> MessageReply:
    """The only thing a person sees of an internal error: an apology and an id to report."""
    return MessageReply(
        title="Something went wrong on my side",
        text=(
            f"Sorry, I could not finish that (error id `{error_id}`). It is not your input; "
            "the details are in the bot's log under that id. Please try again, and give the id "
            "to whoever runs this bot if it keeps happening."
        ),
        tone="problem",
    )
