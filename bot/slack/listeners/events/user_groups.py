"""``subteam_updated`` and ``subteam_members_changed``: Slack tells the bot when a user group
changes, and the cached members are updated at once instead of at the next refresh
(https://docs.slack.dev/reference/events/subteam_members_changed)."""

from __future__ import annotations

from typing import Any

from slack_bolt import Ack, BoltContext

from bot.slack.services import services_from


def _user_ids(value: Any) -> list[str]:
    return [str(user) for user in value] if isinstance(value, list) else []


def update_group_members(ack: Ack, event: dict[str, Any], context: BoltContext) -> None:
    """The members added to and removed from a group (the event holds only the change)."""
    ack()
    directory = services_from(context).user_groups
    group = event.get("subteam_id")
    if directory is None or not isinstance(group, str) or not group:
        return
    directory.members_changed(
        group, _user_ids(event.get("added_users")), _user_ids(event.get("removed_users"))
    )


def update_group(ack: Ack, event: dict[str, Any], context: BoltContext) -> None:
    """A group's details or members changed; the event lists its members (cut at 500)."""
    ack()
    directory = services_from(context).user_groups
    subteam = event.get("subteam")
    if directory is None or not isinstance(subteam, dict):
        return
    group = subteam.get("id")
    if not isinstance(group, str) or not group:
        return
    users = subteam.get("users")
    count = subteam.get("user_count")
    directory.group_updated(
        group,
        _user_ids(users) if isinstance(users, list) else None,
        count if isinstance(count, int) and not isinstance(count, bool) else None,
    )
