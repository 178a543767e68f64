"""Running the bot once its settings are checked: the web server first, Slack when it answers.

HTTP mode: one server on ``$PORT`` with ``/healthz``, ``/readyz`` and ``/metrics`` from the
first moment, and ``/slack/events``, which answers 503 until Slack accepted the bot token.
Socket Mode: the ops routes on the side port, and the websocket once Slack accepted the token.
In both, ``bot.web.slack_startup`` keeps trying to reach Slack while ``/readyz`` says why not.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from wsgiref.types import WSGIApplication

from slack_bolt import App

from bot.clusters.registry import ClusterRegistry
from bot.config import BotConfig, HttpSettings
from bot.conversation.alerts import FiringAlerts
from bot.notify.firing import recorded_firing_alerts
from bot.notify.records import NotifyRecords
from bot.ops.endpoints import Readiness, ops_routes
from bot.slack.app import drain
from bot.slack.assembly import assemble_bot
from bot.store.factory import redis_state
from bot.store.kv import KeyValueStore
from bot.web.server import BotHttpServer, start_ops_server
from bot.web.slack_endpoint import SLACK_EVENTS_PATH, SlackEndpoint
from bot.web.slack_startup import Connect, SlackStartup
from bot.web.socket_mode import SocketModeRunner

log = logging.getLogger("hami_summary.serve")


def firing_alerts_of(store: KeyValueStore, registry: ClusterRegistry) -> FiringAlerts:
    """What the fleet view and the Home tab show as firing: the alert runner's records."""
    return recorded_firing_alerts(NotifyRecords(store), registry)


# On SIGTERM, answers in progress get this long to finish (Kubernetes waits 30 s by default
# before it kills the pod).
DRAIN_SECONDS = 20


@dataclass(frozen=True)
class ServePlan:
    """What ``hami-summary serve`` checked before starting; ``app_token`` set: Socket Mode."""

    config: BotConfig
    bot_token: str
    store: KeyValueStore
    registry: ClusterRegistry
    http: HttpSettings
    host: str
    # HTTP mode: the bot's port. Socket Mode: the side port of the ops routes (0: none).
    port: int
    app_token: str | None = None


def serve(plan: ServePlan, stop: threading.Event) -> None:
    """Serve until ``stop`` is set, then drain."""
    readiness = Readiness(redis_state=lambda: redis_state(plan.store))
    source = str(plan.config.clusters_file or "none")
    readiness.registry_loaded(len(plan.registry.entries), source)
    if plan.app_token is None:
        _serve_http(plan, readiness, stop)
    else:
        _serve_socket_mode(plan, plan.app_token, readiness, stop)


def _assemble(plan: ServePlan, socket_mode: bool) -> App:
    return assemble_bot(
        plan.config,
        store=plan.store,
        registry=plan.registry,
        socket_mode=socket_mode,
        firing_alerts=firing_alerts_of(plan.store, plan.registry),
        notices=NotifyRecords(plan.store),
    ).app


def _startup(
    plan: ServePlan, readiness: Readiness, stop: threading.Event, connect: Connect
) -> SlackStartup:
    return SlackStartup(
        token=plan.bot_token,
        api_url=plan.config.slack_api_url,
        connect=connect,
        readiness=readiness,
        stop=stop,
    ).start()


def _not_ready_reason(readiness: Readiness) -> str:
    return str(readiness.report()[1].get("reason") or "starting")


def _serve_http(plan: ServePlan, readiness: Readiness, stop: threading.Event) -> None:
    endpoint = SlackEndpoint(
        max_body_bytes=plan.http.max_body_bytes, not_ready=lambda: _not_ready_reason(readiness)
    )
    routes: dict[str, WSGIApplication] = {SLACK_EVENTS_PATH: endpoint, **ops_routes(readiness)}
    server = BotHttpServer(routes, host=plan.host, port=plan.port, settings=plan.http).start()
    base = f"http://{plan.host}:{server.port}"
    log.info("serving %s/healthz, /readyz and /metrics; Slack next", base)
    apps: list[App] = []

    def connect() -> None:
        app = _assemble(plan, socket_mode=False)
        apps.append(app)
        endpoint.attach(app)
        # A log record like every other line (JSON off a terminal), not a bare print.
        log.info(
            "listening on %s%s for Slack, /healthz, /readyz and /metrics beside",
            base,
            SLACK_EVENTS_PATH,
        )

    _startup(plan, readiness, stop, connect)
    stop.wait()
    server.stop()
    if apps and not drain(apps[0], DRAIN_SECONDS):
        log.warning("stopped with answers still in progress after %d s", DRAIN_SECONDS)


def _serve_socket_mode(
    plan: ServePlan, app_token: str, readiness: Readiness, stop: threading.Event
) -> None:
    ops = start_ops_server(readiness, port=plan.port, settings=plan.http) if plan.port else None
    apps: list[App] = []
    runners: list[SocketModeRunner] = []
    lock = threading.Lock()

    def connect() -> None:
        with lock:
            if not apps:  # built once; only the websocket is tried again
                apps.append(_assemble(plan, socket_mode=True))
            if stop.is_set():
                return
            runners.append(SocketModeRunner(apps[0], app_token).connect())
        log.info(
            "connected to Slack in Socket Mode%s",
            f"; /healthz, /readyz and /metrics on port {ops.port}" if ops else "",
        )

    _startup(plan, readiness, stop, connect)
    stop.wait()
    with lock:
        for runner in runners:
            runner.close()
    if apps:
        drain(apps[0], DRAIN_SECONDS)
    if ops is not None:
        ops.stop()
