"""Text a server or a library wrote, made safe to quote in a message a person reads.

An API server, a proxy in front of it or a metrics endpoint may echo what it was sent in an
error body (``invalid bearer token ...``, a login page repeating the query string), and library
errors may carry the request URL. Quoting such text as it came could post a kubeconfig token or
a URL password to Slack, so every quote of it passes ``quoted`` first: the exact credentials of
the request (whatever their shape), then the log redaction (tokens, bearer and basic
credentials, URL passwords, private keys, ``password=`` and the like).
"""

from __future__ import annotations

from collections.abc import Iterable

from bot.ops.logging import REDACTED, redact

# Shorter values are not replaced on their own: "pw" would take letters out of every word.
_SHORTEST_SECRET = 4


def quoted(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with each of ``secrets``, and anything shaped like a credential, redacted."""
    for secret in sorted({s for s in secrets if len(s) >= _SHORTEST_SECRET}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return redact(text)
