"""/metrics carries what platform dashboards expect of any service: process and Python runtime
metrics and a build_info naming the running version."""

from __future__ import annotations

import platform
from importlib.metadata import version
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from bot.ops.endpoints import metrics_app
from bot.ops.metrics import OpsMetrics


def scrape(metrics: OpsMetrics) -> dict[str, list[tuple[dict[str, str], float]]]:
    """Sample name -> [(labels, value)], read through the /metrics WSGI app."""
    status: list[str] = []

    def start_response(line: str, headers: list[tuple[str, str]], exc_info: object = None) -> Any:
        status.append(line)

    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/metrics"}
    body = b"".join(metrics_app(metrics)(environ, start_response))
    assert status[0].startswith("200")
    samples: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(body.decode()):
        for sample in family.samples:
            samples.setdefault(sample.name, []).append((dict(sample.labels), sample.value))
    return samples


def test_process_python_and_build_info_metrics_are_exported() -> None:
    samples = scrape(OpsMetrics())
    for name in (
        "process_cpu_seconds_total",
        "process_resident_memory_bytes",
        "process_start_time_seconds",
        "process_open_fds",
        "python_info",
    ):
        assert name in samples, name
    assert any(name.startswith("python_gc_") for name in samples)
    [(labels, value)] = samples["hami_summary_build_info"]
    assert value == 1.0
    assert labels == {
        "version": version("hami-summary"),
        "python_version": platform.python_version(),
    }
    # The bot's own metrics are still there beside them.
    assert "hami_summary_redis_errors_total" not in samples  # no sample until a failure
    families = {f.name for f in text_string_to_metric_families(OpsMetrics().exposition().decode())}
    assert {"hami_summary_requests", "hami_summary_redis_errors"} <= families
