"""``hami-summary chat [--example] [FILE]``: the Slack bot's conversation in a terminal.

The same ``bot.conversation.Conversation`` answers as in Slack, in one thread:

* ``/hami-summary ...`` — the slash command (``help``, ``clusters``, ``fleet``, ``digests``,
  ``<cluster> [ns=..]``; with no argument the registered clusters are listed, since a terminal
  has no picker);
* ``@bot ...`` (or ``@hami-summary ...``) — a mention: follow-ups such as ``ns team-a``,
  ``gpus``, ``workloads``, ``csv``, ``chart``, ``help``;
* metrics text pasted over several lines, ended by an empty line (or end of input), and so
  a ``kubectl describe pod`` or ``kubectl get events`` output (why is that pod pending?);
* ``admin`` (or ``admin check``) — the admin report: kubeconfig discovery and who may query
  each registered cluster (the local operator is always an admin);
* ``digests`` — the digests declared in the cluster registry and when they post next;
* any other line is read like a mention; ``quit`` ends.

Replies print as the text report; charts and files are saved, and their paths printed. When
standard input is not a terminal nothing is prompted, so it can be scripted:
``printf 'ns team-a\\n' | hami-summary chat --example``.
"""

from __future__ import annotations

import argparse
import itertools
import logging
import re
import sys
import tempfile
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from bot.cli.main import EXIT_OK, EXIT_USAGE
from bot.conversation.admin import AdminAccess, admin_text
from bot.conversation.fleet import fleet_line
from bot.conversation.formatting import given_text, table_text
from bot.conversation.intents import Ack, CommandIntent, GivenFile, MessageIntent
from bot.conversation.parsing import looks_like_metrics
from bot.conversation.replies import (
    AdminReply,
    Attachment,
    ClusterOption,
    ClustersReply,
    FilesReply,
    FleetReply,
    MessageReply,
    PickerReply,
    Reply,
    SummaryReply,
    TableReply,
    internal_error_reply,
    new_error_id,
)
from bot.conversation.rich import Rich, plain
from bot.conversation.service import Conversation
from core.pending.describe import starts_pod_text
from core.summary.input_notes import human_size
from core.text_decoding import decode_metrics_bytes
from core.views.attention import Hints
from core.views.pending_attention import pending_line
from core.visible_text import visible_lines

log = logging.getLogger("hami_summary.chat")

# The terminal is one conversation: one channel, one thread, the local operator as user
# (who may query every registered cluster: they run the bot with their own kubeconfigs).
CHANNEL = "terminal"
THREAD = "terminal"
COMMAND_PREFIX = "/hami-summary"
MENTION = re.compile(r"^@(bot|hami-summary|hami)\b[:,]?\s*+", re.IGNORECASE)
QUIT_WORDS = ("quit", "exit", "bye")
ADMIN_WORD = "admin"
DIGESTS_WORD = "digests"
# Where the first page says a list goes on, the words of this mode (the CLI's "--format csv"
# does not exist here): ``csv`` saves the CSV and every table in full.
CHAT_HINTS = Hints(
    gpus="type gpus",
    nodes="type csv",
    namespaces="type csv",
    workloads="type workloads",
    runtime="type csv",
    everything="type csv",
    fit="type fit 4xH100",
)
EXAMPLE_RESOURCE = "example-scheduler.prom"

DESCRIPTION = """\
The Slack bot's conversation in this terminal, one thread, no Slack needed. Type:

  /hami-summary ...     the slash command: help, clusters, fleet, digests,
                        <cluster> [ns=NS] [node=NODE]
  @bot ...              a mention: ns team-a, node gpu-node-1, gpus, workloads, csv, chart, help
  metrics text          pasted over several lines, ended by an empty line
  kubectl describe pod  (or kubectl get events) pasted the same way: why it is pending
  admin [check]         kubeconfigs in KUBECONFIG_DIR (or ~/.kube) and who may query each
                        registered cluster; check also asks each API server
  digests               the registered clusters' digests and when they post next
  quit                  leave

Replies print as text; charts and files are saved and their paths printed. Registered
clusters come from HAMI_CLUSTERS_FILE. Piped input works for scripts, e.g.
  printf 'ns team-a\\n' | hami-summary chat --example
"""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "chat",
        help="talk to the bot in this terminal (no Slack needed)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", nargs="?", type=Path, help="a metrics file to load first")
    parser.add_argument(
        "--example",
        action="store_true",
        help="load the bundled example cluster first, so a full answer shows at once",
    )
    parser.add_argument(
        "--out-dir",
        type=Path,
        default=None,
        help="folder for charts and files (default: a new temporary folder)",
    )
    parser.set_defaults(run=run)


