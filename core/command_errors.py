"""Say when a paste is the error a fetching command printed instead of the metrics.

The usual way to the scheduler's metrics is ``kubectl get --raw .../proxy/metrics`` or ``curl``;
when that fails, what gets pasted is its error (the Service is not found, the proxy cannot
reach the pod, the kubeconfig's credentials expired), and "no metrics found" would not say why.
The first such line is quoted, so the reader sees what failed.
"""

from __future__ import annotations

import re

from core.errors import InputError, shorten_line
from core.visible_text import visible

# Lines kubectl, client-go and curl write when a fetch fails, at the start of a line.
_COMMAND_ERROR = re.compile(
    r"^[ \t]*+(?:"
    r"Error from server \([A-Za-z]++\):"  # kubectl: the API server's answer
    r"|error: "  # kubectl's own errors (no credentials, no such resource type)
    r"|Unable to connect to the server: "
    r"|The connection to the server \S++ was refused"
    r"|E[0-9]{4} [0-9:.]++ ++[0-9]++ [\w.]++:[0-9]++\] "  # client-go's log lines (klog)
    r"|curl: \([0-9]++\) "
    r")",
    re.M,
)


def command_error_line(text: str) -> str | None:
    """The first line of ``text`` that a failed kubectl or curl wrote, shortened and shown with
    control characters escaped; None when there is none."""
    match = _COMMAND_ERROR.search(text)
    if match is None:
        return None
    end = text.find("\n", match.start())
    line = text[match.start() : len(text) if end == -1 else end].strip()
    return shorten_line(visible(line))


def failed_fetch_error(text: str, how_to_fetch: str) -> InputError | None:
    """What to say of a text that holds no metrics but a failed fetch's error (None when it
    holds none): that line quoted, what to fix, and ``how_to_fetch`` the metrics."""
    failed = command_error_line(text)
    if failed is None:
        return None
    return InputError(
        f"That is the error of the command that fetched the metrics, not metrics: `{failed}`. "
        "Fix what it says (the Service's name and namespace, access to the cluster, the "
        f"kubeconfig's credentials) and fetch them again. {how_to_fetch}"
    )
