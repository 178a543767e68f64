"""The one number style: every view formats its figures with ``core.number_style``."""

from __future__ import annotations

import pytest

from core import number_style


@pytest.mark.parametrize(
    ("mib", "shown"),
    [
        (0, "0 MiB"),
        (512, "512 MiB"),
        (1023, "1,023 MiB"),
        (1024, "1.0 GiB"),
        (40960, "40.0 GiB"),
        (81559, "79.6 GiB"),
        (2_097_152, "2,048.0 GiB"),
    ],
)
def test_memory_of_one_gpu_or_pod_is_gib_with_one_decimal(mib: float, shown: str) -> None:
    assert number_style.mem_each(mib) == shown


@pytest.mark.parametrize(
    ("mib", "shown"),
    [
        (0, "0 GiB"),
        (512, "0.500 GiB"),
        (78848, "77.0 GiB"),
        (168960, "165 GiB"),
        (1024 * 9.996, "10.0 GiB"),
        (1024 * 999.6, "1,000 GiB"),
        (1024 * 1023, "1,020 GiB"),
        (197_059_847, "188 TiB"),
        (383_652_344, "366 TiB"),
        (1024 * 1024 * 1.5, "1.50 TiB"),
        (1024 * 1024 * 1234, "1,230 TiB"),
    ],
)
def test_totals_have_three_significant_digits_in_gib_or_tib(mib: float, shown: str) -> None:
    assert number_style.mem_total(mib) == shown


def test_counts_cores_and_percentages() -> None:
    assert number_style.count(8000) == "8,000"
    assert number_style.counted(1, "GPU") == "1 GPU"
    assert number_style.counted(8000, "GPU") == "8,000 GPUs"
    assert number_style.counted(2, "namespace") == "2 namespaces"
    assert number_style.cores(435170) == "435,170 cores"
    assert number_style.cores(12.5) == "12.5 cores"
    assert number_style.cores_pair(275, 600) == "275 / 600 cores"
    assert number_style.percent(45.83333) == "45.8%"
    assert number_style.percent(100) == "100.0%"
    assert number_style.share(1, 3) == "33.3%"


def test_what_is_not_known_says_so_never_zero() -> None:
    for value in (
        number_style.count(None),
        number_style.cores(None),
        number_style.percent(None),
        number_style.mem_each(None),
        number_style.mem_total(None),
        number_style.share(5, 0),
        number_style.cores_pair(None, 600),
    ):
        assert value == "not known"
    assert number_style.counted(None, "GPU") == "GPUs not known"
