"""Answering people, independent of Slack: the one place the bot's behaviour is decided.

The Slack listeners and ``hami-summary chat`` both call ``Conversation``; each turns the
returned ``Reply`` into its own output. Commands, buttons, messages and the message shortcut go
in two phases (``handle`` -> ``Ack``, then ``run`` of its ``Plan``; see ``intents``); the
picker's choices are one call each. Thread and picker state is written only here.

Input problems come back as ``MessageReply`` with ``tone='problem'`` (from
``core.errors.InputError``); anything else raises, and the caller logs it with an error id and
shows ``internal_error_reply``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from bot.conversation.admin import AdminAccess
from bot.conversation.alerts import FiringAlerts, no_firing_alerts
from bot.conversation.buttons import ButtonIntent, ButtonPress, read_press
from bot.conversation.changes import (
    NO_PREVIOUS_PASTE,
    changes_headline,
    cluster_changes,
    keep_previous_paste,
    paste_changes,
    previous_paste,
)
from bot.conversation.clusters import (
    LiveRequest,
    LiveSource,
    nvidia_smi_refusal,
    runtime_refusal,
)
from bot.conversation.fit import fit_reply
from bot.conversation.fit_words import fit_follow_up
from bot.conversation.fleet import DEFAULT_WAIT_SECONDS, fleet_reply
from bot.conversation.formatting import (
    CODE_BLOCK_WIDTH,
    WIDE,
    all_tables,
    gpu_sections,
    of_filter,
    real_usage_section,
    usage_headline,
    workload_sections,
)
from bot.conversation.help import (
    follow_up_help_reply,
    help_reply,
    no_metrics_reply,
    not_understood_reply,
)
from bot.conversation.intents import (
    CHECKING_ACCESS,
    CHECKING_KUBECONFIGS,
    AccessPending,
    Ack,
    CommandIntent,
    GivenFile,
    MessageIntent,
    Plan,
    ShortcutIntent,
    ThreadWork,
)
from bot.conversation.parsing import (
    ADMIN_USAGE,
    COMMAND_USAGE,
    AdminCommand,
    ClusterCommand,
    ClustersCommand,
    Command,
    FleetCommand,
    FollowUp,
    FollowUpAction,
    HelpCommand,
    PickerCommand,
    looks_like_metrics,
    parse_command,
    parse_follow_up,
    strip_code_fences,
)
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
    SummaryRef,
    SummaryReply,
    TableReply,
    TableSection,
)
from bot.conversation.thread_filter import (
    NO_FILTER,
    ThreadFilter,
    filter_for_follow_up,
    remember_thread_filter,
    thread_filter,
    whole_cluster_note,
)
from bot.store.ratelimit import RateLimiter, rate_limit_message
from bot.store.state import BotState, ClusterTarget, PastedKind, PastedMetrics, PickerChoice
from bot.store.summary_memo import memoized_render
from core.api import cluster_of, summarize_text
from core.command_errors import failed_fetch_error
from core.errors import InputError
from core.fit_shape import Shape
from core.history.snapshot import snapshot_of
from core.model import SourceInfo, Summary
from core.settings import DEFAULT_SETTINGS, Settings
from core.summary.build import HOW_TO_GET_METRICS
from core.views.csv_view import runtime_csv

BUTTON_ACTIONS: dict[str, FollowUpAction] = {
    "refresh": "refresh",
    "gpus": "gpus",
    "workloads": "workloads",
    "csv": "csv",
    # "Real usage": the same cluster, context and filters again, with nvidia-smi.
    "usage": "usage",
}

NO_USAGE_FOR_PASTED = MessageReply(
    title="No real usage for pasted metrics",
    text=(
        "Real usage comes from running nvidia-smi in the pods of a registered "
        "cluster; pasted metrics have no pods to ask. Use `/hami-summary <cluster> "
        "usage` for a cluster whose registry entry allows it (`/hami-summary "
        "clusters` lists them), or mention me with `usage` in the thread of a "
        "cluster summary."
    ),
    tone="problem",
)


NO_METRICS_IN_MESSAGE = MessageReply(
    title="No metrics in that message",
    text=(
        "The message you picked has no HAMi metrics text or .prom/.txt file. Use the "
        "shortcut on a message that contains the scheduler's `/metrics` output."
    ),
    tone="problem",
)


@dataclass(frozen=True, slots=True)
class FoundSummary:
    """A summary a reference points at, with what the reply says about it."""

    summary: Summary
    age_seconds: float | None
    notes: tuple[str, ...] = ()
    usage_allowed: bool = False  # the cluster's registry entry allows nvidia-smi


def summary_reply(ref: SummaryRef, found: FoundSummary) -> SummaryReply:
    """The reply for a summary: its chart, notes, and real usage offered where it could be
    had (a cluster that allows nvidia-smi, a summary without it)."""
    summary = found.summary
    return SummaryReply(
        summary,
        ref,
        found.age_seconds,
        attachments=(chart_attachment(summary),),
        notes=found.notes,
        usage_available=(
            ref.cluster is not None and found.usage_allowed and summary.real_usage is None
        ),
    )


def _table_reply(
    summary: Summary,
    title: str,
    sections: Callable[[Summary], tuple[TableSection, ...]],
    filename: str,
    rows: int,
) -> TableReply:
    """A full table, with every column in files and terminals and laid out for a code block;
    a real-usage summary's also carries every pod's real usage after it."""
    shown = sections(summary)
    usage = real_usage_section(summary)
    if usage is not None:
        title = f"{title}, with real usage per pod"
        shown = (*shown, usage)
        rows += len(summary.real_usage or ())
    return TableReply(title, shown, filename, rows, WIDE, screen_width=CODE_BLOCK_WIDTH)


def _problem(error: InputError) -> MessageReply:
    return MessageReply(text=error.message, tone="problem", title="I could not use that")


def chart_title(summary: Summary) -> str:
    """What the chart shows, and of which filter."""
    return (
        f"Chart{of_filter(summary)}: who holds the GPUs (by GPU model and namespace) and where "
        "there is room"
    )


def chart_attachment(summary: Summary) -> Attachment:
    """The chart; a filtered one gives each namespace its colour in the cluster's chart."""

    def render() -> bytes:
        from core.views.chart import render_chart
        from core.views.palette import namespace_ranking

        return render_chart(summary, ranking=namespace_ranking(cluster_of(summary)))

    name = "hami-allocation.png"
    return Attachment(name, chart_title(summary), memoized_render(summary, name, render))


