"""The charts' number and name style."""

from __future__ import annotations

import pytest

from core.views import chart_text as fmt


@pytest.mark.parametrize(
    ("mib", "text"),
    [
        (512, "0.500 GiB"),
        (40 * 1024, "40.0 GiB"),
        (123.4 * 1024, "123 GiB"),
        (1000 * 1024, "1,000 GiB"),
        (1.214 * 1024**2, "1.21 TiB"),
        (193_786.5 * 1024, "189 TiB"),
        (1234.5 * 1024**2, "1,230 TiB"),
        (None, "not known"),
    ],
)
def test_memory_totals_have_three_significant_digits(mib: float | None, text: str) -> None:
    assert fmt.memory_total(mib) == text


@pytest.mark.parametrize(
    ("mib", "text"), [(440, "440 MiB"), (1024, "1.0 GiB"), (40376, "39.4 GiB"), (None, "not known")]
)
def test_memory_of_one_gpu_or_pod_has_one_decimal(mib: float | None, text: str) -> None:
    assert fmt.memory_each(mib) == text


def test_counts_cores_and_percentages() -> None:
    assert fmt.count(8000, "GPU") == "8,000 GPUs"
    assert fmt.count(1, "node") == "1 node"
    assert fmt.count(None, "GPU") == "GPU not known"
    assert fmt.cores(49700) == "49,700 cores"
    assert fmt.percent(66.66627) == "66.7%"
    assert fmt.percent(None) == "not known"


def test_long_names_keep_their_end() -> None:
    name = "ip-10-0-12-123.eu-west-1.compute.internal-node-0042"
    short = fmt.short_name(name)
    assert len(short) == fmt.MAX_NAME_CHARS
    assert short.endswith("node-0042") and "\u2026" in short
    assert fmt.short_name("gpu-node-01") == "gpu-node-01"


def test_node_labels_drop_a_shared_domain() -> None:
    labels, note = fmt.node_labels(["a.example.internal", "b.example.internal"])
    assert labels == {"a.example.internal": "a", "b.example.internal": "b"}
    assert note == "node names shown without '.example.internal'"
    assert fmt.node_labels(["a.x", "b.y"])[1] == ""


def test_model_short_names_are_unique() -> None:
    names = fmt.model_short_names(
        [
            "NVIDIA A100-PCIE-40GB",
            "NVIDIA A100-SXM4-40GB",
            "NVIDIA A100-SXM4-80GB",
            "NVIDIA H100 80GB HBM3",
            "NVIDIA-Tesla T4",
            "NVIDIA L4",
            "unknown",
        ]
    )
    assert names["NVIDIA A100-SXM4-80GB"] == "A100 80GB"
    assert names["NVIDIA H100 80GB HBM3"] == "H100 80GB"
    assert names["NVIDIA-Tesla T4"] == "T4"
    assert names["NVIDIA L4"] == "L4"
    assert names["unknown"] == "unknown"
    # Two 40 GB A100s would both be "A100 40GB": they keep their longer names.
    assert names["NVIDIA A100-PCIE-40GB"] == "A100-PCIE-40GB"
    assert names["NVIDIA A100-SXM4-40GB"] == "A100-SXM4-40GB"
    assert len(set(names.values())) == len(names)
