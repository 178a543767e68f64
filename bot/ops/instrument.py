"""Request ids, request counts, acknowledgement and reply latencies for every Slack request.

Nothing of Bolt is replaced; the measurements sit where a request enters and where its answer
ends:

* **Entering and acknowledging.** The bot's transports hand each request to Bolt through
  ``dispatch_observed``: the HTTP endpoint (``bot.web.slack_endpoint``) and the Socket Mode
  handler (``bot.web.socket_mode``). It gives the request an id and an arrival time, calls
  ``app.dispatch``, then counts the request by surface and outcome and observes the
  acknowledgement latency. The app runs with ``process_before_response=True``
  (``bot.slack.app``): Bolt calls the acknowledging listener on the dispatching thread and
  returns from ``dispatch`` once it has returned, so the time around ``dispatch`` is what Slack
  waits for, minus the network. This is also the only place that sees every request: Bolt's
  signature check answers 401 before any global middleware runs, and a middleware's ``next()``
  does not wrap the rest of the chain, so a middleware could neither count refused requests
  nor time an acknowledgement.
* **Answering.** Each lazy listener (the part that posts "working on it", computes, updates the
  message and uploads files) is registered wrapped in ``answers_later``: it runs inside the
  request's id, and when it returns the request's reply latency is observed. A registration
  has one lazy listener, and a request's observation is recorded once, so every request with
  an answer gives exactly one reply-latency observation.

The request's ``RequestObservation`` travels in the Bolt context (``OBSERVATION_KEY``); Bolt
deep-copies the context for lazy listeners, and the observation hands itself out as its own
copy, so the lazy listener records on the very object the transport created.
"""

from __future__ import annotations

import functools
import inspect
import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from slack_bolt import App, BoltContext, BoltRequest, BoltResponse

from bot.ops.logging import new_request_id, request_context
from bot.ops.metrics import METRICS, OpsMetrics

log = logging.getLogger("hami_summary.requests")

OBSERVATION_KEY = "hami_summary_request"

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


class RequestObservation:
    """One request's id, arrival time (monotonic seconds) and surface, and the metrics its
    latencies go to. The reply latency is recorded at most once."""

    def __init__(self, surface: str, metrics: OpsMetrics) -> None:
        self.request_id = new_request_id()
        self.received_at = time.monotonic()
        self.surface = surface
        self.metrics = metrics
        self._replied = False
        self._lock = threading.Lock()

    def __deepcopy__(self, memo: dict[int, Any]) -> RequestObservation:
        # Bolt copies the context for lazy listeners; they must record on this object.
        return self

    def record_ack(self, status: int, retry_num: str | None) -> float:
        elapsed = time.monotonic() - self.received_at
        outcome = outcome_of(status)
        self.metrics.requests.labels(surface=self.surface, outcome=outcome).inc()
        self.metrics.ack_latency_seconds.labels(surface=self.surface).observe(elapsed)
        log.info(
            "slack request %s %s in %.0f ms",
            self.surface,
            outcome,
            elapsed * 1000,
            extra={
                "surface": self.surface,
                "outcome": outcome,
                "status": status,
                "ack_ms": round(elapsed * 1000, 1),
                "retry_num": retry_num,
            },
        )
        return elapsed

    def record_reply(self) -> float | None:
        """Observe the reply latency, the first time only; returns it in seconds (None when
        it was recorded before)."""
        with self._lock:
            if self._replied:
                return None
            self._replied = True
        elapsed = time.monotonic() - self.received_at
        self.metrics.reply_latency_seconds.labels(surface=self.surface).observe(elapsed)
        return elapsed


def observation_of(context: Mapping[str, Any]) -> RequestObservation | None:
    found = context.get(OBSERVATION_KEY)
    return found if isinstance(found, RequestObservation) else None


def dispatch_observed(
    app: App, request: BoltRequest, metrics: OpsMetrics = METRICS
) -> BoltResponse:
    """``app.dispatch(request)``, counted, timed and inside a request id of its own."""
    try:
        surface = surface_of(request.body if isinstance(request.body, Mapping) else {})
    except Exception:  # a malformed body is Bolt's to refuse, not ours to crash on
        surface = "other"
    observation = RequestObservation(surface, metrics)
    request.context[OBSERVATION_KEY] = observation
    status = 500
    with request_context(observation.request_id):
        try:
            response = app.dispatch(request)
            status = response.status
            return response
        finally:
            observation.record_ack(status, _retry_number(request))


def answers_later(function: Callable[..., None]) -> Callable[..., None]:
    """``function`` as a lazy listener whose end is the request's reply.

    It runs inside the request's id (its log lines carry it), and when it returns, however it
    ends, the request's reply latency is observed. ``function`` must take ``context`` (Bolt
    passes a listener only the arguments it names, read from the wrapped function).
    """
    if "context" not in inspect.signature(function).parameters:
        raise TypeError(f"{function.__name__} must take a 'context' argument to be timed")

    @functools.wraps(function)
    def timed(**kwargs: Any) -> None:
        context: BoltContext = kwargs["context"]
        observation = observation_of(context)
        if observation is None:  # dispatched by something other than our transports
            function(**kwargs)
            return
        with request_context(observation.request_id):
            try:
                function(**kwargs)
            finally:
                observation.record_reply()

    return timed
