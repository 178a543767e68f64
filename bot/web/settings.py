"""Limits of the bot's HTTP server; ``bot.config`` reads them from the environment.

* ``HAMI_SUMMARY_HTTP_THREADS`` (default 8): requests handled at once. Slack's requests are
  acknowledged in milliseconds (the work runs on Bolt's listener pool,
  ``HAMI_SUMMARY_WORKER_THREADS``), so a few threads serve many replicas' worth of traffic;
  requests beyond them wait in a queue instead of starting a thread each.
* ``HAMI_SUMMARY_HTTP_IDLE_TIMEOUT_SECONDS`` (default 60): a connection that sends nothing for
  this long, between requests or in the middle of one (a body that never arrives), is closed.
  Idle connections hold no thread, only a socket, until then.
* ``HAMI_SUMMARY_HTTP_MAX_BODY_BYTES`` (default 4 MiB): larger requests are refused with 413
  before their body is read. Slack's events, commands and interactions are a few kilobytes.
* ``HAMI_SUMMARY_HTTP_CONNECTION_LIMIT`` (default 1000): open connections beyond this wait in
  the listen queue until others close.
"""

from __future__ import annotations

from dataclasses import dataclass

THREADS_VARIABLE = "HAMI_SUMMARY_HTTP_THREADS"
IDLE_TIMEOUT_VARIABLE = "HAMI_SUMMARY_HTTP_IDLE_TIMEOUT_SECONDS"
MAX_BODY_VARIABLE = "HAMI_SUMMARY_HTTP_MAX_BODY_BYTES"
CONNECTION_LIMIT_VARIABLE = "HAMI_SUMMARY_HTTP_CONNECTION_LIMIT"

DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class HttpSettings:
    threads: int = 8
    idle_timeout_seconds: int = 60
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    connection_limit: int = 1000
