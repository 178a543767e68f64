"""Digests and alerts in the cluster registry: what they read as, and every bad value refused
with the file, the line and the field."""

from __future__ import annotations

from datetime import time
from pathlib import Path

import pytest

from bot.clusters.errors import RegistryError
from bot.clusters.registry import load_registry
from tests.kube.fake_apiserver import write_kubeconfig
from tests.kube.tls import session_certificate

HEAD = """\
clusters:
  - name: prod
    metrics_url: http://127.0.0.1:9395/metrics
    allowed_channels: [C0GPUOPS]
    runtime_allowed: true
"""

EXAMPLE = (
    HEAD
    + """\
    digests:
      - channel: C0GPUOPS
        at: "09:00"
        time_zone: Europe/Berlin
        weekdays: mon-fri
      - name: evening
        channel: G0PRIVATE
        at: 17:30
    alerts:
      - name: h100-free
        channel: C0GPUOPS
        free_whole_gpus_below: 2
        model: H100
        for: 10m
      - channel: C0GPUOPS
        namespace_quota_above_percent: 90
        namespace: team-a
      - channel: C0GPUOPS
        cores_allocated_above_percent: 85
      - channel: C0GPUOPS
        memory_allocated_above_percent: "95%"
      - channel: C0GPUOPS
        inconsistent_gpus: true
      - channel: C0GPUOPS
        scrape_failing_for: 15m
      - channel: C0GPUOPS
        utilisation_below_percent: 10
        for: 1h
"""
)


def _error(tmp_path: Path, text: str) -> str:
    path = tmp_path / "clusters.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RegistryError) as caught:
        load_registry(path)
    return caught.value.message.replace(str(path), "FILE")


def test_the_example_reads_as_declared(tmp_path: Path) -> None:
    path = tmp_path / "clusters.yaml"
    path.write_text(EXAMPLE, encoding="utf-8")
    entry = load_registry(path).entries[0]
    morning, evening = entry.digests
    assert morning.name == "C0GPUOPS-0900" and morning.channel == "C0GPUOPS"
    assert morning.schedule.describe() == "09:00 Europe/Berlin, mon-fri"
    assert morning.defined_at == f"{path}:7"
    # Unquoted 17:30 is a number to YAML 1.1; the registry reads what was written.
    assert evening.name == "evening" and evening.schedule.at == time(17, 30)
    assert evening.schedule.describe() == "17:30 UTC, daily"
    kinds = [(r.name, r.kind, r.threshold, r.for_seconds) for r in entry.alerts]
    assert kinds == [
        ("h100-free", "free_whole_gpus_below", 2.0, 600.0),
        ("namespace_quota_above-team-a", "namespace_quota_above", 90.0, 0.0),
        ("cores_allocated_above", "cores_allocated_above", 85.0, 0.0),
        ("memory_allocated_above", "memory_allocated_above", 95.0, 0.0),
        ("inconsistent_gpus", "inconsistent_gpus", 0.0, 0.0),
        ("scrape_failing", "scrape_failing", 0.0, 900.0),
        ("low_utilisation", "low_utilisation", 10.0, 3600.0),
    ]
    assert entry.alerts[0].model == "H100" and entry.alerts[1].namespace == "team-a"


def test_a_weekly_gpu_hours_digest_reads_as_declared(tmp_path: Path) -> None:
    path = tmp_path / "clusters.yaml"
    path.write_text(
        HEAD + '    digests:\n      - channel: C0GPUOPS\n        at: "09:00"\n'
        "        weekdays: [mon]\n        report: gpu-hours\n"
        '      - channel: C0GPUOPS\n        at: "09:00"\n        report: gpu-hours\n'
        "        since: 30d\n        name: monthly\n",
        encoding="utf-8",
    )
    weekly, monthly = load_registry(path).entries[0].digests
    assert weekly.name == "C0GPUOPS-0900-gpu-hours" and weekly.report == "gpu-hours"
    assert weekly.describe() == "GPU-hours of the last 7 days, 09:00 UTC, mon"
    assert monthly.span_seconds == 30 * 86_400


