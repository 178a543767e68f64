"""Turn what the Kubernetes client raises into a message that says what failed and what to do.

The official client (37.x) reports failures in several shapes:

* ``ApiException`` with the HTTP status and a ``Status`` JSON body (``message``, ``reason``) for
  answers from the API server;
* urllib3 ``MaxRetryError`` (retries are off, so it wraps the first error) with
  ``NewConnectionError`` / ``NameResolutionError`` (unreachable), ``SSLError`` (TLS) or
  ``ConnectTimeoutError`` / ``ReadTimeoutError``; a bare ``ReadTimeoutError`` while streaming;
* for websocket calls (exec), ``ApiException(status=0, reason=str(error))`` where the error text
  is websocket-client's ``Handshake status 403 Forbidden -+-+- {headers} -+-+- {body}`` or a
  socket / TLS error.

Messages name the cluster, the API server URL (not a secret) and never credentials.
"""

from __future__ import annotations

import json
import re
import socket
import ssl
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import urllib3
from kubernetes.client.exceptions import ApiException

from bot.clusters.deadline import DeadlineExceeded
from bot.clusters.errors import CollectionError
from bot.clusters.server_text import quoted
from bot.clusters.url_display import display_url, url_secrets

FailureKind = Literal[
    "unreachable",
    "tls",
    "timeout",
    "unauthorized",
    "forbidden",
    "not-found",
    "unavailable",
    "no-endpoints",
    "bad-request",
    "too-large",
    "other",
]
# Failures after which no other request to the same API server can succeed.
FATAL_KINDS: frozenset[FailureKind] = frozenset({"unreachable", "tls", "timeout", "unauthorized"})

# The body is the text after the second " -+-+- ": read up to it without a lazy quantifier.
_HANDSHAKE = re.compile(
    r"Handshake status (\d{3})[^-]*+-\+-\+- (?:[^ ]++| (?!-\+-\+- ))*+ -\+-\+- (.*+)$", re.DOTALL
)


@dataclass(frozen=True, slots=True)
class Target:
    """The cluster being talked to, for messages. ``secrets``: the credentials the client sends
    it (token, password), removed from anything the server or the client library says."""

    cluster: str
    context: str | None
    server: str
    kubeconfig: Path | None = None
    secrets: tuple[str, ...] = field(default=(), repr=False, compare=False)

    def quote(self, text: str) -> str:
        """``text`` from the server or the client library, safe to show."""
        return quoted(text, (*self.secrets, *url_secrets(self.server)))

    @property
    def label(self) -> str:
        if self.context and self.context != self.cluster:
            return f'cluster "{self.cluster}" (context "{self.context}")'
        if self.context:
            return f'context "{self.context}"'
        return f'cluster "{self.cluster}"'


@dataclass(frozen=True, slots=True)
class Call:
    """One API request: the RBAC verb and resource it needs, and what it is for."""

    verb: str
    resource: str  # "pods", "services", "services/proxy", "pods/proxy", "pods/exec"
    namespace: str | None  # None: cluster scope
    doing: str  # "listing the HAMi scheduler pods"

    @property
    def scope(self) -> str:
        return f'in namespace "{self.namespace}"' if self.namespace else "in all namespaces"


