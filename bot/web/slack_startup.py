"""Reaching Slack at start, retried until it works, while the pod stays up and says why.

A Slack outage, a missing egress rule or a token that Slack refuses is not fixed by restarting
the process, so ``serve`` does not exit for them (a crash loop would only add restart back-off
on top of the outage). It keeps its HTTP server up (``/healthz`` 200), reports ``/readyz`` 503
with the reason and the time of the next try, and calls ``auth.test`` again with exponential
back-off (1 s, 2 s, 4 s ... at most 60 s). Each change of state is logged once, not every try.
When Slack accepts the token, ``connect`` builds the Bolt app and attaches it (HTTP mode) or
opens the websocket (Socket Mode), and the bot becomes ready.

A variable that is not set at all is different: the environment of a running process does not
change, so waiting cannot help, and ``serve`` exits 2 naming the variable before this starts.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

from bot.ops.endpoints import Readiness

log = logging.getLogger("hami_summary.serve")

FIRST_RETRY_SECONDS = 1.0
MAX_RETRY_SECONDS = 60.0
# auth.test at start waits this long for an answer before the try counts as failed.
AUTH_TEST_TIMEOUT_SECONDS = 10

# Builds the Bolt app and connects it (attaches it to the HTTP route, or opens the websocket).
Connect = Callable[[], None]


# auth.test errors that mean the token itself is refused (https://api.slack.com/methods/auth.test).
_TOKEN_ERRORS = frozenset(
    {
        "invalid_auth",
        "not_authed",
        "account_inactive",
        "token_revoked",
        "token_expired",
        "not_allowed_token_type",
        "team_access_not_granted",
        "no_permission",
    }
)


def describe(error: Exception, api_url: str, tokens: str = "SLACK_BOT_TOKEN") -> str:
    """A short reason for the readiness body and the log; never a token. ``tokens`` names the
    variables to check when Slack refuses one."""
    if isinstance(error, SlackApiError):
        status = error.response.status_code
        if status != 200:
            return f"HTTP {status} from {api_url}"
        code = str(error.response.get("error") or "unknown error")
        if code in _TOKEN_ERRORS:
            return f"{code}, Slack refused the token (check {tokens})"
        return code
    if isinstance(error, (OSError, SlackClientError)):  # refused, DNS, TLS, timeout
        reason = getattr(error, "reason", None) or error
        return f"cannot reach {api_url}: {reason}"
    return f"{type(error).__name__}: {error}"


def unexpected(error: Exception) -> bool:
    """Not an answer of Slack nor a network failure: a fault of the bot, worth a traceback."""
    return not isinstance(error, (SlackApiError, OSError, SlackClientError))


class SlackStartup:
    """Runs ``auth.test`` then ``connect`` until both succeed or ``stop`` is set."""

    def __init__(
        self,
        *,
        token: str,
        api_url: str,
        connect: Connect,
        readiness: Readiness,
        stop: threading.Event,
        first_retry_seconds: float = FIRST_RETRY_SECONDS,
        max_retry_seconds: float = MAX_RETRY_SECONDS,
    ) -> None:
        self._client = WebClient(token=token, base_url=api_url, timeout=AUTH_TEST_TIMEOUT_SECONDS)
        self._api_url = api_url
        self._connect = connect
        self._readiness = readiness
        self._stop = stop
        self._first = first_retry_seconds
        self._max = max_retry_seconds

    def start(self) -> SlackStartup:
        threading.Thread(target=self.run, name="hami-summary-slack-start", daemon=True).start()
        return self

    def _try_once(self) -> str | tuple[str, Exception]:
        """The team name when Slack accepted the token and ``connect`` worked, else what failed
        and the error."""
        try:
            team = str(self._client.auth_test().get("team") or "?")
        except Exception as error:  # every failure is retried; the reason is reported
            return "auth.test failed: " + describe(error, self._api_url), error
        try:
            self._connect()
        except Exception as error:
            tokens = "SLACK_BOT_TOKEN, and SLACK_APP_TOKEN in Socket Mode"
            return "connecting to Slack failed: " + describe(error, self._api_url, tokens), error
        return team

    def run(self) -> bool:
        """True once connected; False when ``stop`` was set first."""
        delay = self._first
        last = None
        while not self._stop.is_set():
            outcome = self._try_once()
            if isinstance(outcome, str):
                self._readiness.slack_token_verified(outcome)
                log.info("Slack accepted the bot token (team %s): ready", outcome)
                return True
            what, error = outcome
            self._readiness.slack_failed(what, delay)
            if what != last:
                log.warning(
                    "not ready: %s; retrying with back-off up to %g s "
                    "(logged again when the reason changes)",
                    what,
                    self._max,
                    exc_info=error if unexpected(error) else None,
                )
                last = what
            self._stop.wait(delay)
            delay = min(delay * 2, self._max)
        return False
