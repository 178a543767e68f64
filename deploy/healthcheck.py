"""The image's HEALTHCHECK: exit 0 when the bot answers /healthz, 1 otherwise.

The bot serves /healthz on $PORT in HTTP mode and on $OPS_PORT (default 8080) in Socket Mode;
the image cannot tell which mode the command line chose, so either answering 200 is healthy.
Standard library only, so it runs with the image's Python and nothing else.
"""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request

TIMEOUT_SECONDS = 3.0


def ports(environ: dict[str, str]) -> list[int]:
    found = []
    for name, default in (("PORT", "3000"), ("OPS_PORT", "8080")):
        raw = environ.get(name, "").strip() or default
        if raw.isdigit() and int(raw) > 0:
            found.append(int(raw))
    return found


def healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(
            f"http://127.0.0.1:{port}/healthz", timeout=TIMEOUT_SECONDS
        ) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def main() -> int:
    checked = ports(dict(os.environ))
    if any(healthy(port) for port in checked):
        return 0
    print(f"no /healthz answered 200 on port(s) {checked}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
