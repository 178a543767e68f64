"""``/healthz``, ``/readyz`` and ``/metrics`` as WSGI apps.

* ``/healthz``: the process is alive and serving HTTP (Kubernetes liveness probe). It checks
  nothing else on purpose: a liveness failure restarts the pod, which cures no outside outage.
* ``/readyz``: the bot can answer (readiness probe). Checks: the Slack bot token was verified
  (``auth.test``), the cluster registry loaded, and the Redis state. HTTP 503 when the bot cannot
  answer (Slack not reached or the token refused: ``serve`` keeps trying, and ``reason`` says
  why and when the next try is; registry not loaded yet); HTTP 200 with status
  ``degraded`` when Redis is away, because the bot still answers from process memory, and taking
  every replica out of the Service for a Redis outage would stop all answers (set
  ``redis_required`` to make it a 503 instead). The JSON body names each check's state and why.
  An unusable registry file stops ``serve`` at start instead (exit 2 naming the file, line and
  field): a configuration error is fixed by the operator, not waited out by a probe.
* ``/metrics``: prometheus_client's exposition of the registry of ``bot.ops.metrics``.

``bot.web.server`` serves them beside ``/slack/events`` in HTTP mode, and alone on a side port
in Socket Mode.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal, Protocol
from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

from prometheus_client import make_wsgi_app

from bot.ops.metrics import METRICS, OpsMetrics

CheckStatus = Literal["ok", "degraded", "pending", "failed", "disabled"]
# Statuses that leave the bot able to answer Slack.
_SERVING: frozenset[str] = frozenset({"ok", "degraded", "disabled"})


class StoreHealth(Protocol):
    """A store's state and why it is not ok (``bot.store.resilient.RedisHealth``)."""

    @property
    def state(self) -> str: ...
    @property
    def reason(self) -> str: ...


@dataclass(frozen=True, slots=True)
class CheckResult:
    status: CheckStatus
    detail: str


class Readiness:
    """What ``/readyz`` reports; the bot records its start-up checks here as they complete."""

    def __init__(
        self,
        *,
        redis_state: Callable[[], str | StoreHealth] = lambda: "disabled",
        redis_required: bool = False,
    ) -> None:
        self._lock = threading.Lock()
        self._redis_state = redis_state
        self._redis_required = redis_required
        self._slack = CheckResult("pending", "the bot token has not been verified yet")
        self._registry = CheckResult("pending", "the cluster registry has not been loaded yet")

    def slack_token_verified(self, team: str | None = None) -> None:
        detail = f"auth.test accepted the bot token (team {team})" if team else "token verified"
        with self._lock:
            self._slack = CheckResult("ok", detail)

    def slack_failed(self, what: str, retry_in_seconds: float | None = None) -> None:
        """``what`` failed, e.g. ``auth.test failed: invalid_auth`` (Slack's error or why Slack
        was not reached; never a token)."""
        detail = what + _retrying(retry_in_seconds)
        with self._lock:
            self._slack = CheckResult("failed", detail)

    def registry_loaded(self, clusters: int, source: str | None = None) -> None:
        """The registry is read once, at start; an unusable one stops ``serve`` (exit 2, with
        the file, line and field) before any probe is answered, so there is no failed state."""
        if clusters == 0:
            result = CheckResult("ok", "no clusters registered: pasted metrics only")
        else:
            where = f" from {source}" if source else ""
            result = CheckResult("ok", f"{clusters} cluster(s) registered{where}")
        with self._lock:
            self._registry = result

    def _redis_check(self) -> CheckResult:
        # The store's state, alone or with the reason Redis is away or refuses writes.
        given = self._redis_state()
        state, reason = (given, "") if isinstance(given, str) else (given.state, given.reason)
        if state == "ok":
            return CheckResult("ok", "Redis takes writes; cache, locks and de-duplication shared")
        if state == "disabled":
            return CheckResult("disabled", "REDIS_URL unset: state kept in process memory")
        status: CheckStatus = "failed" if self._redis_required else "degraded"
        return CheckResult(
            status,
            f"{reason or 'Redis does not answer'}: answering from process memory (no shared "
            "cache; single-flight and retry de-duplication within this replica only)",
        )

    def report(self) -> tuple[bool, dict[str, object]]:
        """(ready, JSON body) for ``/readyz``."""
        with self._lock:
            checks = {"slack": self._slack, "registry": self._registry}
        checks["redis"] = self._redis_check()
        ready = all(check.status in _SERVING for check in checks.values())
        degraded = [name for name, check in checks.items() if check.status == "degraded"]
        overall = "not-ready" if not ready else ("degraded" if degraded else "ready")
        body: dict[str, object] = {
            "status": overall,
            "checks": {
                name: {"status": check.status, "detail": check.detail}
                for name, check in checks.items()
            },
        }
        if degraded:
            body["degraded"] = degraded
        if not ready:
            failing = [n for n, c in checks.items() if c.status not in _SERVING]
            body["failing"] = failing
            body["reason"] = "; ".join(f"{n}: {checks[n].detail}" for n in failing)
        return ready, body


def _retrying(seconds: float | None) -> str:
    return "" if seconds is None else f"; retrying in {seconds:g} s"


def _respond(
    start_response: StartResponse,
    status: str,
    body: bytes,
    content_type: str,
    method: str,
) -> Iterable[bytes]:
    start_response(
        status,
        [
            ("Content-Type", content_type),
            ("Content-Length", str(len(body))),
            ("Cache-Control", "no-store"),
        ],
    )
    return [b""] if method == "HEAD" else [body]


def _json_response(
    start_response: StartResponse, status: str, payload: object, method: str
) -> Iterable[bytes]:
    body = json.dumps(payload, sort_keys=True).encode("utf-8") + b"\n"
    return _respond(start_response, status, body, "application/json", method)


def _only_get(app: WSGIApplication) -> WSGIApplication:
    def guarded(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        method = environ.get("REQUEST_METHOD", "GET")
        if method not in ("GET", "HEAD"):
            return _json_response(
                start_response,
                "405 Method Not Allowed",
                {"error": f"{method} is not allowed here; use GET"},
                method,
            )
        return app(environ, start_response)

    return guarded


def healthz_app() -> WSGIApplication:
    def app(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        method = environ.get("REQUEST_METHOD", "GET")
        return _json_response(start_response, "200 OK", {"status": "alive"}, method)

    return _only_get(app)


def readyz_app(readiness: Readiness) -> WSGIApplication:
    def app(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        method = environ.get("REQUEST_METHOD", "GET")
        ready, body = readiness.report()
        status = "200 OK" if ready else "503 Service Unavailable"
        return _json_response(start_response, status, body, method)

    return _only_get(app)


def metrics_app(metrics: OpsMetrics = METRICS) -> WSGIApplication:
    """prometheus_client's own app on the bot's registry: it negotiates the format (classic
    text unless the scraper asks for OpenMetrics), gzip, and ``name[]`` filters."""
    exposition = make_wsgi_app(metrics.registry)

    def app(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        # prometheus_client answers only GET: a HEAD is answered as a GET without the body.
        body = list(exposition({**environ, "REQUEST_METHOD": "GET"}, start_response))
        return [b""] if environ.get("REQUEST_METHOD") == "HEAD" else body

    return _only_get(app)


def ops_routes(readiness: Readiness, metrics: OpsMetrics = METRICS) -> dict[str, WSGIApplication]:
    """Path -> WSGI app, for the bot's HTTP server (``bot.web.server``) or the side server."""
    return {
        "/healthz": healthz_app(),
        "/readyz": readyz_app(readiness),
        "/metrics": metrics_app(metrics),
    }
