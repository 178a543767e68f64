"""JSON answers of the bot's web server, and the guard that keeps tracebacks out of them."""

from __future__ import annotations

import json
import logging
import sys
import uuid
from collections.abc import Iterable, Mapping
from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

log = logging.getLogger("hami_summary.web")


def json_response(
    start_response: StartResponse,
    status: str,
    payload: Mapping[str, object],
    *,
    extra_headers: Iterable[tuple[str, str]] = (),
) -> list[bytes]:
    body = json.dumps(payload, sort_keys=True).encode("utf-8") + b"\n"
    start_response(
        status,
        [
            ("Content-Type", "application/json"),
            ("Content-Length", str(len(body))),
            ("Cache-Control", "no-store"),
            *extra_headers,
        ],
    )
    return [body]


def error_response(start_response: StartResponse, status: str, message: str) -> list[bytes]:
    return json_response(start_response, status, {"error": message})


def never_a_traceback(app: WSGIApplication) -> WSGIApplication:
    """Answer an unexpected exception with a generic 500 naming an error id, and log the
    exception under that id: a traceback helps an operator reading the logs, but tells a
    client (or an attacker) about the code. The body is read fully here, so an error while
    producing it is caught as well."""

    def guarded(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        try:
            return list(app(environ, start_response))
        except Exception:
            error_id = uuid.uuid4().hex[:12]
            log.error(
                "internal error %s answering %s %s",
                error_id,
                environ.get("REQUEST_METHOD", "?"),
                environ.get("PATH_INFO", "?"),
                exc_info=True,
            )
            body = json.dumps({"error": "internal error", "error_id": error_id}).encode() + b"\n"
            # With exc_info, a server that already sent headers re-raises instead.
            start_response(
                "500 Internal Server Error",
                [("Content-Type", "application/json"), ("Content-Length", str(len(body)))],
                sys.exc_info(),
            )
            return [body]

    return guarded


def router(routes: Mapping[str, WSGIApplication]) -> WSGIApplication:
    """Dispatch on the exact path; 404 naming the served paths otherwise."""

    def app(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        target = routes.get(environ.get("PATH_INFO") or "/")
        if target is None:
            served = ", ".join(sorted(routes)) or "nothing"
            return error_response(
                start_response, "404 Not Found", f"no such path; this port serves {served}"
            )
        return target(environ, start_response)

    return app
