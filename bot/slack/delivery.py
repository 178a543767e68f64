"""Posting replies: a "working on it" message first, then ``chat.update`` with the answer.

The person sees progress at once and one final answer in the same place, not a trail of
messages. Files (chart PNG, tables that did not fit) follow in the same thread through
``files_upload_v2`` (files.getUploadURLExternal, upload, files.completeUploadExternal).
Rate-limited calls (HTTP 429) are retried by the client's ``RateLimitErrorRetryHandler``.

Everything sent is a ``SlackMessage`` (encoded by ``bot.slack.markup`` when built) or, for a
message put back as Slack stored it, ``restore``; file titles are encoded here. Listeners call
these methods, never the Web API's posting methods themselves.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.conversation.replies import Attachment
from bot.slack.markup import encode_text
from bot.slack.messages import SlackMessage, SlackView, working_message

# Errors meaning "the bot cannot post here" (not a member, private channel, DM of others):
# the caller falls back to the interaction's response_url.
CANNOT_POST = frozenset({"not_in_channel", "channel_not_found", "is_archived", "restricted_action"})
MAX_BLOCKS = 50
# A file's title is shown as its name in the thread; Slack allows 255 characters.
FILE_TITLE_MAX = 255


class Delivery:
    def __init__(self, client: WebClient, logger: logging.Logger) -> None:
        self.client = client
        self.logger = logger

    def post(self, channel: str, thread_ts: str | None, message: SlackMessage) -> str | None:
        """Post ``message``; its ts, or None when the bot may not post in ``channel``."""
        try:
            response = self.client.chat_postMessage(
                channel=channel,
                thread_ts=thread_ts,
                text=message.text,
                blocks=message.blocks,
                unfurl_links=False,
                unfurl_media=False,
            )
        except SlackApiError as error:
            code = error.response.get("error")
            if code in CANNOT_POST:
                self.logger.info("cannot post in %s (%s); using response_url", channel, code)
                return None
            raise
        ts = response.get("ts")
        return ts if isinstance(ts, str) else None

    def post_working(self, channel: str, thread_ts: str | None, what: str) -> str | None:
        return self.post(channel, thread_ts, working_message(what))

    def update(self, channel: str, ts: str, message: SlackMessage) -> None:
        self.client.chat_update(channel=channel, ts=ts, text=message.text, blocks=message.blocks)

    def restore(
        self, channel: str, ts: str, stored_text: str, stored_blocks: list[dict[str, Any]]
    ) -> None:
        """Put back text and blocks exactly as Slack sent them in an interaction payload.

        They are already in Slack's encoding (``&lt;`` stays ``&lt;``), so encoding them again
        would show the entities themselves.
        """
        self.client.chat_update(
            channel=channel, ts=ts, text=stored_text, blocks=stored_blocks[:MAX_BLOCKS]
        )

    def update_with_note(
        self,
        channel: str,
        ts: str,
        note: SlackMessage,
        stored_text: str,
        stored_blocks: list[dict[str, Any]],
    ) -> None:
        """Show ``note``'s blocks above a message as Slack stored it (a "working" note)."""
        self.restore(channel, ts, stored_text, [*note.blocks, *stored_blocks])

    def publish_home(self, user: str, view: SlackView) -> None:
        """Show ``view`` in ``user``'s Home tab (it replaces the one there)."""
        self.client.views_publish(user_id=user, view=view.payload())

    def open_modal(self, trigger_id: str, view: SlackView) -> None:
        """Open ``view`` as a modal for the interaction ``trigger_id`` (valid for 3 s)."""
        self.client.views_open(trigger_id=trigger_id, view=view.payload())

    def delete(self, channel: str, ts: str) -> None:
        try:
            self.client.chat_delete(channel=channel, ts=ts)
        except SlackApiError as error:
            self.logger.warning(
                "could not delete message %s in %s: %s", ts, channel, error.response.get("error")
            )

    def ephemeral(
        self, channel: str, user: str, thread_ts: str | None, message: SlackMessage
    ) -> None:
        self.client.chat_postEphemeral(
            channel=channel,
            user=user,
            thread_ts=thread_ts,
            text=message.text,
            blocks=message.blocks,
        )

    def upload(
        self, channel: str, thread_ts: str | None, attachments: Sequence[Attachment]
    ) -> list[str]:
        """Upload ``attachments`` into the thread; returns the names that could not be sent.

        A file that fails to render (a bug) or upload (e.g. missing files:write) is logged and
        reported in the thread instead of failing the whole reply.
        """
        uploads: list[dict[str, Any]] = []
        failed: list[str] = []
        for attachment in attachments:
            try:
                content = attachment.render()
            except Exception:
                error_id = uuid.uuid4().hex[:8]
                self.logger.exception("error %s rendering %s", error_id, attachment.filename)
                failed.append(f"{attachment.filename} (error id {error_id})")
                continue
            uploads.append(
                {
                    "content": content,
                    "filename": attachment.filename,
                    "title": encode_text(attachment.title, FILE_TITLE_MAX),
                }
            )
        if uploads:
            try:
                self.client.files_upload_v2(
                    file_uploads=uploads, channel=channel, thread_ts=thread_ts
                )
            except SlackApiError as error:
                code = error.response.get("error")
                self.logger.warning("file upload to %s failed: %s", channel, code)
                failed.extend(f"{u['filename']} (Slack said {code})" for u in uploads)
        if failed:
            text = "I could not attach: " + ", ".join(failed) + "."
            self.client.chat_postMessage(
                channel=channel, thread_ts=thread_ts, text=SlackMessage([], text).text
            )
        return failed

    def finish(
        self,
        channel: str,
        ts: str,
        thread_ts: str | None,
        message: SlackMessage,
    ) -> None:
        """Replace the working message at ``ts`` with ``message``; files go to its thread."""
        self.update(channel, ts, message)
        if message.attachments:
            self.upload(channel, thread_ts or ts, message.attachments)
