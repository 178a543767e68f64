"""The metrics-URL and Prometheus sources against local HTTP servers: the rebuilt exposition
holds exactly the scheduler's samples, is summarised identically, and failures are explained."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from bot.clusters.collect import CollectedMetrics, collect_metrics
from bot.clusters.errors import CollectionError
from bot.clusters.prometheus import build_query
from bot.clusters.registry import ClusterEntry
from core.api import summarize_text
from core.model import SourceInfo
from core.views import render
from tests.kube.fake_http import (
    SCRAPE_TARGET_LABELS,
    HttpState,
    http_server,
    series_from_exposition,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SCHEDULER = (FIXTURES / "scheduler-small.prom").read_text()
LEGACY = (FIXTURES / "scheduler-small-legacy.prom").read_text()


def _samples(text: str) -> set[tuple[str, tuple[tuple[str, str], ...], float]]:
    return {
        (s.name, tuple(sorted(s.labels.items())), float(s.value))
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def _prometheus_state(text: str = SCHEDULER) -> HttpState:
    prod = series_from_exposition(text, {**SCRAPE_TARGET_LABELS, "cluster": "prod"}, 1_790_000_000)
    # Another cluster in the same Prometheus, and an unrelated family that must not be asked for.
    other = series_from_exposition(
        text, {**SCRAPE_TARGET_LABELS, "cluster": "other"}, 1_790_000_000
    )
    noise = series_from_exposition(
        'DCGM_FI_DEV_GPU_UTIL{gpu="0"} 5\n', {**SCRAPE_TARGET_LABELS, "cluster": "prod"}, 1
    )
    return HttpState(series=prod + other + noise)


def _entry(**kwargs: object) -> ClusterEntry:
    return ClusterEntry(name="prod", display_name="Production", **kwargs)  # type: ignore[arg-type]


def _without_source(text: str, source: SourceInfo) -> dict[str, object]:
    data: dict[str, object] = json.loads(render(summarize_text(text, source), "json"))
    data.pop("source")
    return data


def test_query_selects_every_scheduler_family_with_the_filter() -> None:
    query = build_query('cluster="prod"')
    assert query.startswith('{__name__=~"GPUDeviceCoreAllocated|GPUDeviceCoreLimit|')
    assert "|hami_vgpu_memory_allocated_bytes|" in query and "|vGPUMemoryAllocated|" in query
    assert "hami_host_gpu_utilization_ratio" not in query  # monitor families are not asked for
    assert query.endswith('",cluster="prod"}')


@pytest.mark.parametrize("text", [SCHEDULER, LEGACY], ids=["current", "legacy-and-current"])
def test_prometheus_rebuild_gives_back_the_scheduler_samples(text: str) -> None:
    state = _prometheus_state(text)
    with http_server(state) as url:
        collected = collect_metrics(
            _entry(
                source_kind="prometheus",
                prometheus_url=url + "/",
                prometheus_selector='cluster="prod"',
            ),
            None,
        )
    assert _samples(collected.text) == _samples(text)
    assert "exported_namespace" not in collected.text and 'job="' not in collected.text
    assert state.queries == [build_query('cluster="prod"')]
    assert collected.source.kind == "cluster" and collected.source.label == "Production"
    assert collected.notes == (
        f'Rebuilt from Prometheus {url}/ {{cluster="prod"}} (instant query).',
    )


def test_prometheus_source_is_summarised_identically() -> None:
    with http_server(_prometheus_state()) as url:
        collected = collect_metrics(
            _entry(
                source_kind="prometheus", prometheus_url=url, prometheus_selector='cluster="prod"'
            ),
            None,
        )
    assert _without_source(collected.text, collected.source) == _without_source(
        SCHEDULER, SourceInfo(kind="file", label="fixture")
    )


def test_prometheus_duplicate_series_keep_the_newest() -> None:
    state = _prometheus_state()
    stale = series_from_exposition(
        SCHEDULER.replace("} 50\n", "} 49\n"),
        {**SCRAPE_TARGET_LABELS, "cluster": "prod", "pod": "hami-scheduler-old"},
        1_789_999_990,
    )
    state.series = stale + state.series
    with http_server(state) as url:
        collected = collect_metrics(
            _entry(
                source_kind="prometheus", prometheus_url=url, prometheus_selector='cluster="prod"'
            ),
            None,
        )
    assert _samples(collected.text) == _samples(SCHEDULER)


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        (
            (400, b'{"status":"error","errorType":"bad_data","error":"parse error at char 3"}'),
            'cluster "prod": Prometheus at URL refused the query (HTTP 400, bad_data: parse '
            "error at char 3). Check prometheus_selector in the registry.",
        ),
        (
            (200, b"<html>login</html>"),
            'cluster "prod": URL/api/v1/query answered HTTP 200 with something that is not JSON '
            "(application/json). prometheus_url must be the base URL of a Prometheus-compatible "
            "API (the part before /api/v1/query).",
        ),
        (
            (200, b'{"status":"success","data":{"resultType":"vector","result":[]}}'),
            'cluster "prod": Prometheus at URL has no HAMi scheduler series matching '
            '{cluster="prod"}. Make sure Prometheus scrapes the HAMi scheduler (HAMi chart value '
            'prometheus.enabled: true creates a ServiceMonitor for its Service port "monitor") '
            "and that the label filter matches its series.",
        ),
    ],
)
def test_prometheus_failures(override: tuple[int, bytes], expected: str) -> None:
    state = HttpState(query_override=override)
    with http_server(state) as url, pytest.raises(CollectionError) as caught:
        collect_metrics(
            _entry(
                source_kind="prometheus", prometheus_url=url, prometheus_selector='cluster="prod"'
            ),
            None,
        )
    assert caught.value.message.replace(url, "URL") == expected


def test_prometheus_unreachable() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    with pytest.raises(CollectionError) as caught:
        collect_metrics(_entry(source_kind="prometheus", prometheus_url=url), None)
    assert caught.value.message == (
        f'Cannot reach the Prometheus query API of cluster "prod" at {url}/api/v1/query: '
        "connection refused. Check the URL (in the cluster registry, or on the command line) "
        "and that this machine can reach it."
    )


# --- plain metrics URL --------------------------------------------------------------------------


def test_metrics_url_reads_gzip_and_round_trips_through_json() -> None:
    state = HttpState(metrics_body=SCHEDULER.encode())
    with http_server(state) as url:
        collected = collect_metrics(
            _entry(source_kind="metrics-url", metrics_url=url + "/metrics"),
            None,
            nvidia_smi=False,
        )
    assert collected.text == SCHEDULER
    assert "gzip" in state.accept_encodings[0]
    assert collected.notes == (f"Read from {url}/metrics.",)
    assert CollectedMetrics.from_json(json.loads(json.dumps(collected.to_json()))) == collected


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (
            404,
            b"404 page not found\n",
            'cluster "prod": the metrics URL URL/metrics answered HTTP 404. Check the URL (HAMi '
            'serves /metrics on the scheduler\'s Service port "monitor").',
        ),
        (
            200,
            b"go_goroutines 12\nprocess_open_fds 9\n",
            'cluster "prod": the metrics URL URL/metrics answered, but not with HAMi scheduler '
            "metrics: it holds other metrics (go_goroutines, process_open_fds). Point it at the "
            "scheduler's /metrics (Service port \"monitor\", default 31993, or the pod's port "
            "9395).",
        ),
    ],
)
def test_metrics_url_failures(status: int, body: bytes, expected: str) -> None:
    state = HttpState(metrics_body=body, metrics_status=status)
    with http_server(state) as url, pytest.raises(CollectionError) as caught:
        collect_metrics(_entry(source_kind="metrics-url", metrics_url=url + "/metrics"), None)
    assert caught.value.message.replace(url, "URL") == expected


def test_policy_flags_are_enforced_per_cluster() -> None:
    entry = _entry(
        source_kind="metrics-url",
        metrics_url="http://127.0.0.1:1/metrics",
        defined_at="clusters.yaml:7",
    )
    with pytest.raises(CollectionError) as runtime:
        collect_metrics(entry, None, runtime=True)
    assert runtime.value.message == (
        'Runtime (vGPU monitor) scrapes are not enabled for cluster "prod". An admin can set '
        "runtime_allowed: true for it in the cluster registry (clusters.yaml:7)."
    )
    with pytest.raises(CollectionError) as exec_:
        collect_metrics(entry, None, nvidia_smi=True)
    assert exec_.value.message.startswith(
        'nvidia-smi exec is not enabled for cluster "prod". An admin can set nvidia_smi_allowed: '
        "true for it in the cluster registry (clusters.yaml:7)"
    )
