"""Request ids, request counts and acknowledgement latency for every Slack request.

``instrument_app(app)`` does three things to a Bolt ``App``:

* it registers a global middleware that logs each request that passed Bolt's signature check,
  with its surface and request id;
* it replaces the app's lazy listener runner (Bolt's extension point for where lazy listeners
  run) with one that runs each lazy listener on a thread pool of its own, inside the request's
  id, and observes the reply latency when the lazy listener returns: the lazy listeners post
  the "working on it" message, compute, update it in place and upload the files, so their end
  is the moment the full reply is in Slack. The pool of its own matters under load: Bolt runs
  acknowledgements and lazy listeners on one executor, first come first served, so a burst of
  slow replies (scrapes, summaries, charts) would queue the next requests' ``ack()`` behind
  them past Slack's 3 seconds (Bolt then answers 404 and Slack retries);
* it wraps ``app.dispatch``, the one entry point both of Bolt's adapters call (HTTP:
  ``SlackRequestHandler``; Socket Mode: ``SocketModeHandler``). Bolt's global middleware runs
  *before* the listener and before the built-in signature check has been passed for refused
  requests, so a middleware alone can neither see when ``ack()`` happened nor count refused
  (401) requests. ``dispatch`` returns exactly when the listener acknowledged (Bolt's
  ``ThreadListenerRunner`` waits for ``ack.response``), so the time around it is the
  acknowledgement latency Slack sees, minus the network.

Each request gets a request id (``context["request_id"]``, also in every log record of the
request's thread) and its arrival time (``context["received_at"]``, monotonic seconds). Both
are plain values, so Bolt copies them into the context of lazy listeners.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import Any

from slack_bolt import App, BoltRequest, BoltResponse
from slack_bolt.lazy_listener.thread_runner import ThreadLazyListenerRunner

from bot.ops.logging import new_request_id, request_context
from bot.ops.metrics import METRICS, OpsMetrics

log = logging.getLogger("hami_summary.requests")

# The events the bot subscribes to (deploy/slack-app-manifest.yaml); others are "event:other".
_KNOWN_EVENTS = frozenset({"app_mention", "message"})

_INTERACTIVE_SURFACES = {
    "block_actions": "action",
    "shortcut": "shortcut",
    "message_action": "message_shortcut",
    "view_submission": "view",
    "view_closed": "view",
    "block_suggestion": "options",
}


def surface_of(body: Mapping[str, Any]) -> str:
    """A bounded name for the kind of request (a metric label; never a user-supplied value)."""
    if body.get("command"):
        return "command"
    kind = body.get("type")
    if kind == "event_callback":
        event = body.get("event")
        event_type = event.get("type") if isinstance(event, Mapping) else None
        return f"event:{event_type}" if event_type in _KNOWN_EVENTS else "event:other"
    if isinstance(kind, str) and kind in _INTERACTIVE_SURFACES:
        return _INTERACTIVE_SURFACES[kind]
    if kind == "url_verification":
        return "url_verification"
    return "other"


def outcome_of(status: int) -> str:
    if 200 <= status < 300:
        return "ok"
    if status == 401:
        return "unauthorized"
    if status == 404:
        return "unhandled"
    if status >= 500:
        return "error"
    return f"http_{status}"


def _retry_number(request: BoltRequest) -> str | None:
    values = request.headers.get("x-slack-retry-num") if request.headers else None
    return values[0] if values else None


class InstrumentedLazyListenerRunner(ThreadLazyListenerRunner):
    """Runs lazy listeners on ``executor``, inside their request id, timing the reply."""

    def __init__(self, logger: logging.Logger, executor: Executor, metrics: OpsMetrics) -> None:
        super().__init__(logger=logger, executor=executor)
        self._metrics = metrics

    def start(self, function: Callable[..., None], request: BoltRequest) -> None:
        def run_and_time() -> None:
            with request_context(request.context.get("request_id")):
                try:
                    self.run(function, request)
                finally:
                    record_reply(request.context, self._metrics)

        self.executor.submit(run_and_time)


DEFAULT_REPLY_WORKERS = 16


def _pool_size(executor: Executor) -> int:
    workers = getattr(executor, "_max_workers", None)
    return workers if isinstance(workers, int) and workers > 0 else DEFAULT_REPLY_WORKERS


def instrument_app(
    app: App, metrics: OpsMetrics = METRICS, *, reply_workers: int | None = None
) -> App:
    """Count, time and tag every request ``app`` handles; returns ``app`` for chaining.

    Lazy listeners (the replies) move to a pool of ``reply_workers`` threads of their own
    (default: as many as the app's listener executor), leaving Bolt's executor to the acks.
    """
    if getattr(app, "_hami_summary_instrumented", False):
        return app
    original_dispatch: Callable[[BoltRequest], BoltResponse] = app.dispatch

    def dispatch(request: BoltRequest) -> BoltResponse:
        received_at = time.monotonic()
        request_id = new_request_id()
        try:
            surface = surface_of(request.body if isinstance(request.body, Mapping) else {})
        except Exception:  # a malformed body is Bolt's to refuse, not ours to crash on
            surface = "other"
        request.context["request_id"] = request_id
        request.context["received_at"] = received_at
        request.context["surface"] = surface
        status = 500
        with request_context(request_id):
            try:
                response = original_dispatch(request)
                status = response.status
                return response
            finally:
                elapsed = time.monotonic() - received_at
                outcome = outcome_of(status)
                metrics.requests.labels(surface=surface, outcome=outcome).inc()
                metrics.ack_latency_seconds.labels(surface=surface).observe(elapsed)
                log.info(
                    "slack request %s %s in %.0f ms",
                    surface,
                    outcome,
                    elapsed * 1000,
                    extra={
                        "surface": surface,
                        "outcome": outcome,
                        "status": status,
                        "ack_ms": round(elapsed * 1000, 1),
                        "retry_num": _retry_number(request),
                    },
                )

    app.dispatch = dispatch  # type: ignore[method-assign,assignment]
    runner = app.listener_runner
    workers = reply_workers or _pool_size(runner.listener_executor)
    runner.lazy_listener_runner = InstrumentedLazyListenerRunner(
        runner.lazy_listener_runner.logger,
        ThreadPoolExecutor(max_workers=workers, thread_name_prefix="hami-reply"),
        metrics,
    )

    def tag_request(context: Any, next: Callable[[], None]) -> None:
        log.debug("dispatching %s request", context.get("surface", "other"))
        next()

    app.middleware(tag_request)
    app._hami_summary_instrumented = True  # type: ignore[attr-defined]
    return app


def record_reply(context: Mapping[str, Any], metrics: OpsMetrics = METRICS) -> float | None:
    """Observe the reply latency of the request ``context`` belongs to; returns it in seconds.

    Called for every lazy listener of an instrumented app when it returns. Returns None when
    the context did not come through ``instrument_app``.
    """
    received_at = context.get("received_at")
    if not isinstance(received_at, float):
        return None
    elapsed = time.monotonic() - received_at
    surface = context.get("surface")
    metrics.reply_latency_seconds.labels(
        surface=surface if isinstance(surface, str) else "other"
    ).observe(elapsed)
    return elapsed
