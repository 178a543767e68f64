"""The Prometheus source: HAMi scheduler families from a Prometheus-compatible query API
(Prometheus, Thanos, VictoriaMetrics), rebuilt into the exposition text the parser reads.

One instant query (``GET /api/v1/query``) selects every scheduler family, current and legacy
names, by ``__name__`` regex plus the optional label filter, so all series come from one
evaluation time. The rebuilt text is what the scheduler would have served:

* target labels Prometheus attaches (``instance``, ``job``, ``endpoint``, ``service``, and
  ``namespace`` / ``pod`` / ``container`` where HAMi has no such label) and the filter's own
  labels (e.g. ``cluster``) are dropped;
* HAMi's ``namespace`` and ``pod`` labels collide with the target labels of the same name, so
  without ``honorLabels`` Prometheus stores them as ``exported_namespace`` / ``exported_pod``;
  they are restored;
* series that become identical (two scrapes during a leader change) keep the newest sample.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from bot.clusters.deadline import Deadline
from bot.clusters.errors import CollectionError
from bot.clusters.http_fetch import http_get
from bot.clusters.server_text import quoted
from bot.clusters.url_display import display_url, url_secrets
from core.families import FAMILIES

QUERY_PATH = "/api/v1/query"
QUERIED_FAMILIES: tuple[str, ...] = tuple(
    sorted(name for name, spec in FAMILIES.items() if spec.component in ("scheduler", "build"))
)
# Labels a Prometheus / prometheus-operator scrape adds to every series.
_TARGET_LABELS = frozenset(
    {"instance", "job", "endpoint", "service", "prometheus", "prometheus_replica", "__replica__"}
)
# Added by the scrape too, but also real HAMi labels of some families.
_AMBIGUOUS_TARGET_LABELS = frozenset({"namespace", "pod", "container", "node"})
# HAMi labels spelled like target labels, per family: the current families say node, namespace
# and pod; the legacy ones (nodeid, podnamespace, podname) clash with none.
_DEVICE = frozenset({"node"})
_HAMI_LABELS_LIKE_TARGET_LABELS: dict[str, frozenset[str]] = {
    "hami_gpu_memory_limit_bytes": _DEVICE,
    "hami_gpu_core_limit_ratio": _DEVICE,
    "hami_gpu_memory_allocated_bytes": _DEVICE,
    "hami_gpu_shared_count": _DEVICE,
    "hami_gpu_core_allocated_ratio": _DEVICE,
    "hami_node_gpu_overview": _DEVICE,
    "hami_node_gpu_memory_allocated_ratio": _DEVICE,
    "hami_node_gpu_mig_instance_info": _DEVICE,
    "hami_vgpu_memory_allocated_bytes": frozenset({"namespace", "node", "pod"}),
    "hami_vgpu_core_allocated_ratio": frozenset({"namespace", "node", "pod"}),
    "hami_resource_quota_used": frozenset({"namespace"}),
    "hami_resource_quota_limit": frozenset({"namespace"}),
}
_MAX_RESPONSE_BYTES = 256 * 1024 * 1024
# The lookbehind keeps a search from starting again inside a name it has already read.
_SELECTOR_LABEL = re.compile(r'(?<![a-zA-Z0-9_])([a-zA-Z_][a-zA-Z0-9_]*+)\s*+(?:=~|!~|!=|=)\s*+"')


def build_query(selector: str | None) -> str:
    # Family names are [a-zA-Z0-9_] only, so they need no escaping inside the PromQL string.
    names = "|".join(QUERIED_FAMILIES)
    extra = f",{selector}" if selector else ""
    return f'{{__name__=~"{names}"{extra}}}'


def _own_labels(family: str) -> frozenset[str]:
    """HAMi's own labels of ``family`` that share a name with scrape target labels."""
    return _HAMI_LABELS_LIKE_TARGET_LABELS.get(family, frozenset())


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def rebuild_exposition(result: Sequence[Mapping[str, Any]], selector: str | None) -> str:
    """Prometheus text format from the ``data.result`` of an instant vector query."""
    filter_labels = set(_SELECTOR_LABEL.findall(selector or ""))
    series: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[float, str]] = {}
    for item in result:
        metric = dict(item.get("metric") or {})
        name = metric.pop("__name__", "")
        timestamp, value = item.get("value") or (0, "NaN")
        if not name:
            continue
        own = _own_labels(name)
        labels: dict[str, str] = {}
        for key, val in metric.items():
            if key.startswith("exported_"):
                continue
            if key in _TARGET_LABELS or key in filter_labels:
                continue
            if key in _AMBIGUOUS_TARGET_LABELS and key not in own:
                continue
            labels[key] = str(val)
        for key, val in metric.items():
            if key.startswith("exported_"):
                labels[key.removeprefix("exported_")] = str(val)
        identity = (name, tuple(sorted(labels.items())))
        previous = series.get(identity)
        if previous is None or float(timestamp) >= previous[0]:
            series[identity] = (float(timestamp), str(value))
    lines: list[str] = []
    current_family = ""
    for (name, labels_items), (_, value) in sorted(series.items()):
        if name != current_family:
            lines.append(f"# TYPE {name} gauge")
            current_family = name
        rendered = ",".join(f'{k}="{_escape(v)}"' for k, v in labels_items)
        lines.append(
            f"{name}{{{rendered}}} {_number(value)}" if rendered else f"{name} {_number(value)}"
        )
    return "\n".join(lines) + ("\n" if lines else "")


