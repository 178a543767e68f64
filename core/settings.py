"""Every threshold of SPEC.md in one typed object, with the documented defaults.

Operators override them in configuration; tests use the defaults.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Thresholds:
    # SPEC 5: a dimension at or above this share of its limit is saturated / "full".
    saturation_percent: float = 99.0
    # SPEC 8: namespace classes, as shares of cluster-allocated totals.
    dominant_percent: float = 50.0
    small_percent: float = 10.0
    heavy_upper_percent: float = 50.0
    fragmented_min_allocations: int = 3
    fragmented_min_gpus: int = 3
    fragmented_slice_cores: float = 50.0
    # SPEC 9: concentrated when half of allocated cores sit on at most this share of GPUs.
    concentrated_gpu_percent: float = 20.0
    fragmented_min_partial_gpus: int = 2
    fragmented_free_on_partial_percent: float = 50.0
    # SPEC 10: tolerances of the consistency checks.
    check_cores: float = 1.0
    check_mem_mib: float = 1.0
    check_ratio: float = 0.01
    # SPEC 11: real-usage classes.
    idle_utilization_percent: float = 5.0
    idle_mem_percent: float = 10.0
    high_utilization_percent: float = 80.0
    normal_utilization_percent: float = 40.0


@dataclass(frozen=True, slots=True)
class Limits:
    max_input_bytes: int = 64 * 1024 * 1024
    top_rows: int = 20


@dataclass(frozen=True, slots=True)
class Settings:
    thresholds: Thresholds = Thresholds()
    limits: Limits = Limits()


DEFAULT_SETTINGS = Settings()
