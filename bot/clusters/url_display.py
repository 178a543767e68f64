"""URLs as they may be shown: in Slack, in the CLI, in error messages and notes.

A registry's ``metrics_url`` or ``prometheus_url`` (or a kubeconfig's server) may carry
credentials: ``http://admin:pw@host/...`` or ``...?token=...``. ``display_url`` is the one way
such a URL is written anywhere a person can read it: the user-info part is dropped and the
values of query (and fragment) parameters whose names say they are secrets are replaced by
``***``. It splits the URL with ``urllib.parse`` (no regular expression), so its cost is linear
in the URL's length whatever it contains.
"""

from __future__ import annotations

import base64
from urllib.parse import unquote, unquote_plus, urlsplit

HIDDEN = "***"
UNREADABLE = "(not shown: not a URL I can read, and it may hold a credential)"
# Parameter names that are secrets as they stand, and words that make any name one.
_SECRET_NAMES = frozenset({"key", "sig", "pwd", "pass", "code", "session", "sessionid", "jwt"})
_SEPARATORS = frozenset("&;?#")
_SECRET_WORDS = (
    "token",
    "secret",
    "passw",
    "signature",
    "apikey",
    "api_key",
    "api-key",
    "credential",
    "auth",
    "private",
)


def is_secret_parameter(name: str) -> bool:
    """Whether a query parameter named ``name`` carries a credential (compared lower-case)."""
    lowered = unquote_plus(name).strip().lower()
    return lowered in _SECRET_NAMES or any(word in lowered for word in _SECRET_WORDS)


def _hide_secret_parameters(text: str) -> str:
    """``name=value`` pairs of a query or fragment with secret values hidden. ``&``, ``;``,
    ``?`` and ``#`` all separate pairs (a fragment may hold a route with its own query)."""
    parts = []
    start = 0
    for index, char in enumerate(text + "&"):
        if char in _SEPARATORS:
            part = text[start:index]
            name, equals, _ = part.partition("=")
            parts.append(f"{name}={HIDDEN}" if equals and is_secret_parameter(name) else part)
            parts.append(char)
            start = index + 1
    return "".join(parts)[:-1]


def display_url(url: str) -> str:
    """``url`` without credentials: no user-info, secret parameter values as ``***``.

    Text that does not split as a URL with a host, yet has an ``@`` (``admin:pw@host``), is not
    shown at all: what comes before the ``@`` may be a password.
    """
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return UNREADABLE
    if not parts.netloc and "@" in url:
        return UNREADABLE
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 address goes back into brackets
        host = f"[{host}]"
    netloc = host + (f":{port}" if port is not None else "")
    shown = f"{parts.scheme}://{netloc}" if parts.scheme or netloc else ""
    shown += parts.path
    if parts.query:
        shown += "?" + _hide_secret_parameters(parts.query)
    if parts.fragment:
        shown += "#" + _hide_secret_parameters(parts.fragment)
    return shown


def url_secrets(url: str) -> tuple[str, ...]:
    """The credentials ``url`` carries (its password, the values of its secret parameters),
    as written and decoded, and the Basic credentials sent for its user-info, so that text
    echoing the request can have them removed."""
    try:
        parts = urlsplit(url.strip())
        password = parts.password
    except ValueError:
        return ()
    found: list[str] = []
    if parts.username is not None or password is not None:
        raw_user, raw_secret = parts.username or "", password or ""
        user, secret = unquote(raw_user), unquote(raw_secret)
        # A user name alone (``https://TOKEN@host``) is a token; a password is the secret.
        found += [raw_secret, secret] if password else [raw_user, user]
        found.append(base64.b64encode(f"{user}:{secret}".encode()).decode())
    for text in (parts.query, parts.fragment):
        for separator in _SEPARATORS:
            text = text.replace(separator, "&")
        for pair in text.split("&"):
            name, equals, value = pair.partition("=")
            if equals and value and is_secret_parameter(name):
                found += [value, unquote_plus(value)]
    return tuple(dict.fromkeys(s for s in found if s))
