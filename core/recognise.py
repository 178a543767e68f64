"""Say what a metrics text is when it holds no HAMi scheduler or vGPU monitor family.

People paste what their dashboards show, and GPU dashboards are fed by other exporters: the
NVIDIA DCGM exporter, node exporter, kube-state-metrics, cAdvisor, vendor exporters, or
HAMi-WebUI's own backend, whose ``hami_*`` families share HAMi's prefix but are computed by
WebUI from pod annotations, not measured by HAMi. The answer names what the
text looks like and how to fetch HAMi's scheduler metrics instead.

Only foreign families are judged here; which families are HAMi's is ``core.families``' job.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

__all__ = [
    "HAMI_WEBUI_FAMILIES",
    "HOW_TO_GET_SCHEDULER_METRICS",
    "ForeignMetrics",
    "describe_foreign_metrics",
    "recognise_foreign_metrics",
]

# The scheduler's metrics listener (cmd/scheduler/main.go, --metrics-bind-address :9395) is
# published by the chart's scheduler Service on the port named "monitor" (nodePort 31993).
HOW_TO_GET_SCHEDULER_METRICS = (
    "To summarise HAMi's GPU allocation, use the HAMi scheduler's /metrics: find its Service "
    "with the label app.kubernetes.io/component=hami-scheduler and read the port named "
    "'monitor' (default 31993 -> 9395), path /metrics, for example: kubectl get --raw "
    '"/api/v1/namespaces/kube-system/services/hami-scheduler:monitor/proxy/metrics".'
)

# HAMi-WebUI's backend exporter (server/internal/exporter/metrics.go in Project-HAMi/HAMi-WebUI),
# its device-level, task-level and registered-but-unpopulated families.
HAMI_WEBUI_FAMILIES = frozenset(
    {
        "hami_vgpu_count",
        "hami_vmemory_size",
        "hami_memory_size",
        "hami_vcore_size",
        "hami_core_size",
        "hami_vcore_scaling",
        "hami_vmemory_scaling",
        "hami_memory_used",
        "hami_memory_util",
        "hami_core_used",
        "hami_core_util",
        "hami_core_used_avg",
        "hami_core_util_avg",
        "hami_device_temperature",
        "hami_device_memory_temperature",
        "hami_device_power",
        "hami_device_fan_speed_p",
        "hami_device_fan_speed_r",
        "hami_device_hardware_health",
        "hami_container_vgpu_allocated",
        "hami_container_vmemory_allocated",
        "hami_container_vcore_allocated",
        "hami_container_memory_used",
        "hami_container_memory_util",
        "hami_container_core_used",
        "hami_container_core_util",
        "hami_pool_vgpu_count",
        "hami_pool_vmemory_size",
        "hami_pool_vcore_size",
        "hami_system_component_health",
    }
)
# Label names only WebUI's families carry (HAMi's own use device_no nowhere, nor provider).
_WEBUI_LABELS = frozenset({"provider", "device_no", "container_pod_uuid", "namespace_name"})
# Label names of the DCGM exporter's series.
_DCGM_LABELS = frozenset({"modelName", "UUID", "Hostname", "DCGM_FI_DRIVER_VERSION"})


@dataclass(frozen=True, slots=True)
class ForeignMetrics:
    """What a text without HAMi families looks like."""

    kind: str  # short id: hami-webui, dcgm, kube-state-metrics, cadvisor, node-exporter, ...
    sentence: str  # what it is, with examples, and how to get HAMi's scheduler metrics


@dataclass(frozen=True, slots=True)
class _Kind:
    kind: str
    matches: Callable[[str], bool]
    label: str  # completes "These look like ..."
    detail: str  # what such metrics describe


def _starts(*prefixes: str) -> Callable[[str], bool]:
    return lambda name: name.startswith(prefixes)


# In order of precedence when a text mixes several: the first kinds are the likeliest to be
# mistaken for HAMi's metrics, so they are named first.
_KINDS = (
    _Kind(
        "hami-webui",
        HAMI_WEBUI_FAMILIES.__contains__,
        "HAMi-WebUI's own metrics",
        "WebUI computes these hami_* families itself from pod annotations and DCGM data; they "
        "share HAMi's prefix but HAMi's scheduler does not produce them",
    ),
    _Kind(
        "dcgm",
        _starts("DCGM_"),
        "NVIDIA DCGM exporter metrics",
        "GPU hardware telemetry (memory used, utilisation, temperature, power), not HAMi's "
        "vGPU allocation",
    ),
    _Kind(
        "nvidia-gpu-exporter",
        _starts("nvidia_smi_", "nvidia_gpu_"),
        "an nvidia-smi based GPU exporter's metrics",
        "hardware readings, not HAMi's vGPU allocation",
    ),
    _Kind(
        "vendor-exporter",
        _starts("mlu_", "npu_chip_info_", "dcu_", "vdcu_", "mx_"),
        "a GPU/NPU vendor exporter's metrics (Cambricon, Ascend, Hygon or MetaX)",
        "hardware readings, not HAMi's vGPU allocation",
    ),
    _Kind(
        "kube-state-metrics",
        _starts("kube_"),
        "kube-state-metrics",
        "Kubernetes object state (pods, nodes, resource requests), not HAMi's per-GPU allocation",
    ),
    _Kind(
        "cadvisor",
        _starts("container_", "machine_"),
        "cAdvisor (kubelet) container metrics",
        "CPU, memory and filesystem use per container, not HAMi's vGPU allocation",
    ),
    _Kind(
        "node-exporter",
        _starts("node_"),
        "node exporter metrics",
        "host CPU, memory, disk and network readings, not HAMi's vGPU allocation",
    ),
    _Kind(
        "prometheus",
        _starts("prometheus_", "alertmanager_"),
        "Prometheus' own server metrics",
        "the monitoring server's internals, not HAMi's vGPU allocation",
    ),
    _Kind(
        "go-runtime",
        _starts("go_", "process_", "promhttp_"),
        "only Go runtime and process metrics",
        "HAMi's exporters never emit these (they use a private Prometheus registry), so this "
        "is another program's /metrics",
    ),
)


def _families(count: int) -> str:
    return "1 family" if count == 1 else f"{count} families in all"


def _examples(names: list[str], limit: int = 3) -> str:
    shown = ", ".join(names[:limit])
    more = len(names) - limit
    return f"{shown} and {more} more" if more > 0 else shown


def recognise_foreign_metrics(
    family_names: Iterable[str], label_names: Iterable[str] = ()
) -> ForeignMetrics:
    """Classify family names found in a text that has no HAMi scheduler/monitor family.

    ``label_names`` (optional) help when the family names alone are not conclusive.
    """
    names = sorted(set(family_names))
    labels = set(label_names)
    if not names:
        return ForeignMetrics(
            "empty",
            "The text holds no metric families at all. " + HOW_TO_GET_SCHEDULER_METRICS,
        )
    matched: dict[str, list[str]] = {}
    for name in names:
        for kind in _KINDS:
            if kind.matches(name):
                matched.setdefault(kind.kind, []).append(name)
                break
    if not matched and labels & _WEBUI_LABELS:
        matched["hami-webui"] = names
    if not matched and labels & _DCGM_LABELS:
        matched["dcgm"] = names
    for kind in _KINDS:
        found = matched.get(kind.kind)
        if not found:
            continue
        if kind.kind == "go-runtime" and len(found) < len(names):
            break  # runtime families ride along with any exporter: name the others instead
        return ForeignMetrics(
            kind.kind,
            f"These look like {kind.label} ({_examples(found)}; {_families(len(names))}): "
            f"{kind.detail}. {HOW_TO_GET_SCHEDULER_METRICS}",
        )
    runtime = set(matched.get("go-runtime", ()))
    others = [name for name in names if name not in runtime] or names
    return ForeignMetrics(
        "unknown",
        f"These metrics are not from HAMi and not from an exporter this tool knows "
        f"({_examples(others)}; {_families(len(names))}). {HOW_TO_GET_SCHEDULER_METRICS}",
    )


def describe_foreign_metrics(family_names: Iterable[str], label_names: Iterable[str] = ()) -> str:
    """The sentence of ``recognise_foreign_metrics``: what the text is and what to fetch."""
    return recognise_foreign_metrics(family_names, label_names).sentence