class ChatSession:
    """Reads what the person types and prints the conversation's replies."""

    def __init__(self, conversation: Conversation, out_dir: Path, out: TextIO) -> None:
        self.conversation = conversation
        self.out_dir = out_dir
        self.out = out
        self._counter = itertools.count(1)

    # -- output ----------------------------------------------------------------------------

    def say(self, text: str = "") -> None:
        """Print ``text``; a control character in it (an escape sequence in a pod name that
        would recolour or retitle the terminal) is shown as its escape, never sent."""
        print(visible_lines(text), file=self.out, flush=True)

    def _save(self, attachment: Attachment) -> None:
        path = Path(attachment.filename)
        target = self.out_dir / f"{path.stem}-{next(self._counter)}{path.suffix}"
        try:
            target.write_bytes(attachment.render())
        except Exception:
            error_id = new_error_id()
            log.exception("error %s saving %s", error_id, attachment.filename)
            self.say(f"(could not write {attachment.title}; error id {error_id})")
            return
        self.say(f"{attachment.title}: saved to {target}")

    def _options(self, options: Iterable[ClusterOption]) -> None:
        for number, option in enumerate(options, start=1):
            contexts = ", ".join(option.contexts) if option.contexts else "-"
            runtime = "; runtime allowed" if option.runtime_allowed else ""
            self.say(
                f"  {number}. {option.name} ({option.display_name}) contexts: {contexts}{runtime}"
            )

    def show(self, reply: Reply | None) -> None:
        from core.views import text_view

        if reply is None:
            return
        if isinstance(reply, SummaryReply):
            # The first reply, as in Slack: one screen; gpus, workloads and csv bring the rest.
            self.say(text_view.first_page(reply.summary, CHAT_HINTS).rstrip())
            if reply.age_seconds and reply.summary.source.kind != "cluster":
                # The report's header has a cluster's scrape time; pasted text has none, so
                # say when it was given (follow-ups answer from it later).
                self.say(f"(metrics {given_text(reply.age_seconds)})")
            if reply.pending is not None and reply.pending.pods:
                line = pending_line(reply.pending, datetime.now(UTC), "type pending")
                self.say(f"Needs attention too: {line[0].plain()}")
            for note in reply.notes:
                self.say(f"Note: {note}")
            for attachment in reply.attachments:
                self._save(attachment)
        elif isinstance(reply, TableReply):
            self.say(reply.title)
            self.say(table_text(reply.sections, reply.width))
            for attachment in reply.attachments:
                self._save(attachment)
        elif isinstance(reply, FilesReply):
            self.say(plain(reply.text))
            for attachment in reply.attachments:
                self._save(attachment)
        elif isinstance(reply, PickerReply):
            if not reply.options:
                self.say(plain(reply.hint or "No clusters are registered."))
                return
            self.say("Registered clusters (nothing is collected until you ask for one):")
            self._options(reply.options)
            self.say("Ask with: /hami-summary <cluster> [context=CONTEXT] [ns=NAMESPACE]")
        elif isinstance(reply, ClustersReply):
            if not reply.options:
                self.say(plain(reply.hint or "No clusters are registered."))
                return
            self.say("Registered clusters:")
            self._options(reply.options)
        elif isinstance(reply, AdminReply):
            self.say(plain(admin_text(reply.report, check_hint="type admin check")))
        elif isinstance(reply, FleetReply):
            self._fleet(reply)
        elif isinstance(reply, MessageReply):
            if reply.title:
                self.say(("Problem: " if reply.tone == "problem" else "") + plain(reply.title))
            self.say(plain(reply.text))
            for attachment in reply.attachments:
                self._save(attachment)
        self.say()

    def _fleet(self, reply: FleetReply) -> None:
        if not reply.lines:
            self.say(plain(reply.hint or "No clusters are registered."))
            return
        self.say(f"Fleet: {len(reply.lines):,} registered cluster(s), collected in parallel:")
        for line in reply.lines:
            self.say(f"  - {plain(Rich.of(fleet_line(line, reply.wait_seconds)))}")

    # -- input -----------------------------------------------------------------------------

    def _answer(self, what: str, compute: Any) -> None:
        try:
            reply = compute()
        except Exception:
            error_id = new_error_id()
            log.exception("error %s while answering %s", error_id, what)
            reply = internal_error_reply(error_id)
        self.show(reply)

    def load(self, name: str, text: str) -> None:
        """Metrics given as a file (the example, or FILE on the command line)."""
        self._two_phases(name, MessageIntent("", None, CHANNEL, THREAD, (GivenFile(name, text),)))

    def message(self, text: str) -> None:
        self._two_phases("a message", MessageIntent(text, None, CHANNEL, THREAD))

    def command(self, text: str) -> None:
        """The slash command in its two phases, one after the other: what is said at once,
        then what the plan brings. The terminal is one thread: a cluster summary is what later
        follow-ups ask about."""
        self._two_phases("a command", CommandIntent(text, None, CHANNEL, THREAD))

    def _two_phases(self, what: str, intent: CommandIntent | MessageIntent) -> None:
        """``handle`` then ``run``: what is said at once, then what the plan brings."""
        decision: list[Ack] = []
        self._answer(what, lambda: _acknowledged(decision, self.conversation.handle(intent)))
        plan = decision[0].plan if decision else None
        if plan is not None:
            self._answer(what, lambda: self.conversation.run(plan))

    def run(self, lines: Iterable[str], prompt: bool) -> None:
        """Handle ``lines`` until they end or the person quits."""
        paste: list[str] = []

        def flush_paste() -> None:
            if paste:
                text = "\n".join(paste)
                paste.clear()
                self.message(text)

        if prompt:
            self.say("Type /hami-summary help, paste metrics (end with an empty line), or quit.")
        for raw in _prompted(lines, prompt, lambda: bool(paste)):
            line = raw.rstrip("\r\n")
            stripped = line.strip()
            if not stripped:
                flush_paste()
                continue
            if stripped.lower().startswith(COMMAND_PREFIX):
                flush_paste()
                self.command(stripped[len(COMMAND_PREFIX) :])
            elif not paste and (
                stripped.split()[0].lower() == ADMIN_WORD or stripped.lower() == DIGESTS_WORD
            ):
                self.command(stripped)
            elif MENTION.match(stripped):
                flush_paste()
                self.message(MENTION.sub("", stripped, count=1))
            elif (
                paste
                or looks_like_metrics(stripped)
                or stripped.startswith("#")
                or starts_pod_text(stripped)
            ):
                paste.append(line)
            elif stripped.lower() in QUIT_WORDS:
                break
            else:
                self.message(stripped)
        flush_paste()


