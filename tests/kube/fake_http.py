"""Local HTTP servers for the non-Kubernetes sources: a plain ``/metrics`` endpoint and a
Prometheus-compatible ``/api/v1/query`` that evaluates ``{__name__=~"...",label="..."}`` selectors
over series built from the fixtures, with the target labels a prometheus-operator scrape adds.

With a ``timeline`` (scrapes at several times) it also plays ``/api/v1/query_range`` as
Prometheus evaluates it: at ``start``, ``start + step``, ... up to ``end``, each series with
the value of the newest scrape at or before that time within the 5-minute lookback, and no
value when that scrape does not hold it (a pod gone). ``count(<selector>)`` counts the matching
series at each time. The instant query then evaluates at ``time`` (default: the newest scrape).
"""

from __future__ import annotations

import gzip
import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from prometheus_client.parser import text_string_to_metric_families

# Labels a ServiceMonitor scrape of the scheduler Service attaches (honorLabels: false).
SCRAPE_TARGET_LABELS = {
    "container": "vgpu-scheduler-extender",
    "endpoint": "monitor",
    "instance": "10.244.1.17:9395",
    "job": "hami-scheduler",
    "namespace": "kube-system",
    "pod": "hami-scheduler-5d8f7c9b6-x2kqp",
    "service": "hami-scheduler",
}
_MATCHER = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"')


def series_from_exposition(
    text: str, extra: dict[str, str], timestamp: float
) -> list[dict[str, Any]]:
    """Instant-vector items for every sample of ``text`` as Prometheus stores them: target
    labels added, and scraped labels that collide with them renamed ``exported_<name>``."""
    items = []
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            metric = {"__name__": sample.name}
            for key, value in sample.labels.items():
                metric[f"exported_{key}" if key in extra else key] = value
            metric.update(extra)
            items.append({"metric": metric, "value": [timestamp, repr(float(sample.value))]})
    return items


def _matches(selector: str, metric: dict[str, str]) -> bool:
    for name, op, raw in _MATCHER.findall(selector):
        value = raw.replace('\\"', '"').replace("\\\\", "\\")
        have = metric.get(name, "")
        if op == "=" and have != value:
            return False
        if op == "!=" and have == value:
            return False
        if op == "=~" and re.fullmatch(value, have) is None:
            return False
        if op == "!~" and re.fullmatch(value, have) is not None:
            return False
    return True


@dataclass
class HttpState:
    metrics_body: bytes = b""
    metrics_status: int = 200
    metrics_content_type: str = "text/plain; version=0.0.4; charset=utf-8; escaping=underscores"
    series: list[dict[str, Any]] = field(default_factory=list)
    query_override: tuple[int, bytes] | None = None  # (status, body) for /api/v1/query
    queries: list[str] = field(default_factory=list)
    accept_encodings: list[str] = field(default_factory=list)
    # scrape time -> the series Prometheus stored from that scrape
    timeline: dict[float, list[dict[str, Any]]] = field(default_factory=dict)
    # (query, start, end, step) of every range query
    range_queries: list[tuple[str, float, float, float]] = field(default_factory=list)
    delay_seconds: float = 0.0  # each query API answer waits this long (a slow Prometheus)


LOOKBACK_SECONDS = 300.0
_COUNT = re.compile(r"^count\((.*)\)$", re.DOTALL)


def _scrape_at(state: HttpState, moment: float) -> list[dict[str, Any]]:
    """The series of the newest scrape at or before ``moment`` within the lookback."""
    times = [t for t in state.timeline if t <= moment and moment - t <= LOOKBACK_SECONDS]
    return state.timeline[max(times)] if times else []


def _evaluate(state: HttpState, query: str, moment: float) -> list[dict[str, Any]]:
    """Instant-vector items of ``query`` at ``moment`` (a selector, or count of one)."""
    counted = _COUNT.match(query)
    selector = counted.group(1) if counted else query
    items = [item for item in _scrape_at(state, moment) if _matches(selector, item["metric"])]
    if counted:
        return [{"metric": {}, "value": [moment, str(len(items))]}] if items else []
    return [{"metric": item["metric"], "value": [moment, item["value"][1]]} for item in items]


def _range(state: HttpState, query: str, start: float, end: float, step: float) -> bytes:
    series: dict[tuple[tuple[str, str], ...], dict[str, Any]] = {}
    moment = start
    while moment <= end + 1e-9:
        for item in _evaluate(state, query, moment):
            key = tuple(sorted(item["metric"].items()))
            row = series.setdefault(key, {"metric": item["metric"], "values": []})
            row["values"].append(item["value"])
        moment += step
    data = {"resultType": "matrix", "result": list(series.values())}
    return json.dumps({"status": "success", "data": data}).encode()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return

    def reply(self, status: int, body: bytes, content_type: str) -> None:
        gzipped = "gzip" in self.headers.get("Accept-Encoding", "")
        if gzipped:
            body = gzip.compress(body)
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        if gzipped:
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        state = self.server.state
        parts = urlsplit(self.path)
        state.accept_encodings.append(self.headers.get("Accept-Encoding", ""))
        if parts.path == "/metrics":
            self.reply(state.metrics_status, state.metrics_body, state.metrics_content_type)
            return
        if parts.path in ("/api/v1/query", "/api/v1/query_range"):
            time.sleep(state.delay_seconds)
        fields = {k: v[0] for k, v in parse_qs(parts.query).items()}
        if parts.path == "/api/v1/query_range":
            query = fields.get("query", "")
            start, end, step = (float(fields[k]) for k in ("start", "end", "step"))
            state.range_queries.append((query, start, end, step))
            self.reply(200, _range(state, query, start, end, step), "application/json")
            return
        if parts.path == "/api/v1/query":
            query = fields.get("query", "")
            state.queries.append(query)
            if state.query_override is not None:
                status, body = state.query_override
                self.reply(status, body, "application/json")
                return
            if state.timeline:
                moment = float(fields.get("time") or max(state.timeline))
                result = _evaluate(state, query, moment)
            else:
                result = [item for item in state.series if _matches(query, item["metric"])]
            body = json.dumps(
                {"status": "success", "data": {"resultType": "vector", "result": result}}
            ).encode()
            self.reply(200, body, "application/json")
            return
        self.reply(404, b"404 page not found\n", "text/plain; charset=utf-8")


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, state: HttpState) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = state


@contextmanager
def http_server(state: HttpState) -> Iterator[str]:
    """Serve ``state`` on a loopback port; yields the base URL."""
    server = _Server(state)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
