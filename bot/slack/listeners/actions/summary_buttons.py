"""The buttons under a summary: Refresh and Real usage (in place), GPUs, Workloads and CSV (in
the thread).

Real usage re-asks the summary's cluster, context and filters with nvidia-smi and replaces the
allocation-only summary with the real-usage one; the thread then remembers real usage, so its
follow-ups keep it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from logging import Logger
from typing import Any

from slack_bolt import BoltContext, Respond
from slack_sdk import WebClient

from bot.conversation.buttons import ButtonIntent, ButtonPress
from bot.slack.answer import (
    answer_in_thread,
    compute_safely,
    respond_ephemeral,
    run_guarded,
)
from bot.slack.blocks import SUMMARY_ACTION_PREFIX
from bot.slack.delivery import Delivery
from bot.slack.markup import mention_user
from bot.slack.messages import SlackMessage, slack_message
from bot.slack.services import services_from


def _working_note(text: str) -> SlackMessage:
    return SlackMessage([{"type": "context", "elements": [{"type": "mrkdwn", "text": text}]}], text)


# Shown on top of the old summary while the in-place buttons work (nvidia-smi takes longer).
IN_PLACE_NOTES = {
    "refresh": _working_note(":hourglass_flowing_sand: Refreshing…"),
    "usage": _working_note(
        ":hourglass_flowing_sand: Running nvidia-smi in the pods for real usage…"
    ),
}


@dataclass(frozen=True)
class _Press:
    """One press of a summary button, read from its block_actions payload."""

    name: str  # "refresh", "usage", "gpus", "workloads", "csv"
    value: str  # what the button carries (``SummaryRef``)
    user: str
    channel: str
    message: dict[str, Any]  # the message the button sits under
    message_ts: str
    thread_root: str | None
    thread: str | None  # the thread the message is in (None: it is at the top level)
    ephemeral: bool

    @classmethod
    def of(cls, body: dict[str, Any], action: dict[str, Any]) -> _Press:
        container = body.get("container") or {}
        message = body.get("message") or {}
        message_ts = str(container.get("message_ts") or message.get("ts") or "")
        thread = container.get("thread_ts") or message.get("thread_ts")
        return cls(
            name=str(action["action_id"]).removeprefix(SUMMARY_ACTION_PREFIX),
            value=str(action.get("value") or ""),
            user=str(body["user"]["id"]),
            channel=str((body.get("channel") or {}).get("id") or ""),
            message=message,
            message_ts=message_ts,
            thread_root=str(message.get("thread_ts") or message_ts) or None,
            thread=str(thread) if thread else None,
            ephemeral=bool(container.get("is_ephemeral")),
        )

    def intent(self) -> ButtonIntent:
        return ButtonIntent(
            self.name,
            self.value,
            self.user,
            self.channel,
            thread_ts=self.thread,
            message_ts=self.message_ts or None,
        )

    @property
    def what(self) -> str:
        return f"{self.name} for {mention_user(self.user)}"


def press_summary_button(
    body: dict[str, Any],
    action: dict[str, Any],
    context: BoltContext,
    client: WebClient,
    respond: Respond,
    logger: Logger,
) -> None:
    services = services_from(context)
    pressed = _Press.of(body, action)
    name, user, channel = pressed.name, pressed.user, pressed.channel
    conversation = services.conversation
    decision = conversation.handle(pressed.intent())
    if decision.reply is not None:
        logger.warning(
            "refused button %s from %s in %s: its value names another conversation",
            name,
            user,
            channel,
        )
        respond_ephemeral(respond, slack_message(decision.reply))
        return
    if decision.plan is None or not isinstance(decision.plan.command, ButtonPress):
        return
    plan, in_place = decision.plan, decision.plan.command.in_place

    def run(shown_in: str | None = None) -> Any:
        return conversation.run(replace(plan, thread_ts=shown_in))

    def press() -> None:
        if in_place and pressed.ephemeral:
            reply = compute_safely(run, logger, pressed.what, f"channel {channel}")
            if reply is not None:
                respond_ephemeral(respond, slack_message(reply, files_possible=False), replace=True)
        elif in_place and pressed.message_ts:
            # The summary in place becomes the thread's latest: follow-ups ask its cluster.
            _refresh_in_place(
                pressed, Delivery(client, logger), lambda: run(pressed.thread_root), logger
            )
        else:
            answer_in_thread(
                client=client,
                logger=logger,
                channel=channel,
                thread_ts=pressed.thread_root,
                user=user,
                what=pressed.what,
                compute=run,
                respond=respond,
                problems_private=True,
            )

    run_guarded(
        logger,
        f"button {name} for {user} in {channel}",
        press,
        on_error=lambda failure: respond_ephemeral(respond, failure),
    )


def _refresh_in_place(
    pressed: _Press,
    delivery: Delivery,
    compute: Callable[[], Any],
    logger: Logger,
) -> None:
    """Refresh or Real usage: the summary is replaced where it stands, with a note on top while
    the new one is computed; a problem leaves the old summary and tells only the presser."""
    channel, message_ts, thread_root = pressed.channel, pressed.message_ts, pressed.thread_root
    old_blocks = pressed.message.get("blocks") or []
    old_text = str(pressed.message.get("text") or "HAMi summary")
    delivery.update_with_note(
        channel, message_ts, IN_PLACE_NOTES[pressed.name], old_text, old_blocks
    )
    reply = compute_safely(compute, logger, pressed.what, f"channel {channel}")
    if reply is None:
        return
    new = slack_message(reply)
    if new.problem:
        # The old summary stays; only the person who pressed the button hears why.
        delivery.restore(channel, message_ts, old_text, old_blocks)
        delivery.ephemeral(channel, pressed.user, thread_root, new)
        return
    delivery.finish(channel, message_ts, thread_root, new)
