"""Answering people, independent of Slack: the one place the bot's behaviour is decided.

The Slack listeners and ``hami-summary chat`` both call ``Conversation``; each turns the
returned ``Reply`` into its own output. Commands, buttons, messages and the message shortcut go
in two phases (``handle`` -> ``Ack``, then ``run`` of its ``Plan``; see ``intents``); the
picker's choices are one call each. Thread and picker state is written only by the
conversation.

``Conversation`` only dispatches: each kind of request has its module (``summary``, ``paste``,
``follow_up``, ``picker``, ``buttons``, ``fit``, ``changes``, ``pending``, ``digests``,
``alert_buttons``, ``fleet``, ``admin``), a function of the shared ``Context`` and the request.

Input problems come back as ``MessageReply`` with ``tone='problem'`` (from
``core.errors.InputError``); anything else raises, and the caller logs it with an error id and
shows ``internal_error_reply``.
"""

from __future__ import annotations

from dataclasses import replace

from bot.conversation import picker
from bot.conversation.admin import AdminAccess
from bot.conversation.alert_buttons import (
    AlertButtonIntent,
    SilenceAlert,
    read_alert_press,
    silence_alert,
)
from bot.conversation.alerts import FiringAlerts, no_firing_alerts
from bot.conversation.buttons import ButtonIntent, ButtonPress, press_answer, read_press
from bot.conversation.changes import command_changes
from bot.conversation.clusters import LiveSource
from bot.conversation.context import Context
from bot.conversation.digests import digests_reply
from bot.conversation.fit import cluster_fit, fit_in_thread
from bot.conversation.fleet import DEFAULT_WAIT_SECONDS, fleet_reply
from bot.conversation.follow_up import follow_up
from bot.conversation.gpu_hours import command_gpu_hours
from bot.conversation.help import help_reply
from bot.conversation.intents import (
    CHECKING_ACCESS,
    CHECKING_KUBECONFIGS,
    AccessPending,
    Ack,
    CommandIntent,
    MessageIntent,
    Plan,
    ShortcutIntent,
    ThreadWork,
)
from bot.conversation.notices import NO_NOTICES, Notices
from bot.conversation.parsing import (
    AdminCommand,
    ClusterCommand,
    ClustersCommand,
    Command,
    DigestsCommand,
    FleetCommand,
    FollowUp,
    HelpCommand,
    PickerCommand,
    parse_command,
)
from bot.conversation.paste import handle_message, handle_shortcut, new_metrics
from bot.conversation.pending import cluster_pods, pasted_pod, remember_pods_thread
from bot.conversation.replies import (
    AdminReply,
    ClustersReply,
    FleetReply,
    MessageReply,
    PickerReply,
    Reply,
    SummaryReply,
    problem_reply,
)
from bot.conversation.summary import cluster_problem, cluster_summary
from bot.conversation.thread_filter import ThreadFilter, remember_thread_filter
from bot.store.ratelimit import RateLimiter
from bot.store.state import BotState, PickerChoice
from core.errors import InputError
from core.settings import DEFAULT_SETTINGS, Settings

