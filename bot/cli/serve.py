"""``hami-summary serve [--socket-mode]``: run the Slack bot.

HTTP mode (``SLACK_SIGNING_SECRET`` set): a waitress server on ``$PORT`` with Slack at
``/slack/events`` and ``/healthz``, ``/readyz``, ``/metrics`` beside it. Socket Mode
(``--socket-mode``, or ``SLACK_APP_TOKEN`` set without a signing secret): a websocket to Slack,
with the operations endpoints on ``$OPS_PORT`` (default 8080; 0 turns them off).

Settings that cannot work (a variable missing or malformed, an unusable registry) stop the
command with exit 2 and a message naming them: the environment of a running process does not
change, so waiting would not help. Slack being unreachable or refusing the token does not stop
it: it keeps serving, reports not ready on ``/readyz`` with the reason, and tries again.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from dataclasses import dataclass
from types import FrameType
from typing import TYPE_CHECKING, Any

from bot.cli.main import EXIT_OK, EXIT_USAGE
from bot.config import BotConfig, ConfigError, forget_secret_environment, load_config

if TYPE_CHECKING:
    from bot.notify.loop import NotifyLoop
    from bot.web.serving import ServePlan

log = logging.getLogger("hami_summary.serve")


DESCRIPTION = """\
Run the Slack bot. Settings come from the environment:

  SLACK_BOT_TOKEN       bot token (xoxb-...), always
  SLACK_SIGNING_SECRET  HTTP mode: requests arrive at http://HOST:$PORT/slack/events
  SLACK_APP_TOKEN       Socket Mode (xapp-..., with --socket-mode or without a signing secret)
  SLACK_API_URL         Web API base URL (default https://slack.com/api/)
  PORT, OPS_PORT        HTTP port (default 3000); Socket Mode health port (default 8080, 0: off)
  REDIS_URL             shared state for several replicas (default: in process)
  HAMI_CLUSTERS_FILE    the cluster registry (YAML)
  HAMI_SUMMARY_HTTP_THREADS, HAMI_SUMMARY_HTTP_IDLE_TIMEOUT_SECONDS,
  HAMI_SUMMARY_HTTP_MAX_BODY_BYTES, HAMI_SUMMARY_HTTP_CONNECTION_LIMIT
                        web server limits (default 8 threads, 60 s, 4 MiB, 1000)
  HAMI_SUMMARY_ALERT_INTERVAL_SECONDS, HAMI_SUMMARY_NOTIFY_LEASE_SECONDS,
  HAMI_SUMMARY_NOTIFY_TICK_SECONDS
                        digests and alerts: evaluation interval, lease, tick (180, 60, 15 s)

HTTP mode also serves /healthz, /readyz and /metrics on $PORT. Until Slack accepts the bot token
(retried with back-off), /readyz answers 503 naming the reason.
"""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="run the Slack bot (HTTP mode or Socket Mode)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--socket-mode",
        action="store_true",
        help="connect to Slack over a websocket (needs SLACK_APP_TOKEN, xapp-...)",
    )
    parser.add_argument("--host", default="0.0.0.0", help="HTTP mode: address to listen on")
    parser.add_argument("--port", type=int, default=None, help="HTTP mode: port (default $PORT)")
    parser.add_argument(
        "--ops-port",
        type=int,
        default=None,
        help="Socket Mode: port of /healthz, /readyz, /metrics (default $OPS_PORT or 8080; 0: off)",
    )
    parser.set_defaults(run=run)


def _fail(message: str) -> int:
    print(f"hami-summary serve: {message}", file=sys.stderr)
    return EXIT_USAGE


@dataclass(frozen=True)
class _Mode:
    socket_mode: bool
    bot_token: str
    signing_secret: str | None
    app_token: str | None


def _choose_mode(config: BotConfig, socket_mode: bool) -> _Mode:
    """The mode to run in; ``ConfigError`` says which variable is missing."""
    if config.slack_bot_token is None:
        raise ConfigError(
            "SLACK_BOT_TOKEN is not set. Create the Slack app from "
            "deploy/slack-app-manifest.yaml, install it, and export its Bot User OAuth Token "
            "(xoxb-...). To try the bot without Slack: hami-summary chat --example"
        )
    token = config.slack_bot_token.reveal()
    if socket_mode or (config.slack_signing_secret is None and config.slack_app_token):
        if config.slack_app_token is None:
            raise ConfigError(
                "Socket Mode needs SLACK_APP_TOKEN: create an app-level token with the "
                "connections:write scope (Basic Information > App-Level Tokens) and export it."
            )
        return _Mode(True, token, None, config.slack_app_token.reveal())
    if config.slack_signing_secret is None:
        raise ConfigError(
            "set SLACK_SIGNING_SECRET (Basic Information > Signing Secret) for HTTP mode, or "
            "SLACK_APP_TOKEN (xapp-...) and --socket-mode for Socket Mode."
        )
    return _Mode(False, token, config.slack_signing_secret.reveal(), None)


def _prepare(args: argparse.Namespace) -> ServePlan:
    """Everything checked before serving. Raises an error whose ``message`` names what to fix
    (``ConfigError``, ``RegistryError``). Only settings are checked here: reaching Slack is
    retried while serving (``bot.web.slack_startup``)."""
    from bot.clusters.registry import empty_registry, load_registry
    from bot.ops.logging import register_secret
    from bot.store.factory import store_from_config
    from bot.web.serving import ServePlan

    config = load_config()
    for secret in config.secrets():
        register_secret(secret.reveal())
    store = store_from_config(config.redis)
    forget_secret_environment()
    mode = _choose_mode(config, args.socket_mode)
    ops_port = args.ops_port if args.ops_port is not None else config.ops_port
    registry = load_registry(config.clusters_file) if config.clusters_file else empty_registry()
    log.info("starting with settings %s", config.redacted())
    port = args.port if args.port is not None else config.port
    return ServePlan(
        config=config,
        bot_token=mode.bot_token,
        store=store,
        registry=registry,
        http=config.http,
        host=args.host,
        port=ops_port if mode.socket_mode else port,
        app_token=mode.app_token,
    )


def _notify_loop(plan: ServePlan) -> NotifyLoop | None:
    """The digest and alert loop when the registry declares any; ``ConfigError`` says what to
    fix."""
    from bot.notify.loop import build_notify_loop, declares_notifications

    if not declares_notifications(plan.registry):
        return None
    return build_notify_loop(
        plan.config, plan.store, plan.registry, plan.bot_token, plan.config.notify
    )


def run(args: argparse.Namespace) -> int:
    # Imported here: `hami-summary summarize` must not pay for Bolt, waitress and Redis imports.
    from bot.clusters.errors import RegistryError
    from bot.ops.logging import configure_logging
    from bot.web.serving import serve

    # Logging first: the store and Bolt log while they start (e.g. "Redis unavailable"), and
    # every line of a run must be in one format (JSON off a terminal), redacted.
    configure_logging(logging.getLogger().level or logging.INFO)
    stop = threading.Event()

    def request_stop(signum: int, frame: FrameType | None) -> None:
        log.info("signal %d: stopping", signum)
        stop.set()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    try:
        plan = _prepare(args)
        notify = _notify_loop(plan)
    except (ConfigError, RegistryError) as error:
        return _fail(error.message)
    if notify is not None:
        notify.start(stop)  # every replica runs it; leases decide who posts
    serve(plan, stop)
    return EXIT_OK
