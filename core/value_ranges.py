"""The values a HAMi exporter can write for each kind of series.

HAMi's scheduler keeps device memory as a 32-bit count of MiB, cores and task slots as 32-bit
integers, and quota figures as 64-bit integers; the vGPU monitor reports bytes from NVML and
HAMi-core as unsigned 64-bit counters and a GPU's utilisation as 0-100. Each family of the
family table (``core.families``) names one of these ranges; the sample screen
(``core.sample_screen``) sets aside values outside it.
"""

from __future__ import annotations

from dataclasses import dataclass

BYTES_PER_MIB = 1024.0 * 1024.0
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
UINT32_MAX = 2**32 - 1
UINT64_MAX = 2**64 - 1


@dataclass(frozen=True, slots=True)
class ValueRange:
    """The values one kind of series can take: 0 up to ``upper``; ``whole`` for counts."""

    upper: float
    ceiling: str  # the upper bound in words, for the message
    whole: bool = False


DEVICE_MEMORY = ValueRange(
    INT32_MAX * BYTES_PER_MIB, "2,147,483,647 MiB, the most HAMi's 32-bit MiB count holds"
)
CORES = ValueRange(INT32_MAX, "2,147,483,647, the most HAMi's 32-bit core count holds")
# Limits are what shares are taken of, and HAMi keeps every one as a whole count (MiB times
# 1,048,576 bytes, core points, quota units): a fractional one cannot come from an exporter,
# and a tiny one (4e-320) would make the share of it infinite.
DEVICE_MEMORY_LIMIT = ValueRange(DEVICE_MEMORY.upper, DEVICE_MEMORY.ceiling, True)
CORE_LIMIT = ValueRange(CORES.upper, CORES.ceiling, True)
SLOTS = ValueRange(INT32_MAX, "2,147,483,647, the most HAMi's 32-bit slot count holds", True)
# Used MiB over total MiB, both 32-bit counts; above 1 means over-allocated.
RATIO = ValueRange(INT32_MAX, "2,147,483,647, the largest ratio of two 32-bit MiB counts")
QUOTA = ValueRange(INT64_MAX, "9,223,372,036,854,775,807, the most a 64-bit quota holds")
QUOTA_LIMIT = ValueRange(QUOTA.upper, QUOTA.ceiling, True)
MONITOR_BYTES = ValueRange(UINT64_MAX, "18,446,744,073,709,551,615 bytes (a 64-bit counter)")
MONITOR_BYTES_LIMIT = ValueRange(MONITOR_BYTES.upper, MONITOR_BYTES.ceiling, True)
PERCENT = ValueRange(100.0, "100%")  # NVML utilisation of a whole GPU
# A container's SM utilisation sums the samples of its processes, which need not stay at 100.
SUMMED_PERCENT = ValueRange(UINT64_MAX, "18,446,744,073,709,551,615 (a 64-bit sum)")
SECONDS = ValueRange(INT64_MAX, "9,223,372,036,854,775,807 seconds")
# NVML's readings of a GPU: an unsigned 32-bit temperature in degrees Celsius, and power in
# unsigned 32-bit milliwatts (the monitor writes watts); ECC errors as a 64-bit count.
TEMPERATURE = ValueRange(UINT32_MAX, "4,294,967,295 °C, the most NVML's 32-bit reading holds")
POWER_WATTS = ValueRange(UINT32_MAX / 1000.0, "4,294,967 W, NVML's 32-bit milliwatt reading")
ERROR_COUNT = ValueRange(UINT64_MAX, "18,446,744,073,709,551,615 (a 64-bit error count)", True)
# The scheduler's event counters: float64 in client_golang, counting one by one, so whole and
# exact up to 2**53.
EVENT_COUNT = ValueRange(2.0**53, "9,007,199,254,740,992, the largest exact float64 count", True)
# A yes/no gauge (HAMi's scheduler state): 0 or 1.
FLAG = ValueRange(1.0, "1 (the gauge is a yes/no flag)", True)
