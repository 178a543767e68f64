"""A local HTTP server that plays the Slack Web API for tests (DESIGN.md, "Real components").

It answers the methods the bot uses the way Slack does: HTTP 200 with a JSON body
``{"ok": true, ...}`` or ``{"ok": false, "error": "..."}``; 429 with ``Retry-After`` when a test
asks for it; ``missing_scope`` for a method whose scope is not in ``scopes`` (as Slack answers a
token without it). It also serves the upload URLs it hands out, private file downloads (bot
token required, as Slack does), ``response_url`` posts, and the members of the user groups a
test sets in ``usergroups`` (``usergroups.users.list``, sent as GET by slack_sdk; as slowly as
``usergroups_delay_seconds`` says), App Home views (``views.publish``), modals (``views.open``)
and users' DM channels (``conversations.open``). Every request is recorded in order, so tests
can assert on exactly what the bot sent.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import yaml

BOT_TOKEN = "xoxb-1111-2222-test"
APP_TOKEN = "xapp-1-A111-2222-test"
TEAM_ID = "T0TEST"
BOT_USER_ID = "UBOT0001"
BOT_ID = "BBOT0001"
MANIFEST = Path(__file__).resolve().parents[2] / "deploy" / "slack-app-manifest.yaml"


def manifest_bot_scopes() -> frozenset[str]:
    """The bot scopes the app manifest asks for: what an installed bot token carries."""
    manifest = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    return frozenset(manifest["oauth_config"]["scopes"]["bot"])


# The bot token's scopes are the manifest's; methods that need another answer
# ``missing_scope`` as Slack does.
BOT_SCOPES = manifest_bot_scopes()
# Scope each method needs, where the bot's tests check it.
METHOD_SCOPES = {"usergroups.users.list": "usergroups:read", "conversations.open": "im:write"}


@dataclass
class ApiCall:
    """One request the bot made. ``method`` is the Web API method, or "upload",
    "download" or "response_url" for the other endpoints."""

    method: str
    path: str
    params: dict[str, Any]
    headers: dict[str, str]
    body: bytes
    status: int = 200
    at: float = field(default_factory=time.monotonic)

    def json_param(self, name: str) -> Any:
        value = self.params.get(name)
        return json.loads(value) if isinstance(value, str) else value


@dataclass
class StoredMessage:
    channel: str
    ts: str
    text: str
    blocks: list[dict[str, Any]]
    thread_ts: str | None
    updates: int = 0


@dataclass
class StoredFile:
    file_id: str
    filename: str
    content: bytes | None = None
    title: str | None = None
    channel: str | None = None
    thread_ts: str | None = None


class SlackWebApi:
    """Start with ``start()``; ``base_url`` goes into ``SLACK_API_URL``."""

    def __init__(self, *, bot_token: str = BOT_TOKEN, app_token: str = APP_TOKEN) -> None:
        self.bot_token = bot_token
        self.app_token = app_token
        self.calls: list[ApiCall] = []
        self.messages: dict[tuple[str, str], StoredMessage] = {}
        self.uploads: dict[str, StoredFile] = {}
        self.private_files: dict[str, tuple[dict[str, Any], bytes, str]] = {}
        self.response_posts: dict[str, list[dict[str, Any]]] = {}
        self.channels_without_bot: set[str] = set()
        self.scopes: set[str] = set(BOT_SCOPES)
        # Slack user groups: id -> member user ids (usergroups.users.list).
        self.usergroups: dict[str, list[str]] = {}
        # How long each usergroups.users.list takes to answer (a slow Slack), once the test
        # lets them be answered at all (``hold_usergroups``, ``release_usergroups``).
        self.usergroups_delay_seconds = 0.0
        self._usergroups_released = threading.Event()
        self._usergroups_released.set()
        # App Home: the view each user's Home tab shows now (views.publish), and every
        # publish in order; modals opened (views.open); the DM channel of each user.
        self.home_views: dict[str, dict[str, Any]] = {}
        self.published: list[tuple[str, dict[str, Any]]] = []
        self.opened_views: list[dict[str, Any]] = []
        self.socket_mode_url: str | None = None
        self._rate_limits: dict[str, list[float]] = {}
        self._lock = threading.Condition()
        self._ts = itertools.count(1)
        self._file_ids = itertools.count(1)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self.port: int = self._server.server_address[1]
        self.root = f"http://127.0.0.1:{self.port}"
        self.base_url = f"{self.root}/api/"
        self._thread = threading.Thread(
            target=self._server.serve_forever, daemon=True, kwargs={"poll_interval": 0.1}
        )

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> SlackWebApi:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    # -- test controls ---------------------------------------------------------------------

    def rate_limit_once(self, method: str, retry_after_seconds: float = 1.0) -> None:
        """The next call of ``method`` gets HTTP 429 with ``Retry-After``."""
        with self._lock:
            self._rate_limits.setdefault(method, []).append(retry_after_seconds)

    def add_private_file(
        self,
        name: str,
        content: bytes,
        *,
        mimetype: str = "text/plain",
        filetype: str = "text",
        mode: str = "hosted",
    ) -> dict[str, Any]:
        """A file as it appears in a message event; downloadable with the bot token."""
        file_id = f"FPRIV{next(self._file_ids):04d}"
        url = f"{self.root}/files-pri/{TEAM_ID}-{file_id}/download/{name}"
        file = {
            "id": file_id,
            "name": name,
            "title": name,
            "mimetype": mimetype,
            "filetype": filetype,
            "mode": mode,
            "size": len(content),
            "url_private": url,
            "url_private_download": url,
        }
        with self._lock:
            self.private_files[file_id] = (file, content, mimetype)
        return file

    def response_url(self, name: str) -> str:
        return f"{self.root}/response/{name}"

    # -- what the bot did ------------------------------------------------------------------

    def calls_to(self, method: str) -> list[ApiCall]:
        with self._lock:
            return [c for c in self.calls if c.method == method]

    def wait_for(
        self,
        method: str,
        count: int = 1,
        *,
        timeout: float = 20.0,
        where: Callable[[ApiCall], bool] = lambda call: True,
    ) -> list[ApiCall]:
        """Wait until at least ``count`` calls of ``method`` matching ``where`` were made."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                found = [c for c in self.calls if c.method == method and where(c)]
                if len(found) >= count:
                    return found
                left = deadline - time.monotonic()
                if left <= 0:
                    seen = [c.method for c in self.calls]
                    raise AssertionError(
                        f"waited {timeout} s for {count} call(s) of {method}; calls seen: {seen}"
                    )
                self._lock.wait(left)

    def uploaded_files(self) -> list[StoredFile]:
        with self._lock:
            return [f for f in self.uploads.values() if f.channel is not None]

    def message(self, channel: str, ts: str) -> StoredMessage:
        with self._lock:
            return self.messages[(channel, ts)]

    # -- request handling ------------------------------------------------------------------

    def _record(self, call: ApiCall) -> None:
        with self._lock:
            self.calls.append(call)
            self._lock.notify_all()

    def _next_ts(self) -> str:
        return f"1700000000.{next(self._ts):06d}"

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _read(self) -> bytes:
                length = int(self.headers.get("Content-Length") or 0)
                return self.rfile.read(length) if length else b""

            def _send(
                self,
                status: int,
                body: bytes,
                content_type: str,
                extra: dict[str, str] | None = None,
            ) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                for key, value in (extra or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(body)

            def _json(
                self,
                payload: dict[str, Any],
                status: int = 200,
                extra: dict[str, str] | None = None,
            ) -> None:
                self._send(
                    status, json.dumps(payload).encode(), "application/json; charset=utf-8", extra
                )

            def do_GET(self) -> None:
                path = urlsplit(self.path).path
                headers = {k.lower(): v for k, v in self.headers.items()}
                if path.startswith("/api/"):
                    # slack_sdk sends some read methods as GET with query parameters
                    # (usergroups.users.list among them).
                    self._api(b"")
                    return
                if path.startswith("/files-pri/"):
                    file_id = path.split("/")[2].split("-", 1)[-1]
                    api._record(ApiCall("download", path, {"file": file_id}, headers, b""))
                    stored = api.private_files.get(file_id)
                    if headers.get("authorization") != f"Bearer {api.bot_token}":
                        # Slack serves its sign-in page (HTML) to a request without the token.
                        self._send(200, b"<html>sign in</html>", "text/html")
                    elif stored is None:
                        self._send(404, b"not found", "text/plain")
                    else:
                        self._send(200, stored[1], stored[2])
                    return
                self._send(404, b"not found", "text/plain")

            def do_POST(self) -> None:
                split = urlsplit(self.path)
                body = self._read()
                headers = {k.lower(): v for k, v in self.headers.items()}
                if split.path.startswith("/api/"):
                    self._api(body)
                    return
                if split.path.startswith("/upload/"):
                    file_id = split.path.rsplit("/", 1)[-1]
                    api._record(ApiCall("upload", split.path, {"file": file_id}, headers, body))
                    with api._lock:
                        if file_id in api.uploads:
                            api.uploads[file_id].content = body
                    self._send(200, f"OK - {len(body)}".encode(), "text/plain")
                    return
                if split.path.startswith("/response/"):
                    name = split.path.rsplit("/", 1)[-1]
                    payload = json.loads(body or b"{}")
                    with api._lock:
                        api.response_posts.setdefault(name, []).append(payload)
                    api._record(ApiCall("response_url", split.path, payload, headers, body))
                    self._json({"ok": True})
                    return
                self._send(404, b"not found", "text/plain")

            def _api(self, body: bytes) -> None:
                split = urlsplit(self.path)
                headers = {k.lower(): v for k, v in self.headers.items()}
                method = split.path[len("/api/") :]
                params: dict[str, Any] = {k: v[0] for k, v in parse_qs(split.query).items()}
                content_type = headers.get("content-type", "")
                if "json" in content_type and body:
                    params.update(json.loads(body))
                elif body:
                    params.update({k: v[0] for k, v in parse_qs(body.decode()).items()})
                with api._lock:
                    pending = api._rate_limits.get(method)
                    retry_after = pending.pop(0) if pending else None
                if retry_after is not None:
                    api._record(ApiCall(method, split.path, params, headers, body, status=429))
                    self._json(
                        {"ok": False, "error": "ratelimited"},
                        status=429,
                        extra={"Retry-After": f"{retry_after:g}"},
                    )
                    return
                # Recorded once answered (``at`` is still its arrival): a test that waits for
                # a call sees what the call did, such as an upload completed.
                call = ApiCall(method, split.path, params, headers, body)
                answer = api._answer(method, params, headers)
                api._record(call)
                self._json(answer)

        return Handler

    def _answer(
        self, method: str, params: dict[str, Any], headers: dict[str, str]
    ) -> dict[str, Any]:
        token = headers.get("authorization", "").removeprefix("Bearer ").strip()
        if method == "apps.connections.open":
            if token != self.app_token:
                return {"ok": False, "error": "invalid_auth"}
            if self.socket_mode_url is None:
                return {"ok": False, "error": "socket_mode_not_enabled"}
            return {"ok": True, "url": self.socket_mode_url}
        if not token:
            return {"ok": False, "error": "not_authed"}
        if token != self.bot_token:
            return {"ok": False, "error": "invalid_auth"}
        handler = getattr(self, "_" + method.replace(".", "_"), None)
        if handler is None:
            return {"ok": False, "error": "unknown_method"}
        needed = METHOD_SCOPES.get(method)
        if needed is not None and needed not in self.scopes:
            return {
                "ok": False,
                "error": "missing_scope",
                "needed": needed,
                "provided": ",".join(sorted(self.scopes)),
            }
        result: dict[str, Any] = handler(params)
        return result

    def _auth_test(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "ok": True,
            "url": "https://test.slack.com/",
            "team": "Test",
            "user": "hami-summary",
            "team_id": TEAM_ID,
            "user_id": BOT_USER_ID,
            "bot_id": BOT_ID,
        }

    @staticmethod
    def _blocks(params: dict[str, Any]) -> list[dict[str, Any]]:
        blocks = params.get("blocks")
        if isinstance(blocks, str):
            parsed: list[dict[str, Any]] = json.loads(blocks)
            return parsed
        return list(blocks or [])

    def _chat_postMessage(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = str(params.get("channel"))
        if channel in self.channels_without_bot:
            return {"ok": False, "error": "not_in_channel"}
        ts = self._next_ts()
        message = StoredMessage(
            channel,
            ts,
            str(params.get("text") or ""),
            self._blocks(params),
            params.get("thread_ts"),
        )
        with self._lock:
            self.messages[(channel, ts)] = message
        return {
            "ok": True,
            "channel": channel,
            "ts": ts,
            "message": {"text": message.text, "ts": ts, "blocks": message.blocks},
        }

    def _chat_update(self, params: dict[str, Any]) -> dict[str, Any]:
        key = (str(params.get("channel")), str(params.get("ts")))
        with self._lock:
            message = self.messages.get(key)
            if message is None:
                return {"ok": False, "error": "message_not_found"}
            message.text = str(params.get("text") or "")
            message.blocks = self._blocks(params)
            message.updates += 1
        return {"ok": True, "channel": key[0], "ts": key[1], "text": message.text}

    def _chat_delete(self, params: dict[str, Any]) -> dict[str, Any]:
        key = (str(params.get("channel")), str(params.get("ts")))
        with self._lock:
            if self.messages.pop(key, None) is None:
                return {"ok": False, "error": "message_not_found"}
        return {"ok": True, "channel": key[0], "ts": key[1]}

    def _chat_postEphemeral(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "message_ts": self._next_ts()}

    def _files_getUploadURLExternal(self, params: dict[str, Any]) -> dict[str, Any]:
        file_id = f"FUP{next(self._file_ids):04d}"
        with self._lock:
            self.uploads[file_id] = StoredFile(file_id, str(params.get("filename")))
        return {"ok": True, "upload_url": f"{self.root}/upload/{file_id}", "file_id": file_id}

    def _files_completeUploadExternal(self, params: dict[str, Any]) -> dict[str, Any]:
        files = params.get("files")
        items = json.loads(files) if isinstance(files, str) else files or []
        completed = []
        with self._lock:
            for item in items:
                stored = self.uploads.get(item.get("id"))
                if stored is None or stored.content is None:
                    return {"ok": False, "error": "file_not_found"}
                stored.title = item.get("title")
                stored.channel = params.get("channel_id")
                stored.thread_ts = params.get("thread_ts")
                completed.append({"id": stored.file_id, "title": stored.title})
        return {"ok": True, "files": completed}

    def hold_usergroups(self) -> None:
        """Answer no ``usergroups.users.list`` until ``release_usergroups``: whatever the bot
        answers meanwhile, it answered without waiting for a lookup."""
        self._usergroups_released.clear()

    def release_usergroups(self) -> None:
        self._usergroups_released.set()

    def _usergroups_users_list(self, params: dict[str, Any]) -> dict[str, Any]:
        self._usergroups_released.wait(timeout=60)
        time.sleep(self.usergroups_delay_seconds)
        with self._lock:
            members = self.usergroups.get(str(params.get("usergroup")))
        if members is None:
            return {"ok": False, "error": "no_such_subteam"}
        return {"ok": True, "users": list(members)}

    @staticmethod
    def _view(params: dict[str, Any]) -> dict[str, Any]:
        view = params.get("view")
        parsed = json.loads(view) if isinstance(view, str) else view
        return dict(parsed or {})

    def _views_publish(self, params: dict[str, Any]) -> dict[str, Any]:
        user = str(params.get("user_id") or "")
        view = self._view(params)
        if not user:
            return {"ok": False, "error": "invalid_arguments"}
        if view.get("type") != "home" or len(view.get("blocks") or []) > 100:
            return {"ok": False, "error": "invalid_arguments"}
        with self._lock:
            self.home_views[user] = view
            self.published.append((user, view))
        return {"ok": True, "view": {"id": f"V{len(self.published):08d}", **view}}

    def _views_open(self, params: dict[str, Any]) -> dict[str, Any]:
        view = self._view(params)
        if not params.get("trigger_id"):
            return {"ok": False, "error": "invalid_trigger_id"}
        if view.get("type") != "modal":
            return {"ok": False, "error": "invalid_arguments"}
        with self._lock:
            self.opened_views.append(view)
        return {"ok": True, "view": {"id": f"VM{len(self.opened_views):07d}", **view}}

    def _conversations_open(self, params: dict[str, Any]) -> dict[str, Any]:
        users = str(params.get("users") or "")
        if not users or "," in users:
            return {"ok": False, "error": "invalid_arguments"}
        return {"ok": True, "channel": {"id": dm_channel_of(users)}}

    def _files_info(self, params: dict[str, Any]) -> dict[str, Any]:
        stored = self.private_files.get(str(params.get("file")))
        if stored is None:
            return {"ok": False, "error": "file_not_found"}
        return {"ok": True, "file": stored[0]}


def dm_channel_of(user: str) -> str:
    """The id of a user's DM with the bot, as ``conversations.open`` answers it here."""
    return "D" + user[1:]


def running_slack_api() -> Iterator[SlackWebApi]:
    """Generator for a pytest fixture: a started server, stopped afterwards."""
    api = SlackWebApi().start()
    try:
        yield api
    finally:
        api.stop()
