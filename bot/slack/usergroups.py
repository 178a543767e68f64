"""Slack user-group membership, for the cluster registry's ``allowed_user_groups``.

Members are read with the Web API method ``usergroups.users.list`` (one call per group; it
answers ``{"ok": true, "users": ["U…", …]}`` and needs the ``usergroups:read`` scope,
https://docs.slack.dev/reference/methods/usergroups.users.list). Each group's members are kept
in the bot's store for a few minutes, so every replica shares one lookup and most requests make
none. A lookup that fails (``missing_scope``, an unknown group, no answer in time) is logged,
lets nobody in through that group, and is remembered for a minute as a problem worded for the
admin; ``clusters`` and ``help`` show it. Access is never opened by a failure.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Collection
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

from bot.store import codec
from bot.store.kv import KeyValueStore

log = logging.getLogger("hami_summary.slack.usergroups")

KIND = "usergroup"
DEFAULT_TTL_SECONDS = 300.0
FAILURE_TTL_SECONDS = 60.0
# Lookups can run while a slash command is being acknowledged (Slack waits 3 s for that), so
# the client that makes them gives up sooner than the bot's main Web API client.
LOOKUP_TIMEOUT_SECONDS = 2
SCOPE = "usergroups:read"


def lookup_client(token: str, base_url: str) -> WebClient:
    """A Web API client for membership lookups: short timeout, no retries (a retry after a
    429's Retry-After would hold up the acknowledgement; the failure is remembered instead)."""
    return WebClient(token=token, base_url=base_url, timeout=LOOKUP_TIMEOUT_SECONDS,
                     retry_handlers=[])


def _key_part(group: str) -> str:
    if 0 < len(group) <= 64 and group.isalnum():
        return group
    return "h" + hashlib.sha256(group.encode("utf-8")).hexdigest()[:32]


def problem_text(group: str, code: str) -> str:
    """What a failed lookup means for access, and what the admin does about it."""
    if code == "missing_scope":
        return (
            f"Slack user groups cannot be read: the app lacks the `{SCOPE}` scope (Slack "
            "answered `missing_scope` to usergroups.users.list). Add the scope (it is in "
            "deploy/slack-app-manifest.yaml) and reinstall the app; until then "
            "allowed_user_groups in the cluster registry lets nobody in."
        )
    if code in ("no_such_subteam", "subteam_not_found"):
        return (
            f"Slack user group {group}, named in allowed_user_groups of the cluster registry, "
            f"does not exist in this workspace (Slack answered `{code}`). Correct or remove it."
        )
    return (
        f"The members of Slack user group {group} could not be read ({code}); "
        "allowed_user_groups lets nobody in through that group until they can."
    )


class SlackUserGroups:
    """``bot.live.UserGroupDirectory`` over the Slack Web API, cached in ``kv``."""

    def __init__(
        self,
        client: WebClient,
        kv: KeyValueStore,
        *,
        prefix: str = "hami-summary:usergroup",
        ttl_seconds: float = DEFAULT_TTL_SECONDS,
        failure_ttl_seconds: float = FAILURE_TTL_SECONDS,
    ) -> None:
        self._client = client
        self._kv = kv
        self._prefix = prefix.rstrip(":")
        self.ttl_seconds = ttl_seconds
        self.failure_ttl_seconds = failure_ttl_seconds
        # One lookup per group at a time in this process: Bolt runs a command's
        # acknowledgement and its lazy listener side by side, and both check access.
        self._locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()

    def _key(self, group: str) -> str:
        return f"{self._prefix}:{_key_part(group)}"

    def _cached(self, group: str) -> dict[str, Any] | None:
        return codec.decode(KIND, self._kv.get(self._key(group)))

    def groups_of(self, user: str, groups: Collection[str]) -> frozenset[str]:
        return frozenset(group for group in groups if user in self.members(group))

    def problems(self, groups: Collection[str]) -> tuple[str, ...]:
        found: list[str] = []
        for group in groups:
            cached = self._cached(group)
            problem = cached.get("problem") if cached is not None else None
            if isinstance(problem, str) and problem not in found:
                found.append(problem)
        return tuple(found)

    def members(self, group: str) -> frozenset[str]:
        """The user ids in ``group``; empty when they cannot be read (nobody is let in)."""
        found = self._members_cached(group)
        if found is not None:
            return found
        with self._locks_guard:
            lock = self._locks.setdefault(group, threading.Lock())
        with lock:
            found = self._members_cached(group)  # looked up while this thread waited
            return found if found is not None else self._look_up(group)

    def _members_cached(self, group: str) -> frozenset[str] | None:
        cached = self._cached(group)
        if cached is None:
            return None
        users = cached.get("users")
        # A failure recorded a moment ago is not retried on every request.
        return frozenset(str(u) for u in users) if isinstance(users, list) else frozenset()

    def _look_up(self, group: str) -> frozenset[str]:
        started = time.monotonic()
        try:
            response = self._client.usergroups_users_list(usergroup=group)
        except SlackApiError as error:
            code = str(error.response.get("error") or f"HTTP {error.response.status_code}")
        except (SlackClientError, OSError) as error:
            # No answer in time or no connection (URLError and TimeoutError are OSErrors).
            code = f"no answer from Slack: {type(error).__name__}"
        else:
            users = response.get("users")
            members = [str(u) for u in users] if isinstance(users, list) else []
            self._kv.put(self._key(group), codec.encode(KIND, {"users": members}),
                         self.ttl_seconds)
            return frozenset(members)
        log.warning(
            "cannot read the members of Slack user group %s (%s, after %.1f s); "
            "allowed_user_groups lets nobody in through it for the next %.0f s",
            group, code, time.monotonic() - started, self.failure_ttl_seconds,
        )
        self._kv.put(
            self._key(group),
            codec.encode(KIND, {"error": code, "problem": problem_text(group, code)}),
            self.failure_ttl_seconds,
        )
        return frozenset()
