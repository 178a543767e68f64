"""What the Slack listeners need, handed to them through Bolt's request context.

Bolt deep-copies the context for lazy listeners (``BoltContext.to_copyable``); the services
object returns itself from ``__deepcopy__`` so the store and its connections are shared, not
copied.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from slack_bolt import BoltContext

from bot.conversation.service import Conversation
from bot.slack.usergroups import SlackUserGroups
from bot.store.state import BotState

CONTEXT_KEY = "hami_summary_services"


@dataclass(frozen=True)
class SlackServices:
    conversation: Conversation
    state: BotState
    # Largest attached file the bot downloads, and the Web API base URL whose host may
    # receive the bot token for private file downloads.
    max_file_bytes: int
    api_base_url: str
    # Slack user-group membership, updated by Slack's subteam events.
    user_groups: SlackUserGroups | None = None

    def __deepcopy__(self, memo: dict[int, Any]) -> SlackServices:
        return self


def services_from(context: BoltContext) -> SlackServices:
    services = context.get(CONTEXT_KEY)
    if not isinstance(services, SlackServices):
        raise RuntimeError("the hami-summary services middleware did not run for this request")
    return services