def csv_attachment(summary: Summary) -> Attachment:
    def render() -> bytes:
        from core.views import render as render_view

        return render_view(summary, "csv").encode("utf-8")

    name = "hami-summary.csv"
    return Attachment(name, "GPU and workload tables (CSV)", memoized_render(summary, name, render))


def runtime_csv_attachment(summary: Summary) -> Attachment:
    """Every runtime (vGPU monitor) row as CSV: host GPUs, containers, monitors not reached."""

    def render() -> bytes:
        return runtime_csv(summary).encode("utf-8")

    name = "hami-runtime.csv"
    return Attachment(
        name,
        "Runtime tables: host GPUs, containers, monitors not reached (CSV)",
        memoized_render(summary, name, render),
    )


def tables_attachment(summary: Summary) -> Attachment:
    """The whole report with every row, as fixed-width text (nodes, namespaces, findings and
    checks too, which the CSV lacks)."""
    name = "hami-summary-tables.txt"
    what = "The whole report, every row: findings, checks, nodes, GPUs, namespaces, workloads"
    if summary.runtime is not None:
        what += ", runtime"
    if summary.real_usage is not None:
        what += ", real usage"
    return Attachment(
        name, what, memoized_render(summary, name, lambda: all_tables(summary).encode("utf-8"))
    )


def full_table_attachments(summary: Summary) -> tuple[Attachment, ...]:
    """The files that carry every row of every table: the GPU and workload CSV, the tables
    text, and the runtime CSV when the summary has runtime metrics."""
    files = [csv_attachment(summary), tables_attachment(summary)]
    if summary.runtime is not None:
        files.append(runtime_csv_attachment(summary))
    return tuple(files)


