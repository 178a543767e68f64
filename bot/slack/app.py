"""Assembling the Bolt app: Web API client, middleware, listeners.

Built-in Bolt middleware runs first: request signature verification (unsigned, wrongly signed
or over-5-minutes-old requests get 401), authorisation through ``auth.test``, and dropping the
bot's own events. Ours follows: the services are put in the request context, and redeliveries
(Slack retries with ``X-Slack-Retry-Num``) are acknowledged without being answered again.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from slack_bolt import App, BoltContext, BoltRequest, BoltResponse
from slack_sdk import WebClient
from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
)

from bot.conversation.replies import new_error_id
from bot.slack.listeners import register_listeners
from bot.slack.services import CONTEXT_KEY, SlackServices

log = logging.getLogger("hami_summary.slack")

# Slack answers 429 with Retry-After (https://api.slack.com/apis/rate-limits); the handler
# sleeps that long and tries again, up to this many times per call.
RATE_LIMIT_RETRIES = 3
WEB_API_TIMEOUT_SECONDS = 30


def build_web_client(token: str, base_url: str) -> WebClient:
    """The Web API client: ``base_url`` is Slack's, GovSlack's or a test server's."""
    return WebClient(
        token=token,
        base_url=base_url,
        timeout=WEB_API_TIMEOUT_SECONDS,
        retry_handlers=[
            ConnectionErrorRetryHandler(max_retry_count=1),
            RateLimitErrorRetryHandler(max_retry_count=RATE_LIMIT_RETRIES),
        ],
    )


def delivery_id(body: dict[str, Any]) -> str | None:
    """What identifies one delivery across Slack's retries (the same on every replica), so that
    a redelivered event, command, action or shortcut is answered once."""
    if body.get("type") == "event_callback":
        event_id = body.get("event_id")
        return f"event:{event_id}" if event_id else None
    trigger_id = body.get("trigger_id")
    if "command" in body:
        return f"command:{body['command']}:{trigger_id}" if trigger_id else None
    if body.get("type") == "block_actions":
        actions = body.get("actions") or [{}]
        first = actions[0] if isinstance(actions[0], dict) else {}
        marker = trigger_id or first.get("action_ts")
        return f"action:{first.get('action_id')}:{marker}" if marker else None
    if body.get("type") in ("message_action", "shortcut"):
        return f"shortcut:{body.get('callback_id')}:{trigger_id}" if trigger_id else None
    return None


def attach_services(services: SlackServices) -> Callable[..., None]:
    def attach(context: BoltContext, next: Callable[[], None]) -> None:
        context[CONTEXT_KEY] = services
        next()

    return attach


def skip_redeliveries(
    body: dict[str, Any],
    context: BoltContext,
    request: BoltRequest,
    logger: logging.Logger,
    next: Callable[[], None],
) -> BoltResponse | None:
    """Acknowledge a delivery seen before (on any replica) without answering it again."""
    key = delivery_id(body)
    services: SlackServices = context[CONTEXT_KEY]
    if key is not None and not services.state.first_sighting(key):
        retry = request.headers.get("x-slack-retry-num", ["?"])
        logger.info("skipping redelivery of %s (retry %s)", key, retry[0] if retry else "?")
        return BoltResponse(status=200, body="")
    next()
    return None


def report_unhandled_error(
    error: Exception,
    body: dict[str, Any],
    logger: logging.Logger,
    response: BoltResponse | None,
) -> BoltResponse | None:
    """The last resort for an error no listener caught (listeners answer their own errors): it
    is logged with its traceback under an error id, and where Bolt is about to answer 500 (a
    signed body of an unexpected shape, say), the answer names that id as the web server's own
    500s do, instead of an empty body. An acknowledgement already made is left as it is. The
    body is not logged: it may hold message text."""
    error_id = new_error_id()
    logger.error(
        "internal error %s in a listener for a %s request: %r",
        error_id,
        body.get("type") if isinstance(body, dict) else None,
        error,
        exc_info=error,
    )
    if response is None or response.status != 500:
        return None
    return BoltResponse(
        status=500,
        body=json.dumps({"error": "internal error", "error_id": error_id}),
        headers={"content-type": "application/json"},
    )


def drain(app: App, timeout_seconds: float) -> bool:
    """Let the answers in progress finish (at most ``timeout_seconds``).

    Called on shutdown after the server stopped taking requests (acknowledgements run on the
    server's threads, which it drains itself), so a SIGTERM during a reply does not leave a
    "working on it" message behind. True when everything finished.
    """
    executor = app.listener_runner.listener_executor
    waiter = threading.Thread(
        target=lambda: executor.shutdown(wait=True), name="hami-slack-drain", daemon=True
    )
    waiter.start()
    waiter.join(timeout_seconds)
    return not waiter.is_alive()


def build_app(
    *,
    client: WebClient,
    services: SlackServices,
    signing_secret: str | None,
    worker_threads: int = 16,
    logger: logging.Logger | None = None,
) -> App:
    """The Bolt app. ``signing_secret`` None means Socket Mode (requests are not signed).

    ``process_before_response``: the acknowledging listener runs on the thread that dispatches
    the request (the web server's or the Socket Mode handler's), and ``dispatch`` returns when
    it has returned. The lazy listeners, which compute and post the answers, are then the only
    work on ``listener_executor``: a burst of slow answers (scrapes, summaries, charts) cannot
    queue the next requests' acknowledgements behind them past Slack's 3 seconds.
    """
    app = App(
        client=client,
        signing_secret=signing_secret or "",
        request_verification_enabled=signing_secret is not None,
        process_before_response=True,
        listener_executor=ThreadPoolExecutor(
            max_workers=worker_threads, thread_name_prefix="hami-reply"
        ),
        logger=logger or log,
        name="hami-summary",
    )
    app.use(attach_services(services))
    app.use(skip_redeliveries)
    register_listeners(app)
    app.error(report_unhandled_error)
    return app