def _acknowledged(kept: list[Ack], decision: Ack) -> Reply | None:
    """Keep ``decision`` for its plan; show its reply."""
    kept.append(decision)
    return decision.reply


def _prompted(lines: Iterable[str], prompt: bool, in_paste: Any) -> Iterable[str]:
    for line in lines:
        yield line
        if prompt:
            print("...  " if in_paste() else "you> ", end="", file=sys.stdout, flush=True)


# Piped input is read this much at a time, so memory follows the size limit, not the input.
READ_CHUNK_BYTES = 1024 * 1024


class InputTooLargeError(Exception):
    """More bytes than the input limit allows; only ``limit + 1`` of them were read."""


def read_bounded(stream: BinaryIO, limit: int) -> bytes:
    """Up to ``limit`` bytes of ``stream``; ``InputTooLargeError`` as soon as there is more.

    Reads in chunks and stops one byte past the limit, so a paste of any size costs at most
    the limit in memory.
    """
    chunks: list[bytes] = []
    total = 0
    while total <= limit:
        chunk = stream.read(min(READ_CHUNK_BYTES, limit + 1 - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
    raise InputTooLargeError


class ChatInputError(Exception):
    """Input the chat cannot take; the message says what and what to do."""


def _too_large(what: str, limit: int) -> ChatInputError:
    return ChatInputError(
        f"{what} is over the chat's {human_size(limit)} limit, the largest file the bot takes "
        "from Slack (HAMI_SUMMARY_MAX_FILE_BYTES); nothing was summarised. Send the "
        "scheduler's /metrics alone, or summarise a larger file with hami-summary summarize."
    )


def _file_text(path: Path, limit: int) -> tuple[str, str]:
    """(name, text) of the metrics file given on the command line."""
    try:
        with path.open("rb") as handle:
            return path.name, decode_metrics_bytes(read_bounded(handle, limit))
    except InputTooLargeError:
        raise _too_large(str(path), limit) from None
    except OSError as error:
        raise ChatInputError(
            f"cannot read {path}: {error}. Give a text file with HAMi /metrics output."
        ) from None


def _piped_text(limit: int) -> str:
    """Standard input (not a terminal), UTF-8 or UTF-16, refused past the input limit."""
    try:
        return decode_metrics_bytes(read_bounded(sys.stdin.buffer, limit))
    except InputTooLargeError:
        raise _too_large("standard input", limit) from None


def _lines(text: str) -> Iterator[str]:
    """The lines of ``text`` one at a time (no list of every line beside the text)."""
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end + 1
        yield text[start:end]
        start = end


def _example_text() -> str:
    return resources.files("core").joinpath("data", EXAMPLE_RESOURCE).read_text(encoding="utf-8")


def run(args: argparse.Namespace) -> int:
    from bot.clusters.errors import RegistryError
    from bot.clusters.registry import empty_registry, load_registry
    from bot.config import ConfigError, load_config
    from bot.live import RegistryLiveSource
    from bot.notify.records import NotifyRecords
    from bot.store.memory import MemoryStore
    from bot.store.state import BotState

    try:
        config = load_config()
        registry = load_registry(config.clusters_file) if config.clusters_file else empty_registry()
    except (ConfigError, RegistryError) as error:
        print(f"hami-summary chat: {error.message}", file=sys.stderr)
        return EXIT_USAGE
    # The chat answers as the Slack bot does, so it takes what Slack pastes and files can carry;
    # a 10,000-node scheduler's page is for ``summarize`` and its larger input limit.
    limit = config.max_file_bytes
    try:
        first_text = None if args.file is None else _file_text(args.file, limit)
        # Piped input is read before anything is answered: at most the limit, decoded whole.
        piped = None if sys.stdin.isatty() else _piped_text(limit)
    except ChatInputError as error:
        print(f"hami-summary chat: {error}", file=sys.stderr)
        return EXIT_USAGE
    out_dir = args.out_dir or Path(tempfile.mkdtemp(prefix="hami-summary-chat-"))
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        print(f"hami-summary chat: cannot create {out_dir}: {error}", file=sys.stderr)
        return EXIT_USAGE

    store = MemoryStore()
    conversation = Conversation(
        BotState(store),
        RegistryLiveSource(
            registry,
            store,
            timeout_seconds=config.scrape_timeout_seconds,
            settings=config.summary_settings,
        ),
        # The operator at the terminal is the admin: no Slack ids to list.
        admin=AdminAccess(registry=registry, kubeconfig_dir=config.kubeconfig_dir),
        settings=config.summary_settings,
        fleet_wait_seconds=config.fleet_wait_seconds,
        # Digests are posted by ``serve``; here they are listed, never posted.
        notices=NotifyRecords(store),
    )
    session = ChatSession(conversation, out_dir, sys.stdout)
    if args.example:
        session.load(f"bundled example ({EXAMPLE_RESOURCE})", _example_text())
    if first_text is not None:
        session.load(*first_text)
    if piped is None:
        print("you> ", end="", flush=True)
        session.run(sys.stdin, prompt=True)
    else:
        session.run(_lines(piped), prompt=False)
    return EXIT_OK