@pytest.mark.parametrize(
    ("declaration", "expected"),
    [
        (
            '    digests:\n      - channel: C0GPUOPS\n        at: "09:00"\n'
            "        time_zone: Europe/Berln\n",
            'FILE:9: clusters[0] ("prod"): digests[0]: field "time_zone": "Europe/Berln" is not '
            'a time zone I know (did you mean "Europe/Berlin"?)',
        ),
        (
            '    digests:\n      - channel: C0GPUOPS\n        at: "09:00"\n'
            "        weekdays: [mon, fry]\n",
            'FILE:9: clusters[0] ("prod"): digests[0]: field "weekdays": \'fry\' in '
            "['mon', 'fry'] is not a weekday",
        ),
        (
            '    digests:\n      - channel: C0GPUOPS\n        at: "25:00"\n',
            'FILE:8: clusters[0] ("prod"): digests[0]: field "at": \'25:00\' is not a time of day',
        ),
        (
            "    digests:\n      - channel: C0GPUOPS\n",
            'FILE:7: clusters[0] ("prod"): digests[0]: field "at" is required',
        ),
        (
            '    digests:\n      - channel: C0GPUOPS\n        at: "09:00"\n        report: usage\n',
            'FILE:9: clusters[0] ("prod"): digests[0]: field "report": \'usage\' is not a '
            "digest report; write summary or gpu-hours",
        ),
        (
            '    digests:\n      - channel: C0GPUOPS\n        at: "09:00"\n        since: 7d\n',
            'FILE:9: clusters[0] ("prod"): digests[0]: field "since" goes with report: gpu-hours',
        ),
        (
            '    digests:\n      - channel: C0GPUOPS\n        at: "09:00"\n'
            "        report: gpu-hours\n        since: 90d\n",
            'FILE:10: clusters[0] ("prod"): digests[0]: field "since": \'90d\' is not a span '
            "from 1 h to 35 days; write e.g. 24h, 7d or 30d",
        ),
        (
            '    digests:\n      - channel: "#gpu-ops"\n        at: "09:00"\n',
            'FILE:7: clusters[0] ("prod"): digests[0]: field "channel": \'#gpu-ops\' is not a '
            "Slack channel id",
        ),
        (
            '    digests:\n      - channel: C0GPUOPS\n        at: "09:00"\n        tz: UTC\n',
            'FILE:9: clusters[0] ("prod"): digests[0]: unknown field "tz"',
        ),
        (
            '    digests:\n      - channel: C0GPUOPS\n        at: "09:00"\n'
            '      - channel: C0GPUOPS\n        at: "09:00"\n',
            'FILE:9: clusters[0] ("prod"): digests[1]: the name "C0GPUOPS-0900" is already used '
            "at line 7",
        ),
        (
            "    alerts:\n      - channel: C0GPUOPS\n        free_whole_gpus_below: 0\n",
            'FILE:8: clusters[0] ("prod"): alerts[0]: field "free_whole_gpus_below": 0 is not a '
            "whole number of GPUs of at least 1",
        ),
        (
            "    alerts:\n      - channel: C0GPUOPS\n        cores_allocated_above_percent: 120\n",
            'FILE:8: clusters[0] ("prod"): alerts[0]: field "cores_allocated_above_percent": 120 '
            "is not a percentage above 0 and at most 100",
        ),
        (
            "    alerts:\n      - channel: C0GPUOPS\n        inconsistent_gpus: true\n"
            "        for: soon\n",
            'FILE:9: clusters[0] ("prod"): alerts[0]: field "for": \'soon\' is not a duration',
        ),
        (
            "    alerts:\n      - channel: C0GPUOPS\n        inconsistent_gpus: true\n"
            "        cores_allocated_above_percent: 90\n",
            'FILE:9: clusters[0] ("prod"): alerts[0]: give exactly one condition per rule',
        ),
        (
            "    alerts:\n      - channel: C0GPUOPS\n        for: 5m\n",
            'FILE:7: clusters[0] ("prod"): alerts[0]: give exactly one condition per rule',
        ),
        (
            "    alerts:\n      - channel: C0GPUOPS\n        cores_allocated_above_percent: 90\n"
            "        model: H100\n",
            'FILE:9: clusters[0] ("prod"): alerts[0]: field "model" only goes with '
            '"free_whole_gpus_below"',
        ),
        (
            "    alerts:\n      - channel: C0GPUOPS\n        utilisation_below_percent: 10\n",
            'FILE:7: clusters[0] ("prod"): alerts[0]: "utilisation_below_percent" needs "for"',
        ),
        (
            "    alerts:\n      - channel: C0GPUOPS\n        scrape_failing_for: 5m\n"
            "        for: 5m\n",
            'FILE:9: clusters[0] ("prod"): alerts[0]: "scrape_failing_for" is its own duration',
        ),
        (
            "    alerts:\n      - free_whole_gpus_below: 2\n",
            'FILE:7: clusters[0] ("prod"): alerts[0]: field "channel" is required',
        ),
        (
            "    alerts:\n      channel: C0GPUOPS\n",
            'FILE:7: clusters[0] ("prod"): field "alerts" must be a list',
        ),
    ],
)
def test_bad_declarations_name_file_line_and_field(
    tmp_path: Path, declaration: str, expected: str
) -> None:
    assert _error(tmp_path, HEAD + declaration).startswith(expected)


