"""Bounded HTTP GET for the metrics-URL and Prometheus sources: time, size, gzip, clear errors."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit, urlunsplit

import urllib3

from bot.clusters.deadline import Deadline, DeadlineExceeded
from bot.clusters.errors import CollectionError
from bot.clusters.server_text import quoted
from bot.clusters.url_display import display_url, url_secrets
from core.summary.input_notes import human_size

_CHUNK_BYTES = 1024 * 1024


@dataclass(frozen=True, slots=True)
class HttpAnswer:
    status: int
    text: str
    content_type: str


def basic_auth_split(url: str) -> tuple[str, dict[str, str]]:
    """``url`` without its user-info, and the ``Authorization`` header that carries it.

    urllib3 sends no credentials from a URL's ``user:password@``: they become HTTP Basic
    authentication here, as browsers and curl send them.
    """
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, {}
    host = parts.netloc.rpartition("@")[2]
    pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
    header = urllib3.util.make_headers(basic_auth=pair)
    return urlunsplit(parts._replace(netloc=host)), dict(header)


def http_get(
    url: str,
    *,
    label: str,
    what: str,
    deadline: Deadline,
    max_bytes: int,
    fields: Mapping[str, str] | None = None,
    accept: str = "*/*",
    too_large_advice: str = "Check the URL.",
) -> HttpAnswer:
    """GET ``url`` (query ``fields``); any status is returned, transport failures raise
    ``CollectionError`` naming ``label`` (the cluster) and ``what`` (e.g. "the metrics URL").
    An answer over ``max_bytes`` is refused as it streams in, with ``too_large_advice``."""
    try:
        connect, read = deadline.request_timeout(f"fetching {what}")
    except DeadlineExceeded as exc:
        raise _timeout(label, what, url, deadline) from exc
    pool = urllib3.PoolManager(retries=False, timeout=urllib3.Timeout(connect=connect, read=read))
    target, auth = basic_auth_split(url)
    try:
        response = pool.request(
            "GET",
            target,
            fields=dict(fields or {}),
            headers={
                "Accept": accept,
                "Accept-Encoding": "gzip",
                "User-Agent": "hami-summary",
                **auth,
            },
            preload_content=False,
        )
        chunks: list[bytes] = []
        size = 0
        for chunk in response.stream(_CHUNK_BYTES, decode_content=True):
            size += len(chunk)
            if size > max_bytes:
                raise CollectionError(
                    f"{label}: {what} ({display_url(url)}) answered with more than "
                    f"{human_size(max_bytes)}. {too_large_advice}"
                )
            chunks.append(chunk)
            deadline.check(f"fetching {what}")
        response.release_conn()
    except DeadlineExceeded as exc:
        raise _timeout(label, what, url, deadline) from exc
    except urllib3.exceptions.HTTPError as exc:
        raise _transport(label, what, url, exc, deadline) from exc
    finally:
        pool.clear()
    content_type = str(response.headers.get("Content-Type", ""))
    charset = re.search(r"charset=([\w-]++)", content_type)
    data = b"".join(chunks)
    try:
        text = data.decode(charset.group(1) if charset else "utf-8", errors="replace")
    except LookupError:
        text = data.decode("utf-8", errors="replace")
    return HttpAnswer(response.status, text, content_type)


def _timeout(label: str, what: str, url: str, deadline: Deadline) -> CollectionError:
    return CollectionError(
        f"{label}: {what} ({display_url(url)}) did not answer within the "
        f"{deadline.budget_seconds:g} s budget. "
        "Check that the server is up and reachable, or raise the time budget (timeout_seconds "
        "in the cluster registry, --timeout on the command line)."
    )


def _transport(
    label: str, what: str, url: str, error: urllib3.exceptions.HTTPError, deadline: Deadline
) -> CollectionError:
    inner: BaseException = error
    if isinstance(error, urllib3.exceptions.MaxRetryError) and error.reason is not None:
        inner = error.reason
    if isinstance(inner, urllib3.exceptions.TimeoutError) and not isinstance(
        inner, urllib3.exceptions.NewConnectionError
    ):
        return _timeout(label, what, url, deadline)
    said = " ".join(quoted(str(inner), url_secrets(url)).split())[:200]
    if isinstance(inner, urllib3.exceptions.SSLError):
        return CollectionError(
            f"{label}: TLS verification failed for {what} ({display_url(url)}): "
            f"{said}. Use a URL whose certificate this machine trusts."
        )
    if isinstance(inner, urllib3.exceptions.NameResolutionError):
        why = "the host name does not resolve"
    elif isinstance(inner, urllib3.exceptions.NewConnectionError):
        why = "connection refused" if "refused" in str(inner).lower() else "cannot connect"
    else:
        why = said
    return CollectionError(
        f"Cannot reach {what} of {label} at {display_url(url)}: {why}. Check the URL (in the "
        "cluster registry, or on the command line) and that this machine can reach it."
    )
