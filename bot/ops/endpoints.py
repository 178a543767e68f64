"""``/healthz``, ``/readyz`` and ``/metrics`` as WSGI apps, and a side server for Socket Mode.

* ``/healthz``: the process is alive and serving HTTP (Kubernetes liveness probe). It checks
  nothing else on purpose: a liveness failure restarts the pod, which cures no outside outage.
* ``/readyz``: the bot can answer (readiness probe). Checks: the Slack bot token was verified
  (``auth.test``), the cluster registry loaded, and the Redis state. HTTP 503 when the bot cannot
  answer (token not verified or rejected, registry not loaded yet); HTTP 200 with status
  ``degraded`` when Redis is away, because the bot still answers from process memory, and taking
  every replica out of the Service for a Redis outage would stop all answers (set
  ``redis_required`` to make it a 503 instead). The JSON body names each check's state and why.
  An unusable registry file stops ``serve`` at start instead (exit 2 naming the file, line and
  field): a configuration error is fixed by the operator, not waited out by a probe.
* ``/metrics``: the Prometheus text exposition of ``bot.ops.metrics``.

In HTTP mode these are extra routes of the bot's own web server; in Socket Mode, where the bot
has no web server, ``start_ops_server`` serves them on a small side port.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from socketserver import ThreadingMixIn
from typing import Literal
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server
from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

from bot.ops.metrics import METRICS, METRICS_CONTENT_TYPE, OpsMetrics

log = logging.getLogger("hami_summary.ops")

CheckStatus = Literal["ok", "degraded", "pending", "failed", "disabled"]
# Statuses that leave the bot able to answer Slack.
_SERVING: frozenset[str] = frozenset({"ok", "degraded", "disabled"})


@dataclass(frozen=True, slots=True)
class CheckResult:
    status: CheckStatus
    detail: str


class Readiness:
    """What ``/readyz`` reports; the bot records its start-up checks here as they complete."""

    def __init__(
        self,
        *,
        redis_state: Callable[[], str | tuple[str, str]] = lambda: "disabled",
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

    def slack_token_failed(self, reason: str) -> None:
        """``reason`` as Slack gave it (e.g. ``invalid_auth``); never the token itself."""
        with self._lock:
            self._slack = CheckResult("failed", f"auth.test refused the bot token: {reason}")

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
        # The store's state, or (state, reason): why Redis is away or refuses writes.
        given = self._redis_state()
        state, reason = (given, "") if isinstance(given, str) else given
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
            body["failing"] = [n for n, c in checks.items() if c.status not in _SERVING]
        return ready, body


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
    def app(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        method = environ.get("REQUEST_METHOD", "GET")
        return _respond(
            start_response, "200 OK", metrics.exposition(), METRICS_CONTENT_TYPE, method
        )

    return _only_get(app)


def ops_routes(readiness: Readiness, metrics: OpsMetrics = METRICS) -> dict[str, WSGIApplication]:
    """Path -> WSGI app, for the bot's HTTP server (``bot.web.server``) or the side server."""
    return {
        "/healthz": healthz_app(),
        "/readyz": readyz_app(readiness),
        "/metrics": metrics_app(metrics),
    }


def route(routes: Mapping[str, WSGIApplication]) -> WSGIApplication:
    """One WSGI app dispatching on the exact path; 404 with a JSON body for anything else."""

    def app(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        target = routes.get(environ.get("PATH_INFO", "") or "/")
        if target is None:
            known = ", ".join(sorted(routes))
            return _json_response(
                start_response,
                "404 Not Found",
                {"error": f"no such path; this port serves {known}"},
                environ.get("REQUEST_METHOD", "GET"),
            )
        return target(environ, start_response)

    return app


class _ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        # Probes arrive every few seconds; keep them out of the logs unless debugging.
        log.debug("ops %s %s", self.address_string(), format % args)


class OpsServer:
    """The ops routes on their own port (Socket Mode has no web server of its own)."""

    def __init__(self, routes: Mapping[str, WSGIApplication], host: str, port: int) -> None:
        self._server = make_server(
            host,
            port,
            route(routes),
            server_class=_ThreadingWSGIServer,
            handler_class=_QuietHandler,
        )
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.2},
            name="hami-summary-ops",
            daemon=True,
        )

    def start(self) -> OpsServer:
        self._thread.start()
        log.info("health, readiness and metrics on port %d", self.port)
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def start_ops_server(
    readiness: Readiness, *, host: str = "0.0.0.0", port: int = 8080, metrics: OpsMetrics = METRICS
) -> OpsServer:
    """Serve ``/healthz``, ``/readyz`` and ``/metrics`` on ``host:port`` in a daemon thread."""
    return OpsServer(ops_routes(readiness, metrics), host, port).start()