def test_low_utilisation_needs_the_vgpu_monitors(tmp_path: Path) -> None:
    text = HEAD.replace("    runtime_allowed: true\n", "") + (
        "    alerts:\n      - channel: C0GPUOPS\n        utilisation_below_percent: 10\n"
        "        for: 1h\n"
    )
    assert _error(tmp_path, text).startswith(
        'FILE:7: clusters[0] ("prod"): alerts[0]: "utilisation_below_percent" reads the vGPU '
        "monitors; set runtime_allowed: true on this cluster"
    )


def test_several_contexts_need_one_named(tmp_path: Path) -> None:
    write_kubeconfig(
        tmp_path / "prod.yaml",
        server="https://10.0.0.1:6443",
        ca_pem=session_certificate().ca_pem,
        token="secret-token",
        contexts=("prod-admin", "prod-readonly"),
    )
    base = "clusters:\n  - name: prod\n    kubeconfig: prod.yaml\n    digests:\n"
    missing = base + '      - channel: C0GPUOPS\n        at: "09:00"\n'
    assert _error(tmp_path, missing).startswith(
        'FILE:5: clusters[0] ("prod"): digests[0]: the cluster has several contexts '
        '(prod-admin, prod-readonly); give "context" to say which one'
    )
    wrong = missing + "        context: prod-other\n"
    assert "'prod-other' is not a context of this cluster" in _error(tmp_path, wrong)
    path = tmp_path / "clusters.yaml"
    path.write_text(missing + "        context: prod-readonly\n", encoding="utf-8")
    assert load_registry(path).entries[0].digests[0].context == "prod-readonly"


def test_a_cluster_cannot_be_named_after_the_digests_command(tmp_path: Path) -> None:
    text = "clusters:\n  - name: digests\n    metrics_url: http://127.0.0.1:1/metrics\n"
    assert _error(tmp_path, text).startswith(
        'FILE:2: clusters[0]: field "name": "digests" is a word of /hami-summary'
    )


def test_the_documented_example_is_a_registry_the_bot_accepts(tmp_path: Path) -> None:
    page = (Path(__file__).parents[2] / "docs" / "slack.md").read_text(encoding="utf-8")
    section = page.split("## Digests and alerts", 1)[1]
    example = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "clusters.yaml"
    path.write_text(example, encoding="utf-8")
    [entry] = load_registry(path).entries
    assert len(entry.digests) == 2 and len(entry.alerts) == 7
    assert entry.digests[0].schedule.describe() == "09:00 Europe/Berlin, mon-fri"
    assert entry.digests[1].describe() == "GPU-hours of the last 7 days, 09:00 UTC, mon"
    pending = entry.alerts[-1]
    assert (pending.kind, pending.threshold, pending.namespace) == ("pods_pending", 1800.0, "ml")