Intent = CommandIntent | ButtonIntent | MessageIntent | ShortcutIntent | AlertButtonIntent


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
        notices: Notices = NO_NOTICES,
    ) -> None:
        self.context = Context(
            state,
            live,
            settings=settings,
            admin=admin if admin is not None else AdminAccess(),
            paste_limit=paste_limit,
            firing_alerts=firing_alerts,
            fleet_wait_seconds=fleet_wait_seconds,
            notices=notices,
        )

    @property
    def state(self) -> BotState:
        return self.context.state

    @property
    def live(self) -> LiveSource:
        return self.context.live

    # -- phase one: what is said at once --------------------------------------------------

    def handle(self, intent: Intent) -> Ack:
        """Phase one of a request: parse it, check access, and say what is answered at once
        and what follows (``run``). Collects nothing.

        When access depends on lookups not finished within the caller's wait limit
        (``AccessPending``), the acknowledgement says so and the plan decides later. A button
        press is read once and refused at once when pressed away from its summary. A message
        or the shortcut is read once (its metrics, or the follow-up it asks)."""
        match intent:
            case MessageIntent():
                return handle_message(self.context, intent)
            case ShortcutIntent():
                return handle_shortcut(self.context, intent)
            case ButtonIntent():
                press = read_press(intent)
                if isinstance(press, MessageReply):
                    return Ack(press)
                return Ack(plan=Plan(press, intent.user, intent.channel))
            case AlertButtonIntent():
                asked = read_alert_press(self.context, intent)
                if isinstance(asked, MessageReply):
                    return Ack(asked)
                return Ack(plan=Plan(asked, intent.user, intent.channel))
            case CommandIntent():
                return self._handle_command(intent)

    def _handle_command(self, intent: CommandIntent) -> Ack:
        try:
            command = parse_command(intent.text)
        except InputError as error:
            return Ack(problem_reply(error))
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
        match command:
            case ButtonPress() | ThreadWork() | SilenceAlert():
                return Ack(plan=decided)
            case DigestsCommand():
                # Only the asker sees which digests they may see.
                return Ack(plan=replace(decided, public=False))
            case AdminCommand(check=True) if self.context.admin.allows(user):
                return Ack(CHECKING_KUBECONFIGS, replace(decided, public=False))
            case FleetCommand():
                if self.live.clusters_for(user, channel):
                    return Ack(plan=decided)
                return Ack(self.fleet(user=user, channel=channel))
            case ClusterCommand():
                problem = cluster_problem(self.context, command, user=user, channel=channel)
                return Ack(problem) if problem is not None else Ack(plan=decided)
        return Ack(self._answer_command(command, user=user, channel=channel))

    # -- phase two: the plan --------------------------------------------------------------

    def run(self, plan: Plan) -> Reply:
        """Phase two: collect and answer what ``handle`` planned. A cluster summary becomes
        what follow-ups in ``plan.thread_ts`` (and ``plan.also_in``) ask about."""
        user, channel = plan.user, plan.channel
        # A summary replaced in place changes the thread's cluster but not the filter its
        # follow-ups keep (refreshing an older message).
        keep_filter = True
        match plan.command:
            case ButtonPress() as press:
                reply = press_answer(self.context, press, user=user, channel=channel)
                keep_filter = not press.in_place
            case ThreadWork() as work:
                reply = self._thread_work(work, user=user, channel=channel)
            case SilenceAlert() as silence:
                reply = silence_alert(self.context, silence, user=user or "")
            case command:
                reply = self._answer_command(command, user=user, channel=channel)
        for thread in (plan.thread_ts, plan.also_in):
            if thread is None:
                continue
            self._remember_cluster_thread(
                reply, channel=channel, thread_ts=thread, with_filter=keep_filter
            )
            command = plan.command
            if isinstance(command, ClusterCommand) and (command.pending or command.why):
                remember_pods_thread(
                    self.context, command, reply, user=user, channel=channel, thread_ts=thread
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

    def _thread_work(self, work: ThreadWork, *, user: str | None, channel: str) -> Reply:
        thread = work.thread_ts
        if work.metrics is not None:
            return new_metrics(self.context, work.metrics, channel=channel, thread_ts=thread)
        if work.pod_text is not None:
            return pasted_pod(
                self.context, work.pod_text, channel=channel, thread_ts=thread, user=user
            )
        if work.fit is not None:
            return fit_in_thread(
                self.context, work.fit, channel=channel, thread_ts=thread, user=user
            )
        asked = work.follow_up or FollowUp()
        return follow_up(self.context, asked, channel=channel, thread_ts=thread, user=user)

    def _answer_command(self, command: Command, *, user: str | None, channel: str) -> Reply:
        ctx = self.context
        match command:
            case HelpCommand():
                return help_reply(admin_notes=self.live.access_notes(user, channel))
            case PickerCommand():
                return picker.picker(ctx, user=user, channel=channel)
            case AdminCommand():
                return self.admin_report(command, user=user, channel=channel)
            case FleetCommand():
                return self.fleet(user=user, channel=channel)
            case DigestsCommand():
                return digests_reply(ctx, user=user, channel=channel)
            case ClustersCommand():
                options = tuple(self.live.clusters_for(user, channel))
                return ClustersReply(
                    options,
                    None if options else self.live.setup_hint(),
                    admin_notes=self.live.access_notes(user, channel),
                )
        try:
            if command.fit is not None:
                return cluster_fit(ctx, command, command.fit, user=user, channel=channel)
            if command.changes:
                return command_changes(ctx, command, user=user, channel=channel)
            if command.gpu_hours:
                return command_gpu_hours(ctx, command, user=user, channel=channel)
            if command.pending or command.why is not None:
                return cluster_pods(ctx, command, user=user, channel=channel)
            return cluster_summary(ctx, command, user=user, channel=channel)
        except InputError as error:
            return problem_reply(error)

    # -- answers the surfaces ask for directly --------------------------------------------

    def fleet(self, *, user: str | None, channel: str | None) -> FleetReply:
        """Every cluster ``user`` may query in ``channel`` in one line each (parallel,
        through the scrape cache, within ``fleet_wait_seconds``)."""
        return fleet_reply(
            self.live,
            user=user,
            channel=channel,
            alerts=self.context.firing_alerts,
            wait_seconds=self.context.fleet_wait_seconds,
        )

    def admin_report(
        self, command: AdminCommand, *, user: str | None, channel: str | None
    ) -> AdminReply | MessageReply:
        """Kubeconfig discovery and cluster access for an admin; a polite no for anyone else.
        With ``command.check`` each context's API server is asked, which takes seconds."""
        admin = self.context.admin
        if not admin.allows(user):
            return MessageReply(
                admin.refusal(user), title="Only for the bot's admins", tone="problem"
            )
        notes = self.live.access_notes(user, channel)
        return AdminReply(admin.report(check=command.check, access_notes=notes))

    def pick(
        self,
        *,
        user: str,
        channel: str,
        cluster: str | None = None,
        context: str | None = None,
        namespace: str | None = None,
    ) -> PickerReply:
        """Remember one picker choice (``picker.pick``)."""
        return picker.pick(
            self.context,
            user=user,
            channel=channel,
            cluster=cluster,
            context=context,
            namespace=namespace,
        )

    def confirm(self, *, user: str, channel: str, choice: PickerChoice, usage: bool = False) -> Ack:
        """The picker's Confirm (``picker.confirm``)."""
        return picker.confirm(self.context, user=user, channel=channel, choice=choice, usage=usage)

    def cancel_picker(self, *, user: str, channel: str) -> None:
        """The picker's Cancel: its choices are forgotten."""
        picker.cancel(self.context, user=user, channel=channel)