class Conversation:
    """The bot's answers. ``live`` reaches registered clusters; ``state`` remembers threads."""

    def __init__(
        self,
        state: BotState,
        live: LiveSource,
        *,
        settings: Settings = DEFAULT_SETTINGS,
        admin: AdminAccess | None = None,
        paste_limit: RateLimiter | None = None,
        firing_alerts: FiringAlerts = no_firing_alerts,
        fleet_wait_seconds: float = DEFAULT_WAIT_SECONDS,
    ) -> None:
        self.state = state
        self.live = live
        self.settings = settings
        # Which alerts of a cluster fire now, for the fleet view and App Home.
        self.firing_alerts = firing_alerts
        # How long the fleet view waits for all clusters together.
        self.fleet_wait_seconds = fleet_wait_seconds
        # Each user's allowance for summaries that cost work (``per_user_limiter``); a new paste
        # or file counts like a live scrape. None: not limited (the chat's operator).
        self.paste_limit = paste_limit
        # Who may see the admin report; by default nobody on Slack (the chat's operator may).
        self.admin = admin if admin is not None else AdminAccess()

    # -- slash command -------------------------------------------------------------------

    def handle(self, intent: CommandIntent | ButtonIntent | MessageIntent | ShortcutIntent) -> Ack:
        """Phase one of a request: parse it, check access, and say what is answered at once
        and what follows (``run``). Collects nothing.

        When access depends on lookups not finished within the caller's wait limit
        (``AccessPending``), the acknowledgement says so and the plan decides later. A button
        press is read once and refused at once when pressed away from its summary. A message
        or the shortcut is read once (its metrics, or the follow-up it asks)."""
        if isinstance(intent, MessageIntent):
            return self._handle_message(intent)
        if isinstance(intent, ShortcutIntent):
            return self._handle_shortcut(intent)
        if isinstance(intent, ButtonIntent):
            press = read_press(intent)
            if isinstance(press, MessageReply):
                return Ack(press)
            return Ack(plan=Plan(press, intent.user, intent.channel))
        try:
            command = parse_command(intent.text)
        except InputError as error:
            return Ack(_problem(error))
        plan = Plan(command, intent.user, intent.channel, intent.thread_ts)
        try:
            return self.decide(plan)
        except AccessPending as pending:
            return Ack(CHECKING_ACCESS, replace(plan, decided=False, waiting_for=pending.groups))

    def decide(self, plan: Plan) -> Ack:
        """What ``handle`` decides for a parsed command; run again (without a wait limit) for
        a plan acknowledged before access was known."""
        command, user, channel = plan.command, plan.user, plan.channel
        decided = replace(plan, decided=True, waiting_for=())
        if isinstance(command, ButtonPress | ThreadWork):
            return Ack(plan=decided)
        if isinstance(command, AdminCommand) and command.check and self.is_admin(user):
            return Ack(CHECKING_KUBECONFIGS, replace(decided, public=False))
        if isinstance(command, FleetCommand):
            if self.live.clusters_for(user, channel):
                return Ack(plan=decided)
            return Ack(self.fleet(user=user, channel=channel))
        if isinstance(command, ClusterCommand):
            problem = self._cluster_problem(command, user=user, channel=channel)
            return Ack(problem) if problem is not None else Ack(plan=decided)
        return Ack(self._answer_command(command, user=user, channel=channel))

    def run(self, plan: Plan) -> Reply:
        """Phase two: collect and answer what ``handle`` planned. A cluster summary becomes
        what follow-ups in ``plan.thread_ts`` (and ``plan.also_in``) ask about."""
        if isinstance(plan.command, ButtonPress):
            # A summary replaced in place changes the thread's cluster but not the filter its
            # follow-ups keep (refreshing an older message).
            reply = self._press(plan.command, user=plan.user, channel=plan.channel)
            keep_filter = not plan.command.in_place
        elif isinstance(plan.command, ThreadWork):
            reply = self._thread_work(plan.command, user=plan.user, channel=plan.channel)
            keep_filter = True
        else:
            reply = self._answer_command(plan.command, user=plan.user, channel=plan.channel)
            keep_filter = True
        for thread in (plan.thread_ts, plan.also_in):
            if thread is not None:
                self._remember_cluster_thread(
                    reply, channel=plan.channel, thread_ts=thread, with_filter=keep_filter
                )
        return reply

    def _remember_cluster_thread(
        self, reply: Reply, *, channel: str, thread_ts: str, with_filter: bool = True
    ) -> None:
        """A cluster summary shown in a thread becomes what its follow-ups ask about: the
        cluster, its context, whether runtime and real usage were asked (so ``ns team-a``
        after a real-usage summary keeps the real usage) and, unless ``with_filter`` is False
        (a summary refreshed in place), its filter."""
        if isinstance(reply, SummaryReply) and reply.ref.cluster is not None:
            self.state.remember_thread(channel, thread_ts, reply.ref.cluster)
            if with_filter:
                chosen = ThreadFilter(reply.ref.namespace, reply.ref.node)
                remember_thread_filter(self.state, channel, thread_ts, chosen)

    def _answer_command(self, command: Command, *, user: str | None, channel: str) -> Reply:
        if isinstance(command, HelpCommand):
            return help_reply(admin_notes=self.live.access_notes(user, channel))
        if isinstance(command, PickerCommand):
            return self.picker(user=user, channel=channel)
        if isinstance(command, AdminCommand):
            return self.admin_report(command, user=user, channel=channel)
        if isinstance(command, FleetCommand):
            return self.fleet(user=user, channel=channel)
        if isinstance(command, ClustersCommand):
            options = tuple(self.live.clusters_for(user, channel))
            return ClustersReply(
                options,
                None if options else self.live.setup_hint(),
                admin_notes=self.live.access_notes(user, channel),
            )
        try:
            if command.fit is not None:
                return self._cluster_fit(command, command.fit, user=user, channel=channel)
            if command.changes:
                option, context = self._resolve_cluster(command, user=user, channel=channel)
                target = ClusterTarget(option.name, context)
                return cluster_changes(
                    self.live, target, command.since_seconds, user=user, channel=channel
                )
            return self._cluster_summary(command, user=user, channel=channel)
        except InputError as error:
            return _problem(error)

    def fleet(self, *, user: str | None, channel: str | None) -> FleetReply:
        """Every cluster ``user`` may query in ``channel`` in one line each (parallel,
        through the scrape cache, within ``fleet_wait_seconds``)."""
        return fleet_reply(
            self.live,
            user=user,
            channel=channel,
            alerts=self.firing_alerts,
            wait_seconds=self.fleet_wait_seconds,
        )

    def is_admin(self, user: str | None) -> bool:
        return self.admin.allows(user)

    def admin_report(
        self, command: AdminCommand, *, user: str | None, channel: str | None
    ) -> AdminReply | MessageReply:
        """Kubeconfig discovery and cluster access for an admin; a polite no for anyone else.
        With ``command.check`` each context's API server is asked, which takes seconds."""
        if not self.admin.allows(user):
            return MessageReply(
                self.admin.refusal(user), title="Only for the bot's admins", tone="problem"
            )
        notes = self.live.access_notes(user, channel)
        return AdminReply(self.admin.report(check=command.check, access_notes=notes))

    def _resolve_cluster(
        self, command: ClusterCommand, *, user: str | None, channel: str | None
    ) -> tuple[ClusterOption, str | None]:
        options = self.live.clusters_for(user, channel)
        by_name = {option.name.lower(): option for option in options}
        option = by_name.get(command.cluster.lower())
        if option is None:
            # Only the clusters this person may query are named: others stay private.
            allowed = ", ".join(f"`{o.name}`" for o in options)
            known = (
                f" Clusters you may query here: {allowed}."
                if allowed
                else (" " + self.live.setup_hint())
            )
            # Access that could not be checked (e.g. user groups without the scope to read
            # them) is said plainly, so the refusal is not mistaken for a decision.
            unchecked = "".join(" " + note for note in self.live.access_notes(user, channel))
            raise InputError(
                f"'{command.cluster}' is not a cluster you may query here.{known}{unchecked}"
            )
        context = command.context
        if context is not None and option.contexts and context not in option.contexts:
            raise InputError(
                f"Cluster '{option.name}' has no context '{context}'. Its contexts: "
                + ", ".join(f"`{c}`" for c in option.contexts)
                + "."
            )
        if context is None and len(option.contexts) == 1:
            context = option.contexts[0]
        if context is None and len(option.contexts) > 1:
            # Collect only from the context the user picked: never guess which one they meant.
            raise InputError(
                f"Cluster '{option.name}' has several contexts ("
                + ", ".join(f"`{c}`" for c in option.contexts)
                + f"). Add context=NAME to the command ({COMMAND_USAGE}) or use `/hami-summary` "
                "to pick one."
            )
        if command.runtime and not option.runtime_allowed:
            raise InputError(runtime_refusal(option.name, option.defined_at))
        if command.usage and not option.nvidia_smi_allowed:
            raise InputError(nvidia_smi_refusal(option.name, option.defined_at))
        return option, context

    def _cluster_summary(
        self, command: ClusterCommand, *, user: str | None, channel: str | None
    ) -> SummaryReply:
        option, context = self._resolve_cluster(command, user=user, channel=channel)
        target = ClusterTarget(option.name, context, runtime=command.runtime, usage=command.usage)
        ref = SummaryRef(cluster=target, namespace=command.namespace, node=command.node)
        found = self._summary_for(ref, user=user, channel=channel, fresh=command.fresh)
        return summary_reply(ref, found)

    def _cluster_fit(
        self, command: ClusterCommand, shape: Shape, *, user: str | None, channel: str | None
    ) -> MessageReply:
        """``/hami-summary <cluster> fit SHAPE``: from the same (cached) summary as a summary."""
        option, context = self._resolve_cluster(command, user=user, channel=channel)
        target = ClusterTarget(option.name, context, runtime=command.runtime)
        ref = SummaryRef(cluster=target, namespace=command.namespace, node=command.node)
        found = self._summary_for(ref, user=user, channel=channel, fresh=command.fresh)
        return fit_reply(found.summary, shape)

    def fit_in_thread(
        self, shape: Shape, *, channel: str, thread_ts: str, user: str | None
    ) -> Reply:
        """``fit SHAPE`` in a thread: placed against the thread's metrics or cluster."""
        if self.state.thread_subject(channel, thread_ts) is None:
            return no_metrics_reply()
        kept = thread_filter(self.state, channel, thread_ts)
        ref = SummaryRef(
            channel=channel, thread_ts=thread_ts, namespace=kept.namespace, node=kept.node
        )
        try:
            found = self._summary_for(ref, user=user, channel=channel, fresh=False)
        except InputError as error:
            return _problem(error)
        return fit_reply(found.summary, shape)

    # -- picker --------------------------------------------------------------------------

    def picker(self, *, user: str | None, channel: str) -> PickerReply:
        options = tuple(self.live.clusters_for(user, channel))
        choice = self.state.picker_choice(user or "", channel)
        return self._picker_reply(options, choice)

    def _picker_reply(
        self, options: tuple[ClusterOption, ...], choice: PickerChoice
    ) -> PickerReply:
        names = {option.name: option for option in options}
        cluster = choice.cluster if choice.cluster in names else None
        context = None
        if cluster is not None:
            contexts = names[cluster].contexts
            if choice.context in contexts:
                context = choice.context
            elif len(contexts) == 1:
                context = contexts[0]
        hint = None if options else self.live.setup_hint()
        return PickerReply(options, cluster, context, choice.namespace, hint)

    def pick(
        self,
        *,
        user: str,
        channel: str,
        cluster: str | None = None,
        context: str | None = None,
        namespace: str | None = None,
    ) -> PickerReply:
        """Remember one picker choice; the picker shown again reflects it. Collects nothing."""
        stored = self.state.picker_choice(user, channel)
        if cluster is not None and cluster != stored.cluster:
            stored = PickerChoice(cluster=cluster, context=None, namespace=stored.namespace)
        choice = PickerChoice(
            cluster=stored.cluster,
            context=context if context is not None else stored.context,
            namespace=namespace if namespace is not None else stored.namespace,
        )
        self.state.remember_picker(user, channel, choice)
        return self._picker_reply(tuple(self.live.clusters_for(user, channel)), choice)

    def confirm(self, *, user: str, channel: str, choice: PickerChoice, usage: bool = False) -> Ack:
        """The picker's Confirm (``choice`` overrides stored picks), checked without
        collecting anything: the problem to show beside the picker, or the summary to ``run``
        (the picker is then forgotten). ``usage``: the real usage box was ticked."""
        stored = self.state.picker_choice(user, channel)
        cluster = choice.cluster or stored.cluster
        context = choice.context or stored.context
        namespace = (choice.namespace or stored.namespace or "").strip() or None
        if cluster is None:
            return Ack(
                MessageReply(
                    text="Pick a cluster first, then press Confirm.",
                    tone="problem",
                    title="No cluster",
                )
            )
        try:
            parsed = parse_command(cluster + (f" ns={namespace}" if namespace else ""))
            if not isinstance(parsed, ClusterCommand):
                raise InputError(f"'{cluster}' is not a cluster name.")
            command = ClusterCommand(
                cluster=parsed.cluster, context=context, namespace=parsed.namespace, usage=usage
            )
            self._resolve_cluster(command, user=user, channel=channel)
        except InputError as error:
            return Ack(_problem(error))
        self.state.forget_picker(user, channel)
        return Ack(plan=Plan(command, user, channel))

    def cancel_picker(self, *, user: str, channel: str) -> None:
        """The picker's Cancel: its choices are forgotten."""
        self.state.forget_picker(user, channel)

    def _cluster_problem(
        self, command: ClusterCommand, *, user: str | None, channel: str
    ) -> MessageReply | None:
        """A problem with ``command`` found without collecting (unknown cluster, context...)."""
        try:
            self._resolve_cluster(command, user=user, channel=channel)
        except InputError as error:
            return _problem(error)
        return None

    # -- messages: mentions, DMs, shortcut -------------------------------------------------

    def _pasted(self, body: str, files: Sequence[GivenFile]) -> PastedMetrics | MessageReply | None:
        texts = [f.text for f in files if f.text is not None]
        names = [f.name for f in files if f.text is not None]
        if body and looks_like_metrics(body):
            texts.append(body)
        if not texts:
            problems = [f"{f.name}: {f.problem}" for f in files if f.problem]
            if problems:
                return MessageReply(
                    title="I could not read the attached file",
                    text="\n".join(problems),
                    tone="problem",
                )
            return None
        label = ", ".join(names) if names else "pasted metrics"
        kind: PastedKind = "file" if names else "paste"
        return PastedMetrics(
            text="\n".join(texts), label=label, kind=kind, given_at=self.state.now()
        )

    def _handle_message(self, intent: MessageIntent) -> Ack:
        """A mention or DM: new metrics, a fit, a follow-up, or words answered at once. An
        acknowledgement without reply or plan: stay silent (another bot without metrics)."""
        body = intent.text.strip()
        pasted = self._pasted(body, intent.files)
        if isinstance(pasted, PastedMetrics):
            return self._metrics_ack(pasted, intent)
        if intent.from_bot:
            # Other bots are answered only when they bring metrics: two bots must not keep
            # each other talking.
            return Ack()
        if pasted is not None:
            return Ack(pasted)
        try:
            shape = fit_follow_up(body)
            follow_up = parse_follow_up(body) if shape is None else None
        except InputError as error:
            return Ack(_problem(error))
        thread = intent.thread_ts
        if shape is not None:
            return self._thread_ack(ThreadWork(thread, fit=shape), intent)
        if follow_up is None:
            if body:
                return Ack(
                    self._not_understood(
                        body, channel=intent.channel, thread_ts=thread, user=intent.user
                    )
                )
            follow_up = FollowUp()
        return self._thread_ack(ThreadWork(thread, follow_up=follow_up), intent)

    def _handle_shortcut(self, intent: ShortcutIntent) -> Ack:
        """The message shortcut "Summarize HAMi metrics" on a message."""
        pasted = self._pasted(intent.text.strip(), intent.files)
        if pasted is None:
            return Ack(NO_METRICS_IN_MESSAGE)
        if isinstance(pasted, MessageReply):
            return Ack(pasted)
        return self._metrics_ack(pasted, intent)

    def _metrics_ack(self, pasted: PastedMetrics, intent: MessageIntent | ShortcutIntent) -> Ack:
        """New metrics: summarised by ``run`` within the sender's allowance."""
        if self.paste_limit is not None and intent.user is not None:
            decision = self.paste_limit.check(intent.user)
            if not decision.allowed:
                return Ack(_problem(InputError(rate_limit_message(decision))))
        return self._thread_ack(ThreadWork(intent.thread_ts, metrics=pasted), intent)

    @staticmethod
    def _thread_ack(work: ThreadWork, intent: MessageIntent | ShortcutIntent) -> Ack:
        shown_in = intent.shown_in if isinstance(intent, MessageIntent) else None
        return Ack(plan=Plan(work, intent.user, intent.channel, also_in=shown_in))

    def _thread_work(self, work: ThreadWork, *, user: str | None, channel: str) -> Reply:
        thread = work.thread_ts
        if work.metrics is not None:
            return self._new_metrics(work.metrics, channel=channel, thread_ts=thread)
        if work.fit is not None:
            return self.fit_in_thread(work.fit, channel=channel, thread_ts=thread, user=user)
        follow_up = work.follow_up or FollowUp()
        return self.follow_up(follow_up, channel=channel, thread_ts=thread, user=user)

    def _not_understood(
        self, body: str, *, channel: str, thread_ts: str, user: str | None
    ) -> MessageReply:
        """Words that are neither metrics nor a follow-up. Only a thread without metrics gets
        "none I remember"; one with metrics is told what it has and what to ask."""
        if body.split()[0].lower() == "admin":
            # A thread is seen by everyone in it; the admin report is shown only to its reader.
            return MessageReply(
                "The admin report is shown only to the person who asks: use "
                f"`{ADMIN_USAGE}` outside a thread (Slack does not run slash commands in "
                "threads). It is for the Slack users listed in HAMI_SUMMARY_ADMINS.",
                title="Ask for the admin report with the slash command",
            )
        # A failed kubectl or curl pasted instead of its output: say what failed.
        failed = failed_fetch_error(body, HOW_TO_GET_METRICS)
        if failed is not None:
            return _problem(failed)
        subject = self.state.thread_subject(channel, thread_ts)
        if subject is None:
            return no_metrics_reply()
        if isinstance(subject, ClusterTarget):
            option = next(
                (o for o in self.live.clusters_for(user, channel) if o.name == subject.cluster),
                None,
            )
            return not_understood_reply(
                body,
                subject,
                age_seconds=None,
                usage_allowed=option is not None and option.nvidia_smi_allowed,
            )
        return not_understood_reply(
            body, subject, age_seconds=max(0.0, self.state.now() - subject.given_at)
        )

    def _new_metrics(self, pasted: PastedMetrics, *, channel: str, thread_ts: str) -> Reply:
        ref = SummaryRef(channel=channel, thread_ts=thread_ts)
        try:
            summary = self._summarize_pasted(pasted, namespace=None, node=None)
        except InputError as error:
            return _problem(error)
        notes: tuple[str, ...] = ()
        previous = self.state.thread_subject(channel, thread_ts)
        if isinstance(previous, PastedMetrics):
            notes += self._compare_with_previous(previous, pasted, summary, channel, thread_ts)
        # New metrics start unfiltered: a filter may name what they no longer have.
        remember_thread_filter(self.state, channel, thread_ts, NO_FILTER)
        if not self.state.remember_thread(channel, thread_ts, pasted):
            notes = (
                "These metrics are too large to keep for follow-ups in this thread; paste or "
                "attach them again to ask more.",
            )
        return SummaryReply(
            summary, ref, None, attachments=(chart_attachment(summary),), notes=notes
        )

    def _compare_with_previous(
        self,
        previous: PastedMetrics,
        pasted: PastedMetrics,
        summary: Summary,
        channel: str,
        thread_ts: str,
    ) -> tuple[str, ...]:
        """A newer paste in a thread: keep the previous one's snapshot for ``changes`` and say
        in one line what changed (nothing when the previous paste cannot be summarised)."""
        try:
            before = keep_previous_paste(
                self.state,
                channel,
                thread_ts,
                previous,
                lambda p: self._summarize_pasted(p, namespace=None, node=None),
            )
        except InputError:
            return ()
        return (changes_headline(before, snapshot_of(summary, pasted.given_at)),)

    def _thread_changes(
        self, follow_up: FollowUp, *, channel: str, thread_ts: str, user: str | None
    ) -> Reply:
        """``changes`` in a thread: since ``since`` for a cluster, else since the last paste."""
        subject = self.state.thread_subject(channel, thread_ts)
        if subject is None:
            return no_metrics_reply()
        try:
            if isinstance(subject, ClusterTarget):
                return cluster_changes(
                    self.live, subject, follow_up.since_seconds, user=user, channel=channel
                )
            if follow_up.since_seconds is not None:
                raise InputError(
                    "since= is for threads of a registered cluster; here `changes` compares "
                    "the last two pastes."
                )
            before = previous_paste(self.state, channel, thread_ts)
            if before is None:
                return NO_PREVIOUS_PASTE
            summary = self._summarize_pasted(subject, namespace=None, node=None)
            return paste_changes(before, snapshot_of(summary, subject.given_at))
        except InputError as error:
            return _problem(error)

    def _summarize_pasted(
        self, pasted: PastedMetrics, *, namespace: str | None, node: str | None
    ) -> Summary:
        source = SourceInfo(kind=pasted.kind, label=pasted.label)
        return summarize_text(
            strip_code_fences(pasted.text),
            source,
            namespace=namespace,
            node=node,
            settings=self.settings,
        )

    # -- follow-ups and buttons ----------------------------------------------------------

    def follow_up(
        self, follow_up: FollowUp, *, channel: str, thread_ts: str, user: str | None
    ) -> Reply:
        if follow_up.action == "help":
            return follow_up_help_reply()
        kept = thread_filter(self.state, channel, thread_ts)
        if follow_up.action == "changes":
            changes = self._thread_changes(
                follow_up, channel=channel, thread_ts=thread_ts, user=user
            )
            return whole_cluster_note(changes, kept)
        chosen = filter_for_follow_up(kept, follow_up.namespace, follow_up.node, follow_up.clear)
        reply = self._filtered_follow_up(
            follow_up, chosen, channel=channel, thread_ts=thread_ts, user=user
        )
        if chosen != kept and not isinstance(reply, MessageReply):
            # Kept once it answered: a mistyped name (or a thread without metrics) leaves the
            # filter as it was.
            remember_thread_filter(self.state, channel, thread_ts, chosen)
        return reply

    def _filtered_follow_up(
        self,
        follow_up: FollowUp,
        chosen: ThreadFilter,
        *,
        channel: str,
        thread_ts: str,
        user: str | None,
    ) -> Reply:
        subject = self.state.thread_subject(channel, thread_ts)
        if subject is None:
            return no_metrics_reply()
        cluster: ClusterTarget | None = None
        if isinstance(subject, ClusterTarget):
            # A thread about a real-usage summary keeps it in every follow-up (from the cached
            # nvidia-smi readings; ``refresh`` reads again); ``usage`` adds it from now on.
            cluster = replace(subject, usage=True) if follow_up.action == "usage" else subject
        elif follow_up.action == "usage":
            return NO_USAGE_FOR_PASTED
        ref = SummaryRef(
            channel=channel,
            thread_ts=thread_ts,
            cluster=cluster,
            namespace=chosen.namespace,
            node=chosen.node,
        )
        action: FollowUpAction = "summary" if follow_up.action == "usage" else follow_up.action
        return self._answer(ref, action, user=user, channel=channel)

    def _press(self, press: ButtonPress, *, user: str | None, channel: str) -> Reply:
        """A button under a summary (Refresh, GPUs, Workloads, CSV, Real usage)."""
        follow_action = BUTTON_ACTIONS.get(press.action)
        if follow_action is None:
            return _problem(InputError(f"Unknown button '{press.action}'."))
        ref = press.ref
        if ref is None:
            return _problem(InputError(press.unreadable or "That button cannot be read."))
        if follow_action == "usage":
            cluster = ref.cluster
            if cluster is None and ref.channel and ref.thread_ts:
                subject = self.state.thread_subject(ref.channel, ref.thread_ts)
                cluster = subject if isinstance(subject, ClusterTarget) else None
            if cluster is None:
                return NO_USAGE_FOR_PASTED
            # The same cluster, context and filters, with nvidia-smi: from a cached real-usage
            # collection when there is one (like any other request), else collected now.
            ref = replace(ref, cluster=replace(cluster, usage=True))
            follow_action = "summary"
        return self._answer(ref, follow_action, user=user, channel=channel)

    def _answer(
        self, ref: SummaryRef, action: FollowUpAction, *, user: str | None, channel: str
    ) -> Reply:
        try:
            found = self._summary_for(ref, user=user, channel=channel, fresh=action == "refresh")
        except InputError as error:
            return _problem(error)
        summary = found.summary
        # A real-usage summary's follow-ups keep its real usage (the same nvidia-smi reading).
        headline = usage_headline(summary)
        label, scope = summary.source.label, of_filter(summary)
        if action == "gpus":
            what = " and their shares" if summary.focus and summary.focus.namespace else ""
            return _table_reply(
                summary,
                f"All {len(summary.gpus):,} GPUs{scope}{what} ({label})",
                gpu_sections,
                "hami-gpus.txt",
                len(summary.gpus),
            )
        if action == "workloads":
            return _table_reply(
                summary,
                f"All {len(summary.workloads):,} workload allocations{scope} ({label})",
                workload_sections,
                "hami-workloads.txt",
                len(summary.workloads),
            )
        if action == "csv":
            runtime = ", the runtime tables" if summary.runtime is not None else ""
            usage = ", real usage" if summary.real_usage is not None else ""
            return FilesReply(
                text=(
                    f"Full tables of {label}{scope}: GPUs and workloads as CSV{runtime}"
                    f" and every table (nodes and namespaces too{usage}) as text."
                    + (f" {headline}." if headline else "")
                ),
                attachments=full_table_attachments(summary),
            )
        if action == "chart":
            return FilesReply(
                text=f"{chart_title(summary)} ({label})." + (f" {headline}." if headline else ""),
                attachments=(chart_attachment(summary),),
            )
        return summary_reply(ref, found)

    def _summary_for(
        self, ref: SummaryRef, *, user: str | None, channel: str | None, fresh: bool
    ) -> FoundSummary:
        """The summary ``ref`` points at, its data age in seconds, and notes on the source."""
        if ref.cluster is not None:
            result = self.live.summarize(
                LiveRequest(
                    cluster=ref.cluster.cluster,
                    context=ref.cluster.context,
                    user=user,
                    channel=channel,
                    namespace=ref.namespace,
                    node=ref.node,
                    runtime=ref.cluster.runtime,
                    fresh=fresh,
                    usage=ref.cluster.usage,
                )
            )
            return FoundSummary(
                result.summary, result.age_seconds, result.notes, usage_allowed=result.usage_allowed
            )
        subject = (
            self.state.thread_subject(ref.channel, ref.thread_ts)
            if ref.channel and ref.thread_ts
            else None
        )
        if isinstance(subject, ClusterTarget):
            return self._summary_for(
                replace(ref, cluster=subject, channel=None, thread_ts=None),
                user=user,
                channel=channel,
                fresh=fresh,
            )
        if subject is None:
            raise InputError(
                "I no longer have the metrics of that summary (thread metrics are kept for "
                "24 h). Paste or attach them again."
            )
        summary = self._summarize_pasted(subject, namespace=ref.namespace, node=ref.node)
        return FoundSummary(summary, max(0.0, self.state.now() - subject.given_at))
