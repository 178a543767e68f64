"""Naming what a text without HAMi families is, and how to get HAMi's scheduler metrics."""

from __future__ import annotations

import pytest

from core.api import summarize_text
from core.errors import InputError
from core.model import SourceInfo
from core.recognise import (
    HAMI_WEBUI_FAMILIES,
    HOW_TO_GET_SCHEDULER_METRICS,
    describe_foreign_metrics,
    recognise_foreign_metrics,
)

HOW_TO = (
    "To summarise HAMi's GPU allocation, use the HAMi scheduler's /metrics: find its Service with "
    "the label app.kubernetes.io/component=hami-scheduler and read the port named 'monitor' "
    "(default 31993 -> 9395), path /metrics, for example: kubectl get --raw "
    '"/api/v1/namespaces/kube-system/services/hami-scheduler:monitor/proxy/metrics".'
)


def test_the_advice_names_service_label_port_and_path() -> None:
    assert HOW_TO_GET_SCHEDULER_METRICS == HOW_TO


CASES = [
    (
        [
            "DCGM_FI_DEV_FB_USED",
            "DCGM_FI_DEV_GPU_UTIL",
            "DCGM_FI_DEV_GPU_TEMP",
            "DCGM_FI_DEV_POWER_USAGE",
        ],
        "dcgm",
        "These look like NVIDIA DCGM exporter metrics (DCGM_FI_DEV_FB_USED, DCGM_FI_DEV_GPU_TEMP, "
        "DCGM_FI_DEV_GPU_UTIL and 1 more; 4 families in all): GPU hardware telemetry (memory "
        "used, utilisation, temperature, power), not HAMi's vGPU allocation. ",
    ),
    (
        ["node_cpu_seconds_total", "node_memory_MemAvailable_bytes", "go_goroutines"],
        "node-exporter",
        "These look like node exporter metrics (node_cpu_seconds_total, "
        "node_memory_MemAvailable_bytes; 3 families in all): host CPU, memory, disk and network "
        "readings, not HAMi's vGPU allocation. ",
    ),
    (
        ["kube_pod_info", "kube_node_status_allocatable"],
        "kube-state-metrics",
        "These look like kube-state-metrics (kube_node_status_allocatable, kube_pod_info; 2 "
        "families in all): Kubernetes object state (pods, nodes, resource requests), not HAMi's "
        "per-GPU allocation. ",
    ),
    (
        ["container_cpu_usage_seconds_total"],
        "cadvisor",
        "These look like cAdvisor (kubelet) container metrics (container_cpu_usage_seconds_total; "
        "1 family): CPU, memory and filesystem use per container, not HAMi's vGPU allocation. ",
    ),
    (
        ["go_goroutines", "process_cpu_seconds_total", "promhttp_metric_handler_requests_total"],
        "go-runtime",
        "These look like only Go runtime and process metrics (go_goroutines, "
        "process_cpu_seconds_total, promhttp_metric_handler_requests_total; 3 families in all): "
        "HAMi's exporters never emit these (they use a private Prometheus registry), so this is "
        "another program's /metrics. ",
    ),
    (
        ["hami_vgpu_count", "hami_core_size", "hami_container_vcore_allocated", "go_goroutines"],
        "hami-webui",
        "These look like HAMi-WebUI's own metrics (hami_container_vcore_allocated, hami_core_size, "
        "hami_vgpu_count; 4 families in all): WebUI computes these hami_* families itself from "
        "pod annotations and DCGM data; they share HAMi's prefix but HAMi's scheduler does not "
        "produce them. ",
    ),
    (
        ["mlu_memory_utilization", "mlu_temperature"],
        "vendor-exporter",
        "These look like a GPU/NPU vendor exporter's metrics (Cambricon, Ascend, Hygon or MetaX) "
        "(mlu_memory_utilization, mlu_temperature; 2 families in all): hardware readings, not "
        "HAMi's vGPU allocation. ",
    ),
    (
        ["myapp_requests", "myapp_latency_seconds", "go_goroutines"],
        "unknown",
        "These metrics are not from HAMi and not from an exporter this tool knows "
        "(myapp_latency_seconds, myapp_requests; 3 families in all). ",
    ),
]


@pytest.mark.parametrize(("names", "kind", "sentence"), CASES, ids=[c[1] for c in CASES])
def test_each_exporter_is_named_with_examples_and_advice(
    names: list[str], kind: str, sentence: str
) -> None:
    verdict = recognise_foreign_metrics(names)
    assert verdict.kind == kind
    assert verdict.sentence == sentence + HOW_TO
    assert describe_foreign_metrics(names) == verdict.sentence


def test_webui_is_named_first_when_mixed_with_dcgm() -> None:
    """WebUI's hami_* families are the ones people mistake for HAMi's, so they lead."""
    verdict = recognise_foreign_metrics(["DCGM_FI_DEV_FB_USED", "hami_memory_used"])
    assert verdict.kind == "hami-webui"
    assert "(hami_memory_used; 2 families in all)" in verdict.sentence


def test_every_webui_family_of_the_reference_is_known() -> None:
    # hami-metrics-reference.md, section 7 (device level, task level, registered-only).
    listed = {
        "hami_vgpu_count", "hami_vmemory_size", "hami_memory_size", "hami_vcore_size",
        "hami_core_size", "hami_vcore_scaling", "hami_vmemory_scaling", "hami_memory_used",
        "hami_memory_util", "hami_core_used", "hami_core_util", "hami_core_used_avg",
        "hami_core_util_avg", "hami_device_temperature", "hami_device_memory_temperature",
        "hami_device_power", "hami_device_fan_speed_p", "hami_device_fan_speed_r",
        "hami_device_hardware_health", "hami_container_vgpu_allocated",
        "hami_container_vmemory_allocated", "hami_container_vcore_allocated",
        "hami_container_memory_used", "hami_container_memory_util", "hami_container_core_used",
        "hami_container_core_util", "hami_pool_vgpu_count", "hami_pool_vmemory_size",
        "hami_pool_vcore_size", "hami_system_component_health",
    }  # fmt: skip
    assert listed == HAMI_WEBUI_FAMILIES
    for name in listed:
        assert recognise_foreign_metrics([name]).kind == "hami-webui"


def test_label_names_decide_when_family_names_do_not() -> None:
    assert recognise_foreign_metrics(["gpu_used_mb"], ["provider", "device_no"]).kind == (
        "hami-webui"
    )
    assert recognise_foreign_metrics(["fb_used"], ["UUID", "modelName"]).kind == "dcgm"
    assert recognise_foreign_metrics(["fb_used"], ["instance"]).kind == "unknown"


def test_no_families_at_all() -> None:
    verdict = recognise_foreign_metrics([])
    assert verdict.kind == "empty"
    assert verdict.sentence == "The text holds no metric families at all. " + HOW_TO


def test_a_dcgm_paste_is_refused_with_the_verdict_end_to_end() -> None:
    text = (
        "# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).\n"
        "# TYPE DCGM_FI_DEV_FB_USED gauge\n"
        'DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-5f3c",modelName="NVIDIA A100-PCIE-40GB"} 18432\n'
    )
    with pytest.raises(InputError) as raised:
        summarize_text(text, SourceInfo(kind="paste", label="pasted text"))
    assert "These look like NVIDIA DCGM exporter metrics (DCGM_FI_DEV_FB_USED; 1 family)" in (
        raised.value.message
    )
    assert HOW_TO in raised.value.message
