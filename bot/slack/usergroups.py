"""Slack user-group membership, for the cluster registry's ``allowed_user_groups``.

Members are read with the Web API method ``usergroups.users.list`` (one call per group; it
answers ``{"ok": true, "users": ["U…", …]}`` and needs the ``usergroups:read`` scope,
https://docs.slack.dev/reference/methods/usergroups.users.list). Each group's members are kept
in the bot's store for a few minutes, so every replica shares one lookup and most requests make
none. A lookup that fails (``missing_scope``, an unknown group, no answer in time) is logged,
lets nobody in through that group, and is remembered for a minute as a problem worded for the
admin; ``clusters`` and ``help`` show it. Access is never opened by a failure.

Lookups never hold up an acknowledgement (Slack waits 3 s for it, and twenty groups at 2 s
each would not fit). The groups the registry names are kept warm by a background refresher
(``start_refreshing``, each group read again when half its TTL has passed), and Slack's
``subteam_updated`` / ``subteam_members_changed`` events update the cached members as they
change. Missing groups are read side by side on a small pool; code that acknowledges sets a
wait limit (``wait_at_most``) and gets ``MembershipPending`` when membership is not known
within it, so it can acknowledge with "checking access" and answer after the lookups.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

from bot.conversation.intents import AccessPending
from bot.store import codec
from bot.store.kv import KeyValueStore

log = logging.getLogger("hami_summary.slack.usergroups")

KIND = "usergroup"
DEFAULT_TTL_SECONDS = 300.0
FAILURE_TTL_SECONDS = 60.0
# A request may wait for a lookup (after acknowledging), so the client that makes them gives
# up sooner than the bot's main Web API client.
LOOKUP_TIMEOUT_SECONDS = 2
SCOPE = "usergroups:read"
# How long an acknowledgement waits for user groups that are not cached: enough for a normal
# Web API answer, well inside Slack's 3 s with the rest of the acknowledgement.
ACK_WAIT_SECONDS = 0.4
# Groups read side by side (Slack rate-limits usergroups.users.list per workspace, so few).
LOOKUP_THREADS = 4
# A cached group is read again once this share of its TTL has passed, so requests find it warm.
REFRESH_AFTER_FRACTION = 0.5
REFRESH_CHECK_SECONDS = 30.0
# ``subteam_updated`` lists at most this many members (https://docs.slack.dev/reference/events/
# subteam_updated): a longer group is read with usergroups.users.list instead.
EVENT_USERS_LIMIT = 500

_wait_limit: ContextVar[float | None] = ContextVar("hami_usergroups_wait_limit", default=None)


class MembershipPending(AccessPending):
    """Membership of ``groups`` was not known within the caller's wait limit; their lookups go
    on in the background, and asking again later (without a limit) waits for them."""

    def __init__(self, groups: Collection[str]) -> None:
        names = tuple(sorted(groups))
        super().__init__(f"user groups still being read: {', '.join(names)}", names)


@contextmanager
def wait_at_most(seconds: float) -> Iterator[None]:
    """Within this block, membership lookups in this thread wait at most ``seconds`` and then
    raise ``MembershipPending`` (for code that must answer Slack within its deadline)."""
    token = _wait_limit.set(seconds)
    try:
        yield
    finally:
        _wait_limit.reset(token)


def lookup_client(token: str, base_url: str) -> WebClient:
    """A Web API client for membership lookups: short timeout, no retries (a retry after a
    429's Retry-After would hold up the answer; the failure is remembered instead)."""
    return WebClient(
        token=token, base_url=base_url, timeout=LOOKUP_TIMEOUT_SECONDS, retry_handlers=[]
    )


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


def _complete(users: list[str], user_count: int | None) -> bool:
    """Whether a ``subteam_updated`` event's member list is whole (Slack cuts it at 500)."""
    return user_count == len(users) if user_count is not None else len(users) < EVENT_USERS_LIMIT


class SlackUserGroups:
    """``bot.live.UserGroupDirectory`` over the Slack Web API, cached in ``kv``."""

    def __init__(
        self,
        client: WebClient,
        kv: KeyValueStore,
        *,
        prefix: str = "usergroup",
        ttl_seconds: float = DEFAULT_TTL_SECONDS,
        failure_ttl_seconds: float = FAILURE_TTL_SECONDS,
        lookup_threads: int = LOOKUP_THREADS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._client = client
        self._kv = kv
        self._prefix = prefix.rstrip(":")
        self.ttl_seconds = ttl_seconds
        self.failure_ttl_seconds = failure_ttl_seconds
        self._clock = clock
        self._pool = ThreadPoolExecutor(lookup_threads, thread_name_prefix="hami-usergroups")
        # One lookup per group at a time in this process: concurrent requests (and the
        # refresher) needing the same group wait for the lookup already under way.
        self._pending: dict[str, Future[frozenset[str]]] = {}
        self._pending_guard = threading.Lock()
        self._stopped = threading.Event()
        self._refresher: threading.Thread | None = None
        self._watched: frozenset[str] = frozenset()  # the groups kept warm

    def _key(self, group: str) -> str:
        return f"{self._prefix}:{_key_part(group)}"

    def _cached(self, group: str) -> dict[str, Any] | None:
        return codec.decode(KIND, self._kv.get(self._key(group)))

    def groups_of(self, user: str, groups: Collection[str]) -> frozenset[str]:
        """The groups among ``groups`` that ``user`` is in. Inside ``wait_at_most`` raises
        ``MembershipPending`` when some group's members are not known within the limit."""
        known = {group: self._members_cached(group) for group in groups}
        missing = [group for group, members in known.items() if members is None]
        if missing:
            lookups = {group: self._lookup(group) for group in missing}
            _, not_done = wait(lookups.values(), timeout=_wait_limit.get())
            if not_done:
                raise MembershipPending([g for g, f in lookups.items() if f in not_done])
            known.update((group, lookup.result()) for group, lookup in lookups.items())
        return frozenset(group for group, members in known.items() if members and user in members)

    def problems(self, groups: Collection[str]) -> tuple[str, ...]:
        found: list[str] = []
        for group in groups:
            cached = self._cached(group)
            problem = cached.get("problem") if cached is not None else None
            if isinstance(problem, str) and problem not in found:
                found.append(problem)
        return tuple(found)

    def _members_cached(self, group: str) -> frozenset[str] | None:
        cached = self._cached(group)
        if cached is None:
            return None
        users = cached.get("users")
        # A failure recorded a moment ago is not retried on every request.
        return frozenset(str(u) for u in users) if isinstance(users, list) else frozenset()

    # -- lookups ---------------------------------------------------------------------------

    def _lookup(self, group: str, *, refresh: bool = False) -> Future[frozenset[str]]:
        """The lookup of ``group`` under way, or a new one on the pool."""
        with self._pending_guard:
            pending = self._pending.get(group)
            if pending is None:
                pending = self._pool.submit(self._look_up_once, group, refresh)
                self._pending[group] = pending
            return pending

    def _look_up_once(self, group: str, refresh: bool) -> frozenset[str]:
        try:
            # Another lookup (or an event) may have filled the cache since this was queued.
            found = None if refresh else self._members_cached(group)
            return found if found is not None else self._look_up(group)
        finally:
            with self._pending_guard:
                self._pending.pop(group, None)

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
            self._store_members(group, members)
            return frozenset(members)
        log.warning(
            "cannot read the members of Slack user group %s (%s, after %.1f s); "
            "allowed_user_groups lets nobody in through it for the next %.0f s",
            group,
            code,
            time.monotonic() - started,
            self.failure_ttl_seconds,
        )
        self._kv.put(
            self._key(group),
            codec.encode(KIND, {"error": code, "problem": problem_text(group, code)}),
            self.failure_ttl_seconds,
        )
        return frozenset()

    def _store_members(
        self, group: str, members: Iterable[str], fetched_at: float | None = None
    ) -> None:
        payload = {
            "users": sorted(set(members)),
            "fetched_at": self._clock() if fetched_at is None else fetched_at,
        }
        self._kv.put(self._key(group), codec.encode(KIND, payload), self.ttl_seconds)

    # -- keeping the registry's groups warm --------------------------------------------------

    def start_refreshing(
        self, groups: Collection[str], check_seconds: float = REFRESH_CHECK_SECONDS
    ) -> None:
        """Read ``groups`` now and again whenever half their TTL has passed, on a daemon
        thread, until ``stop``. Replicas share the store, so a group another replica read
        recently is not read again."""
        if not groups or self._refresher is not None:
            return
        self._watched = frozenset(groups)
        chosen = sorted(self._watched)

        def refresh() -> None:
            while True:
                for group in chosen:
                    if self._refresh_due(group):
                        self._lookup(group, refresh=True)
                if self._stopped.wait(check_seconds):
                    return

        self._refresher = threading.Thread(
            target=refresh, name="hami-usergroups-refresh", daemon=True
        )
        self._refresher.start()

    def _refresh_due(self, group: str) -> bool:
        cached = self._cached(group)
        if cached is None:
            return True
        if "users" not in cached:
            return False  # a recent failure: read again once it expires
        fetched_at = cached.get("fetched_at")
        if not isinstance(fetched_at, int | float):
            return True
        return self._clock() - fetched_at >= self.ttl_seconds * REFRESH_AFTER_FRACTION

    def stop(self) -> None:
        """Stop refreshing and drop lookups not started yet."""
        self._stopped.set()
        if self._refresher is not None:
            self._refresher.join(timeout=5)
        self._pool.shutdown(wait=False, cancel_futures=True)

    # -- Slack's user-group events -----------------------------------------------------------

    def members_changed(self, group: str, added: Iterable[str], removed: Iterable[str]) -> None:
        """``subteam_members_changed``: apply the change to the cached members. A group not
        cached is left alone (the next request reads it whole)."""
        cached = self._cached(group)
        users = cached.get("users") if cached is not None else None
        if cached is None or not isinstance(users, list):
            return
        members = (set(map(str, users)) | set(added)) - set(removed)
        fetched_at = cached.get("fetched_at")
        self._store_members(
            group, members, fetched_at if isinstance(fetched_at, int | float) else None
        )

    def group_updated(self, group: str, users: list[str] | None, user_count: int | None) -> None:
        """``subteam_updated``: the event carries the members (cut at 500); a complete list
        replaces the cached one, anything else has the group read again in the background.
        Slack sends it for every group in the workspace: others than ours are ignored."""
        if group not in self._watched and self._cached(group) is None:
            return
        if users is not None and _complete(users, user_count):
            self._store_members(group, users)
        else:
            self._lookup(group, refresh=True)
