"""Reading metrics attached to a message as a file or text snippet.

Slack file objects (https://api.slack.com/types/file) carry ``url_private_download``, which
needs the bot token in an ``Authorization: Bearer`` header and the ``files:read`` scope. The
token is only ever sent to Slack's own hosts (or the configured Web API host, e.g. GovSlack
or a test server), never to a URL a message could point elsewhere. Downloads are size-limited.
"""

from __future__ import annotations

import logging
import urllib.error
import urllib.request
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.conversation.intents import GivenFile
from core.text_decoding import decode_metrics_bytes

if TYPE_CHECKING:
    from bot.slack.services import SlackServices

log = logging.getLogger("hami_summary.slack.files")

ACCEPTED_SUFFIXES = (".prom", ".txt", ".metrics")
# Slack's filetype for plain-text snippets and files is "text" (https://api.slack.com/types/file).
ACCEPTED_FILETYPES = ("text", "prom")
SLACK_FILE_DOMAINS = ("slack.com", "slack-gov.com", "slack-edge.com")
DOWNLOAD_TIMEOUT_SECONDS = 20.0


def _size(size_bytes: int) -> str:
    if size_bytes >= 1024 * 1024:
        return f"{size_bytes / (1024 * 1024):,.1f} MiB"
    if size_bytes >= 1024:
        return f"{size_bytes / 1024:,.1f} KiB"
    return f"{size_bytes} bytes"


def rejection(file: Mapping[str, Any], max_bytes: int) -> str | None:
    """Why this file cannot be read as metrics, or None when it can be."""
    name = str(file.get("name") or file.get("title") or "file")
    mimetype = str(file.get("mimetype") or "")
    filetype = str(file.get("filetype") or "")
    is_text = (
        name.lower().endswith(ACCEPTED_SUFFIXES)
        or mimetype.startswith("text/plain")
        or filetype in ACCEPTED_FILETYPES
    )
    if not is_text:
        kind = mimetype or filetype or "an unknown type"
        return (
            f"it is {kind}; I read HAMi metrics from .prom or .txt files and plain-text snippets. "
            "Save the scheduler's /metrics output as text and attach that."
        )
    size = file.get("size")
    if isinstance(size, int) and size > max_bytes:
        return (
            f"it is {_size(size)}, over my limit of {_size(max_bytes)}. Attach only the HAMi "
            "scheduler's /metrics output (or filter it to the hami_* lines)."
        )
    return None


def is_candidate(file: Mapping[str, Any]) -> bool:
    """Cheap check (no download) that a file may hold metrics: used to ignore bots early."""
    return rejection(file, max_bytes=1 << 62) is None


def _trusted(url: str, api_base_url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    api_host = (urlsplit(api_base_url).hostname or "").lower()
    if host and host == api_host:
        return True
    return any(host == domain or host.endswith("." + domain) for domain in SLACK_FILE_DOMAINS)


def _full_file(client: WebClient, file: Mapping[str, Any]) -> Mapping[str, Any]:
    # Events may carry a stub ({"id": ..., "file_access": "check_file_info"}) instead of the
    # file object; files.info returns the whole object.
    if file.get("url_private_download") and file.get("file_access") != "check_file_info":
        return file
    file_id = file.get("id")
    if not isinstance(file_id, str):
        return file
    info = client.files_info(file=file_id)
    full = info.get("file")
    return full if isinstance(full, dict) else file


def fetch_metrics_file(
    client: WebClient, file: Mapping[str, Any], *, max_bytes: int, api_base_url: str
) -> GivenFile:
    """Download one attached file as text, or say why it cannot be used."""
    name = str(file.get("name") or file.get("title") or file.get("id") or "file")
    try:
        file = _full_file(client, file)
    except SlackApiError as error:
        code = error.response.get("error", "unknown_error")
        return GivenFile(
            name,
            problem=f"Slack would not give me the file ({code}); the app "
            "needs the files:read scope.",
        )
    name = str(file.get("name") or name)
    reason = rejection(file, max_bytes)
    if reason is not None:
        return GivenFile(name, problem=reason)
    url = file.get("url_private_download") or file.get("url_private")
    if not isinstance(url, str) or not _trusted(url, api_base_url):
        return GivenFile(name, problem="it has no Slack download link I can use.")
    token = client.token or ""
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=DOWNLOAD_TIMEOUT_SECONDS) as response:
            content_type = response.headers.get("Content-Type", "")
            data = response.read(max_bytes + 1)
    except urllib.error.HTTPError as error:
        log.warning("download of file %s failed with HTTP %s", file.get("id"), error.code)
        return GivenFile(name, problem=f"Slack answered HTTP {error.code} when I downloaded it.")
    except (urllib.error.URLError, TimeoutError, OSError) as error:
        log.warning("download of file %s failed: %s", file.get("id"), error)
        return GivenFile(name, problem="I could not download it from Slack; please try again.")
    if len(data) > max_bytes:
        return GivenFile(name, problem=f"it is larger than my limit of {_size(max_bytes)}.")
    if content_type.startswith("text/html"):
        # Slack serves its sign-in page instead of the file when the token lacks files:read.
        return GivenFile(
            name,
            problem="Slack sent a web page instead of the file: the app needs "
            "the files:read scope.",
        )
    # UTF-8, or UTF-16/32 as Windows tools save it; bytes that are text in no encoding reach
    # the summary as such, which calls them binary data.
    return GivenFile(name, text=decode_metrics_bytes(data))


def fetch_metrics_files(
    client: WebClient, files: Iterable[Mapping[str, Any]], services: SlackServices
) -> tuple[GivenFile, ...]:
    """Every file attached to a message, downloaded within the bot's size limit (or why not)."""
    return tuple(
        fetch_metrics_file(
            client, f, max_bytes=services.max_file_bytes, api_base_url=services.api_base_url
        )
        for f in files
    )