def _number(value: str) -> str:
    # Prometheus sends values as strings ("4.294967296e+10", "NaN", "+Inf"); keep them exact.
    try:
        number = float(value)
    except ValueError:
        return "NaN"
    if math.isnan(number):
        return "NaN"
    return value


def query_api(
    base_url: str,
    path: str,
    fields: Mapping[str, str],
    *,
    selector: str | None,
    label: str,
    deadline: Deadline,
) -> dict[str, Any]:
    """GET a Prometheus query endpoint (``path``) and return its ``data``; raises
    ``CollectionError`` for a body that is not JSON or a query Prometheus refused."""
    url = base_url.rstrip("/") + path
    answer = http_get(
        url,
        label=label,
        what="the Prometheus query API",
        deadline=deadline,
        max_bytes=_MAX_RESPONSE_BYTES,
        fields=fields,
        accept="application/json",
    )
    try:
        body = json.loads(answer.text)
    except ValueError as exc:
        raise CollectionError(
            f"{label}: {display_url(url)} answered HTTP {answer.status} with something that is "
            "not JSON "
            f"({answer.content_type or 'no content type'}). prometheus_url must be the base URL "
            f"of a Prometheus-compatible API (the part before {path})."
        ) from exc
    if not isinstance(body, dict) or body.get("status") != "success":
        error = body.get("error", "no error text") if isinstance(body, dict) else "unexpected body"
        kind = body.get("errorType", "") if isinstance(body, dict) else ""
        hint = (
            " Check prometheus_selector in the registry." if selector and kind == "bad_data" else ""
        )
        said = quoted(f"{kind or 'error'}: {error}", url_secrets(base_url))
        raise CollectionError(
            f"{label}: Prometheus at {display_url(base_url)} refused the query "
            f"(HTTP {answer.status}, {said}).{hint}"
        )
    data = body.get("data")
    return data if isinstance(data, dict) else {}


def has_scheduler_series(result: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a query result holds at least one HAMi scheduler family."""
    names = {(item.get("metric") or {}).get("__name__") for item in result}
    return any(FAMILIES[name].component == "scheduler" for name in names if name in FAMILIES)


def no_scheduler_series(base_url: str, selector: str | None, label: str) -> CollectionError:
    matching = f" matching {{{selector}}}" if selector else ""
    return CollectionError(
        f"{label}: Prometheus at {display_url(base_url)} has no HAMi scheduler "
        f"series{matching}. Make "
        "sure Prometheus scrapes the HAMi scheduler (HAMi chart value prometheus.enabled: "
        'true creates a ServiceMonitor for its Service port "monitor")'
        + (" and that the label filter matches its series." if selector else ".")
    )


def fetch_from_prometheus(
    base_url: str, selector: str | None, *, label: str, deadline: Deadline
) -> str:
    """The scheduler exposition rebuilt from Prometheus; raises ``CollectionError``."""
    data = query_api(
        base_url,
        QUERY_PATH,
        {"query": build_query(selector)},
        selector=selector,
        label=label,
        deadline=deadline,
    )
    if data.get("resultType") != "vector":
        raise CollectionError(
            f"{label}: Prometheus at {display_url(base_url)} returned a "
            f"{data.get('resultType')!r} result "
            "instead of an instant vector."
        )
    result = data.get("result") or []
    text = rebuild_exposition(result, selector)
    if not has_scheduler_series(result):
        raise no_scheduler_series(base_url, selector, label)
    return text