class ApiFailure(Exception):
    """A classified failure: what kind, the HTTP status and the server's own words when the API
    server answered, and the request it answered (``call``: verb, resource, namespace) when
    known. ``message`` is the complete sentence for the user, ``short`` one clause of it for
    lists of route failures."""

    def __init__(
        self,
        kind: FailureKind,
        message: str,
        *,
        status: int | None = None,
        server_message: str = "",
        short: str = "",
        call: Call | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status
        self.server_message = server_message
        self.short = short or message
        self.call = call

    @property
    def fatal(self) -> bool:
        return self.kind in FATAL_KINDS


class KubeApiError(CollectionError):
    """Collection stopped at an API failure no other route can get past (unreachable, TLS,
    timeout, credentials, or RBAC refusing the lookup itself); ``failure`` holds its facts and
    ``hint`` adds what to do in this situation."""

    def __init__(self, failure: ApiFailure, hint: str = "") -> None:
        super().__init__(failure.message + hint)
        self.failure = failure
        self.hint = hint


def rbac_rule(call: Call) -> str:
    holder = f'a Role in namespace "{call.namespace}"' if call.namespace else "a ClusterRole"
    return (
        f'{holder} with the rule {{apiGroups: [""], resources: ["{call.resource}"], '
        f'verbs: ["{call.verb}"]}}, bound to the identity of this kubeconfig'
    )


def classify(
    error: BaseException, target: Target, call: Call, budget_seconds: float | None = None
) -> ApiFailure:
    """Classify any exception raised by a client call made for ``call`` (within a time budget
    of ``budget_seconds``, when there is one)."""
    if isinstance(error, ApiFailure):
        return error
    if isinstance(error, DeadlineExceeded):
        return _timeout(target, call, error.budget_seconds)
    if isinstance(error, ApiException):
        status, body = _status_and_body(error)
        if status:
            return _http_failure(status, body, target, call)
        return _transport_failure(target.quote(str(error.reason or "")), target, call)
    if isinstance(error, urllib3.exceptions.MaxRetryError) and error.reason is not None:
        return classify(error.reason, target, call, budget_seconds)
    if isinstance(error, urllib3.exceptions.ProtocolError) and error.args[1:]:
        inner = error.args[1]
        if isinstance(inner, BaseException):
            return classify(inner, target, call, budget_seconds)
    # NewConnectionError (and NameResolutionError) subclass ConnectTimeoutError in urllib3 2.x:
    # test them first.
    if isinstance(error, urllib3.exceptions.NameResolutionError):
        return _unreachable("the host name does not resolve", target)
    if isinstance(error, urllib3.exceptions.NewConnectionError):
        return _transport_failure(target.quote(str(error)), target, call, budget_seconds)
    if isinstance(
        error,
        urllib3.exceptions.ConnectTimeoutError
        | urllib3.exceptions.ReadTimeoutError
        | TimeoutError
        | socket.timeout,
    ):
        return _timeout(target, call, budget_seconds)
    if isinstance(error, urllib3.exceptions.SSLError | ssl.SSLError):
        return _tls(target.quote(str(error)), target)
    if isinstance(error, ConnectionError | OSError):
        return _transport_failure(target.quote(str(error)), target, call, budget_seconds)
    said = _shorten(target.quote(str(error)))
    return ApiFailure(
        "other",
        f"{target.label}: unexpected error while {call.doing}: {type(error).__name__}: {said}",
        short=f"{type(error).__name__}: {said}",
    )


def _status_and_body(error: ApiException) -> tuple[int, str]:
    if error.status:
        return int(error.status), error.body or ""
    match = _HANDSHAKE.search(str(error.reason or ""))
    if match is not None:
        return int(match.group(1)), match.group(2)
    return 0, ""


def _server_message(body: str, target: Target) -> tuple[str, str]:
    """(message, reason) of a Kubernetes ``Status`` body, or the start of any other body, with
    whatever the server echoed of the request's credentials taken out."""
    try:
        status = json.loads(body)
    except (ValueError, TypeError):
        return _shorten(target.quote(body)), ""
    if isinstance(status, dict):
        message = target.quote(str(status.get("message", "")))
        return message, target.quote(str(status.get("reason", "")))
    return "", ""


def _http_failure(status: int, body: str, target: Target, call: Call) -> ApiFailure:
    message, reason = _server_message(body, target)
    if status in (401, 403):
        kind, text, short = _refused_words(status, message, target, call)
    else:
        kind, text, short = _http_words(status, message, reason, target, call)
    return ApiFailure(kind, text, status=status, server_message=message, call=call, short=short)


def _refused_words(
    status: int, message: str, target: Target, call: Call
) -> tuple[FailureKind, str, str]:
    """(kind, text, short text) of a request refused for its credentials (401) or RBAC (403)."""
    if status == 401:
        return (
            "unauthorized",
            f"The Kubernetes API server of {target.label} at {display_url(target.server)} "
            "rejected the credentials (HTTP 401 Unauthorized): the token or client certificate "
            "of this kubeconfig has expired or was revoked. Refresh the kubeconfig (for cloud "
            "clusters, run the provider's get-credentials command again) or issue a new "
            "ServiceAccount token.",
            "credentials rejected (HTTP 401)",
        )
    said = f": {message}" if message else ""
    what = f"{call.verb} {call.resource}"
    return (
        "forbidden",
        f"RBAC on {target.label} refused `{what}` {call.scope} (HTTP 403 Forbidden{said}), "
        f"needed for {call.doing}. Grant it with {rbac_rule(call)}.",
        f"RBAC refused `{what}` {call.scope} (HTTP 403)",
    )


def _http_words(
    status: int, message: str, reason: str, target: Target, call: Call
) -> tuple[FailureKind, str, str]:
    """(kind, text, short text) of any other HTTP error status."""
    said = f": {message}" if message else ""
    if status == 404:
        return (
            "not-found",
            f"{target.label}: not found while {call.doing} (HTTP 404{said}).",
            f"not found (HTTP 404{said})",
        )
    if status == 503 and "no endpoints available" in message:
        return (
            "no-endpoints",
            f"{target.label}: the Service has no ready endpoints (HTTP 503{said}): no scheduler "
            "pod behind it is Ready. Check the HAMi scheduler pods (kubectl get pods -l "
            "app.kubernetes.io/component=hami-scheduler -A) and their readiness.",
            f"no ready endpoints behind the Service (HTTP 503{said})",
        )
    if status in (502, 503, 504):
        return (
            "unavailable",
            f"{target.label}: the API server could not reach the backend while {call.doing} "
            f"(HTTP {status}{said}).",
            f"backend unreachable through the API server (HTTP {status}{said})",
        )
    if status == 400:
        return (
            "bad-request",
            f"{target.label}: the API server refused the request while {call.doing} "
            f"(HTTP 400{said}).",
            f"refused (HTTP 400{said})",
        )
    return (
        "other",
        f"{target.label}: HTTP {status} {reason} while {call.doing}{said}.".replace("  ", " "),
        f"HTTP {status}{said}",
    )


def _transport_failure(
    text: str, target: Target, call: Call, budget_seconds: float | None = None
) -> ApiFailure:
    lowered = text.lower()
    if "certificate" in lowered or "ssl" in lowered or "tls" in lowered:
        return _tls(text, target)
    if "timed out" in lowered or "timeout" in lowered:
        return _timeout(target, call, budget_seconds)
    if (
        "name or service not known" in lowered
        or "nodename nor servname" in lowered
        or ("name resolution" in lowered)
    ):
        return _unreachable("the host name does not resolve", target)
    if "refused" in lowered:
        return _unreachable("connection refused", target)
    if "unreachable" in lowered or "no route" in lowered:
        return _unreachable("network unreachable", target)
    return _unreachable(_shorten(text) or "connection failed", target)


def _unreachable(why: str, target: Target) -> ApiFailure:
    return ApiFailure(
        "unreachable",
        f"Cannot reach the Kubernetes API server of {target.label} at "
        f"{display_url(target.server)}: {why}. "
        "Check the server address in the kubeconfig, that the cluster is running, and that this "
        "machine can reach it (VPN, firewall, proxy).",
        short=f"API server unreachable ({why})",
    )


def _tls(text: str, target: Target) -> ApiFailure:
    detail = _shorten(_tls_reason(text))
    return ApiFailure(
        "tls",
        f"TLS verification failed for the Kubernetes API server of {target.label} at "
        f"{display_url(target.server)}: {detail}. The kubeconfig's certificate-authority data "
        "does not match the server's certificate (or the address is not the one the "
        "certificate names): get a fresh kubeconfig for this cluster.",
        short=f"TLS failure ({detail})",
    )


def _tls_reason(text: str) -> str:
    match = re.search(r"\[SSL: [A-Z_]++\][^()'\"]*+", text)
    if match is not None:
        return match.group(0).strip().rstrip(",")
    return text.splitlines()[-1] if text else "handshake failed"


def _timeout(target: Target, call: Call, budget_seconds: float | None) -> ApiFailure:
    within = f" within the {budget_seconds:g} s budget" if budget_seconds else " in time"
    return ApiFailure(
        "timeout",
        f"The Kubernetes API server of {target.label} at {display_url(target.server)} did not "
        f"answer{within} while {call.doing}. The server or the network is slow or blocked; "
        "try again, or raise timeout_seconds for this cluster.",
        short=f"no answer{within}",
    )


def _shorten(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
