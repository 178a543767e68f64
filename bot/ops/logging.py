"""Structured logs with request ids, and redaction of every credential the bot may touch.

* ``configure_logging``: one handler on stderr; JSON lines when stderr is not a terminal (log
  collectors in Kubernetes), readable text on a terminal. Every record carries the request id
  of the Slack request it belongs to (``request_context``), so one request's lines can be found
  among many replicas' logs.
* ``redact``: removes Slack tokens (``xoxb-``, ``xoxp-``, ``xapp-``, ``xoxe`` refresh tokens),
  signing secrets, bearer and basic credentials, URL passwords, PEM private keys (plain or
  base64), kubeconfig credentials (``token:``, ``client-key-data``,
  ``client-certificate-data``, ``password``, ...) and any assignment, env list entry or flag
  whose name says it is a credential (``AWS_SECRET_ACCESS_KEY=``, ``*_KEY``, ``password=``,
  ``name: DB_PASSWORD`` / ``value: ...``, ``--token ...``), as kubeconfig ``exec`` plugins use.
  ``RedactingFilter`` applies it to each record's message, arguments, exception and extra
  fields before any handler writes it; the formatters apply it once more to what they write.
* ``redact_handlers``: the same filter on handlers set up elsewhere (the CLI's ``basicConfig``).
* ``register_secret``: exact values to remove as well (the configured tokens themselves), for
  secrets that have no recognisable shape.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
import sys
import threading
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, TextIO

REDACTED = "[REDACTED]"

# Every pattern below is linear in the length of the text: no two quantifiers can match the
# same characters, repeats are possessive (``*+``, ``++``) or bounded, and a name is matched
# only from its first character (``(?<!...)`` guards), so no start position rescans a run that
# an earlier one already read. Log text may hold user input (pasted metrics, label values), and
# a backtracking pattern here would stall every thread that logs. ``redact`` also cuts what the
# patterns see to ``MAX_REDACTED_CHARS``.

# Slack token formats: https://api.slack.com/authentication/token-types (bot xoxb-, user xoxp-,
# app-level xapp-, workspace xoxa-, legacy xoxo-/xoxs-/xoxr-, rotating refresh xoxe-/xoxe.xoxb-).
_SLACK_TOKEN = re.compile(r"\b(xox[a-z](?:\.xox[a-z])?+|xapp)-[A-Za-z0-9-]++")
# Labels are short ("RSA PRIVATE KEY", "ENCRYPTED PRIVATE KEY"): bounded, so the backtracking
# that finds "PRIVATE KEY" after them costs at most 40 steps per header.
_PEM_LABEL = r"[A-Z0-9 ]{0,40}PRIVATE KEY-----"
_PEM_PRIVATE_KEY = re.compile(
    rf"-----BEGIN {_PEM_LABEL}.*?(?:-----END {_PEM_LABEL}|\Z)",
    re.DOTALL,
)
# Base64 of "-----BEGIN": kubeconfig's *-data fields hold PEM this way, so such a blob is
# redacted wherever it appears, labelled or not.
_BASE64_PEM = re.compile(r"LS0tLS1CRUdJTi[A-Za-z0-9+/=]*+")
_AUTH_HEADER = re.compile(r"(?i)\b(bearer|basic)(\s++)[A-Za-z0-9._~+/=-]{6,}+")
_URL_PASSWORD = re.compile(r"(?i)(?<![a-z0-9+.-])([a-z][a-z0-9+.-]*+://[^/\s:@]*+:)[^@\s/]++@")
# Names whose value is a credential (case-insensitive). Kubeconfig ``exec`` credential plugins
# carry cloud credentials in their ``env`` list and ``args`` (e.g. AWS_SECRET_ACCESS_KEY for
# aws-iam-authenticator), so generic names are caught too, not only Slack's and kubeconfig's.
# A name is a whole run of name characters, read once (possessive); it is a credential when
_NAME_CHAR = r"[a-z0-9_.-]"
_NAME_START = rf"(?<!{_NAME_CHAR})"
_CREDENTIAL_NAME = (
    # it contains one of these words: AWS_SECRET_ACCESS_KEY, SECRET_KEY_BASE, password_file,
    # GOOGLE_CREDENTIALS, signing_secret, DB_PASSWORD, passphrase (the look-ahead stays inside
    # the run: it only crosses name characters), or
    rf"(?:(?={_NAME_CHAR}*?(?:secret|password|passwd|passphrase|credential)){_NAME_CHAR}++"
    # it ends in one of these: token, id-token, SLACK_BOT_TOKEN, api_key, apikey, STRIPE_KEY,
    # private_key, ssh-key, AWS_ACCESS_KEY_ID, client-key-data, client-certificate-data.
    rf"|{_NAME_CHAR}++"
    r"(?:(?<=token)|(?<=apikey)|(?<=[_-]key)|(?<=[_-]key[_-]id)"
    r"|(?<=client-key-data)|(?<=client-certificate-data)))"
)
_QUOTE = r"""(?:\\?+["'])"""
# The value: inside plain quotes everything up to the closing quote (spaces too), otherwise up
# to a delimiter. ``[REDACTED]`` is never redacted twice.
_VALUE = (
    r"""(?!\[REDACTED\])"""
    r"""(?:(?<=")[^"\\\n]++(?=")|(?<=')[^'\\\n]++(?=')|[^\s"'\\,;&}]++)"""
)
# Key/value credentials as YAML (kubeconfig), JSON, env or query strings: the key, its
# separator and optional quote are kept, the value goes.
_KEY_VALUE = re.compile(
    rf"""(?ix)
    ({_QUOTE}?+{_NAME_START}{_CREDENTIAL_NAME}{_QUOTE}?+  # the key, maybe quoted or escaped
    \s*+[:=]\s*+                                 # YAML/JSON ':' or env/query '='
    {_QUOTE}?+)                                  # an opening quote
    ({_VALUE})
    """
)
# Kubernetes env lists (a kubeconfig exec plugin's ``env``): ``name: AWS_SECRET_ACCESS_KEY``
# then ``value: ...``, as YAML, JSON or a Python repr.
_NAMED_VALUE = re.compile(
    rf"""(?ix)
    ({_NAME_START}name{_QUOTE}?+\s*+[:=]\s*+{_QUOTE}?+     # name:
    {_NAME_START}{_CREDENTIAL_NAME}{_QUOTE}?+             # THE_SECRET
    \s*+,?+\s*+                                  # a line break and indent, or a comma
    {_QUOTE}?+value{_QUOTE}?+\s*+[:=]\s*+{_QUOTE}?+)  # value:
    ({_VALUE})
    """
)
# Command-line flags (a plugin's ``args``): ``--token abc``, ``"--password", "abc"``.
_FLAG_VALUE = re.compile(
    rf"""(?ix)
    ({_NAME_START}--{_CREDENTIAL_NAME}{_QUOTE}?+(?:\s*+,\s*+{_QUOTE}|\s++))
    ({_VALUE})
    """
)
# Longer log texts are cut before redaction (and so before they are written): a log line is
# no place for 32,000 characters, and a bound keeps the cost of redacting one fixed.
MAX_REDACTED_CHARS = 32_768
_CUT_WORD_CHARS = 1024

_registered_secrets: set[str] = set()
_secrets_lock = threading.Lock()


def register_secret(value: str | None) -> None:
    """Redact this exact value wherever it appears (tokens read from the environment)."""
    if value and len(value) >= 6:
        with _secrets_lock:
            _registered_secrets.add(value)


def _cut(text: str) -> tuple[str, str]:
    """(the part the patterns see, a note of what was left out) for a text over the bound."""
    if len(text) <= MAX_REDACTED_CHARS:
        return text, ""
    head = text[:MAX_REDACTED_CHARS]
    # A credential cut in half may no longer look like one (a URL password without its "@"):
    # the last, cut, word goes too (or the last 1,024 characters, when no space is that near).
    space = max(head.rfind(" "), head.rfind("\n"), head.rfind("\t"))
    head = head[: max(space, MAX_REDACTED_CHARS - _CUT_WORD_CHARS)]
    return head, f" [{len(text) - len(head)} more characters not logged]"


def redact(text: str) -> str:
    """``text`` with every credential replaced by ``[REDACTED]``, cut to a bounded length."""
    with _secrets_lock:
        secrets = sorted(_registered_secrets, key=len, reverse=True)
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    text, left_out = _cut(text)
    text = _PEM_PRIVATE_KEY.sub(REDACTED, text)
    text = _BASE64_PEM.sub(REDACTED, text)
    text = _SLACK_TOKEN.sub(lambda m: f"{m.group(1)}-{REDACTED}", text)
    text = _AUTH_HEADER.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
    text = _URL_PASSWORD.sub(lambda m: f"{m.group(1)}{REDACTED}@", text)
    text = _NAMED_VALUE.sub(lambda m: f"{m.group(1)}{REDACTED}", text)
    text = _FLAG_VALUE.sub(lambda m: f"{m.group(1)}{REDACTED}", text)
    text = _KEY_VALUE.sub(lambda m: f"{m.group(1)}{REDACTED}", text)
    return text + left_out


def _redact_value(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {k: _redact_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_redact_value(v) for v in value]
    if isinstance(value, int | float | bool) or value is None:
        return value
    return redact(repr(value))


# -- request ids ------------------------------------------------------------------------------

_request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "hami_summary_request_id", default=None
)


def new_request_id() -> str:
    return uuid.uuid4().hex[:12]


def current_request_id() -> str | None:
    return _request_id.get()


@contextmanager
def request_context(request_id: str | None = None) -> Iterator[str]:
    """Log records inside this block carry ``request_id`` (a new one when not given)."""
    rid = request_id or new_request_id()
    token = _request_id.set(rid)
    try:
        yield rid
    finally:
        _request_id.reset(token)


# -- filters and formatters -------------------------------------------------------------------

# Attributes every LogRecord has; anything else on a record came from ``extra=``.
_STANDARD_ATTRS = frozenset(
    logging.LogRecord("", 0, "", 0, "", None, None).__dict__.keys()
    | {"message", "asctime", "request_id", "rid"}
)


class RedactingFilter(logging.Filter):
    """Redacts a record in place (message, args, exception, extras) and adds ``request_id``."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = current_request_id()
        try:
            message = record.getMessage()
        except Exception:  # a bad format string must not lose the record
            message = f"{record.msg!r} {record.args!r}"
        record.msg = redact(message)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        for name, value in list(record.__dict__.items()):
            if name not in _STANDARD_ATTRS:
                setattr(record, name, _redact_value(value))
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, message, request id, extras, exception."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": redact(record.getMessage()),
        }
        request_id = getattr(record, "request_id", None)
        if request_id:
            entry["request_id"] = request_id
        for name, value in record.__dict__.items():
            if name not in _STANDARD_ATTRS and not name.startswith("_"):
                entry[name] = _redact_value(value)
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            entry["exception"] = redact(record.exc_text)
        if record.stack_info:
            entry["stack"] = redact(record.stack_info)
        # Each value is redacted on its own (not the JSON line, whose escapes a pattern could
        # split): the line stays valid JSON.
        return json.dumps(entry, ensure_ascii=False, default=lambda v: redact(str(v)))


class TextFormatter(logging.Formatter):
    """Readable lines for a terminal, with the request id when there is one."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(name)s%(rid)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        request_id = getattr(record, "request_id", None)
        record.rid = f" [{request_id}]" if request_id else ""
        return redact(super().format(record))


def redact_handlers(logger: logging.Logger | None = None) -> None:
    """Put ``RedactingFilter`` on every handler of ``logger`` (the root logger by default).

    For the plain ``basicConfig`` set-up of the CLI commands: what the Kubernetes client, an
    exec credential plugin's error output or the bot logs is redacted there too, at any level.
    """
    target = logging.getLogger() if logger is None else logger
    for handler in target.handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())


def configure_logging(
    level: str | int = "INFO",
    *,
    stream: TextIO | None = None,
    json_lines: bool | None = None,
    secrets: tuple[str | None, ...] = (),
) -> logging.Handler:
    """Send every log record to ``stream`` (stderr), redacted; JSON unless it is a terminal.

    Replaces handlers earlier set on the root logger (``basicConfig``), so this can be called
    by ``serve`` after the CLI's default set-up. Returns the handler.
    """
    stream = sys.stderr if stream is None else stream
    if json_lines is None:
        json_lines = not (hasattr(stream, "isatty") and stream.isatty())
    for secret in secrets:
        register_secret(secret)
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter())
    handler.setFormatter(JsonFormatter() if json_lines else TextFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper() if isinstance(level, str) else level)
    return handler
