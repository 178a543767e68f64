"""nvidia-smi parsing (query CSV, plain tables of several driver branches) and usage classes."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import pytest

from core.model import GpuReading, PodExecResult
from core.realusage import (
    IMPLAUSIBLE_MIB,
    MAX_OUTPUT_CHARS,
    QUERY_COMMAND,
    UNREADABLE_PROBLEM,
    parse_nvidia_smi,
)
from core.settings import Thresholds
from core.usage_assessment import assess_real_usage
from tests.conftest import read_fixture

UUID_A = "GPU-5f3c1a2e-7b4d-4e91-9c0a-1d2e3f405162"
UUID_B = "GPU-8a9b0c1d-2e3f-4a5b-8c6d-7e8f90a1b2c3"


def test_query_command_asks_for_the_documented_fields() -> None:
    assert QUERY_COMMAND == (
        "nvidia-smi",
        "--query-gpu=index,uuid,utilization.gpu,memory.used,memory.total",
        "--format=csv,noheader,nounits",
    )


def test_csv_without_header_and_units() -> None:
    parsed = parse_nvidia_smi(f"0, {UUID_A}, 41, 9870, 10240\n")
    assert parsed.problem is None
    assert parsed.readings == (GpuReading(0, UUID_A, 41.0, 9870.0, 10240.0),)


def test_csv_with_header_and_units_and_several_gpus() -> None:
    text = (
        "index, uuid, utilization.gpu [%], memory.used [MiB], memory.total [MiB]\r\n"
        f"0, {UUID_A}, 41 %, 9870 MiB, 10240 MiB\r\n"
        f"1, {UUID_B}, 100 %, 40000 MiB, 40960 MiB\r\n"
    )
    parsed = parse_nvidia_smi(text)
    assert parsed.problem is None
    assert [r.index for r in parsed.readings] == [0, 1]
    assert parsed.readings[1] == GpuReading(1, UUID_B, 100.0, 40000.0, 40960.0)


def test_csv_header_in_another_column_order() -> None:
    text = f"uuid, memory.total [MiB], index\n{UUID_A}, 15360 MiB, 3\n"
    parsed = parse_nvidia_smi(text)
    assert parsed.readings == (GpuReading(3, UUID_A, None, None, 15360.0),)


@pytest.mark.parametrize("marker", ["[N/A]", "N/A", "[Not Supported]"])
def test_csv_not_available_markers_become_none(marker: str) -> None:
    parsed = parse_nvidia_smi(f"0, {UUID_A}, {marker}, {marker}, 40960\n")
    assert parsed.problem is None
    assert parsed.readings == (GpuReading(0, UUID_A, None, None, 40960.0),)


def test_csv_mig_rows() -> None:
    mig = "MIG-1f2e3d4c-5b6a-5789-9abc-def012345678"
    parsed = parse_nvidia_smi(f"0, {mig}, [N/A], 13, 9856\n")
    assert parsed.readings == (GpuReading(0, mig, None, 13.0, 9856.0),)


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
            "Make sure that the latest NVIDIA driver is installed and running.\n",
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
            "Make sure that the latest NVIDIA driver is installed and running.",
        ),
        ("Failed to initialize NVML: Unknown Error\n", "Failed to initialize NVML: Unknown Error"),
        ("No devices were found\n", "No devices were found"),
    ],
)
def test_driver_errors_are_reported_not_raised(output: str, expected: str) -> None:
    parsed = parse_nvidia_smi(output)
    assert parsed.readings == ()
    assert parsed.problem == expected


def test_garbage_is_reported_with_the_offending_line() -> None:
    parsed = parse_nvidia_smi("sh: 1: something odd happened\n")
    assert parsed.readings == ()
    assert parsed.problem == (
        "could not read nvidia-smi's output (first unreadable line: "
        "'sh: 1: something odd happened')"
    )
    assert parsed.cause == "unreadable"


def test_empty_output_is_not_a_gpu_count() -> None:
    parsed = parse_nvidia_smi("  \n")
    assert (parsed.problem, parsed.cause) == ("nvidia-smi printed nothing", "empty")


NEW_DRIVER_TABLE = """\
Tue Mar  5 10:11:12 2024
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 550.54.14              Driver Version: 550.54.14      CUDA Version: 12.4     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
|   0  NVIDIA A100-PCIE-40GB          On  |   00000000:17:00.0 Off |                    0 |
| N/A   34C    P0             35W /  250W |    9870MiB /  10240MiB |     41%      Default |
|                                         |                        |             Disabled |
+-----------------------------------------+------------------------+----------------------+
|   1  NVIDIA GeForce RTX 4090 ...    Off |   00000000:65:00.0 Off |                  N/A |
| 30%   40C    P8             20W /  450W |       2MiB /  24564MiB |      0%      Default |
|                                         |                        |                  N/A |
+-----------------------------------------+------------------------+----------------------+

+-----------------------------------------------------------------------------------------+
| Processes:                                                                              |
|  GPU   GI   CI        PID   Type   Process name                              GPU Memory |
|        ID   ID                                                               Usage      |
|=========================================================================================|
|    0   N/A  N/A     12345      C   python                                       9868MiB |
+-----------------------------------------------------------------------------------------+
"""

OLD_DRIVER_TABLE = """\
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 450.80.02    Driver Version: 450.80.02    CUDA Version: 11.0     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|                               |                      |               MIG M. |
|===============================+======================+======================|
|   0  Tesla T4            Off  | 00000000:00:1E.0 Off |                    0 |
| N/A   34C    P8     9W /  70W |   4096MiB / 15109MiB |     12%      Default |
|                               |                      |                  N/A |
+-------------------------------+----------------------+----------------------+

+-----------------------------------------------------------------------------+
| Processes:                                                                  |
|  GPU   GI   CI        PID   Type   Process name                  GPU Memory |
|=============================================================================|
|  No running processes found                                                 |
+-----------------------------------------------------------------------------+
"""

ANCIENT_DRIVER_TABLE = """\
+------------------------------------------------------+
| NVIDIA-SMI 340.29     Driver Version: 340.29         |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  Tesla K20Xm         On   | 0000:08:00.0     Off |                    0 |
| N/A   30C    P0    59W / 235W |     11MB /  5759MB   |     0%      Default |
+-------------------------------+----------------------+----------------------+
"""

MIG_TABLE = """\
+---------------------------------------------------------------------------------------+
| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |
|-----------------------------------------+----------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |
|                                         |                      |               MIG M. |
|=========================================+======================+======================|
|   0  NVIDIA A100-SXM4-40GB          On  | 00000000:07:00.0 Off |                   On |
| N/A   32C    P0              42W / 400W |                  N/A |     N/A      Default |
|                                         |                      |              Enabled |
+-----------------------------------------+----------------------+----------------------+

+---------------------------------------------------------------------------------------+
| MIG devices:                                                                          |
+------------------+--------------------------------+-----------+-----------------------+
| GPU  GI  CI  MIG |                   Memory-Usage |        Vol|      Shared           |
|      ID  ID  Dev |                     BAR1-Usage | SM     Unc| CE ENC DEC OFA JPG    |
|                  |                                |        ECC|                       |
|==================+================================+===========+=======================|
|  0    1   0   0  |            1200MiB /  9856MiB  | 42      0 |  3   0    2    0    0 |
|                  |               0MiB / 16383MiB  |           |                       |
+------------------+--------------------------------+-----------+-----------------------+
"""


def test_new_driver_table_with_truncated_name_ignores_process_rows() -> None:
    parsed = parse_nvidia_smi(NEW_DRIVER_TABLE)
    assert parsed.problem is None
    assert parsed.readings == (
        GpuReading(0, None, 41.0, 9870.0, 10240.0, "NVIDIA A100-PCIE-40GB"),
        GpuReading(1, None, 0.0, 2.0, 24564.0, "NVIDIA GeForce RTX 4090 ..."),
    )


def test_old_driver_table() -> None:
    parsed = parse_nvidia_smi(OLD_DRIVER_TABLE)
    assert parsed.readings == (GpuReading(0, None, 12.0, 4096.0, 15109.0, "Tesla T4"),)


def test_ancient_driver_table_in_mb() -> None:
    parsed = parse_nvidia_smi(ANCIENT_DRIVER_TABLE)
    assert parsed.readings == (GpuReading(0, None, 0.0, 11.0, 5759.0, "Tesla K20Xm"),)


def test_mig_table_reports_the_slices() -> None:
    parsed = parse_nvidia_smi(MIG_TABLE)
    assert parsed.readings == (GpuReading(0, None, None, 1200.0, 9856.0, "MIG GI 1 CI 0"),)


def test_table_after_a_driver_error_line_still_reads() -> None:
    parsed = parse_nvidia_smi("error: something minor\n" + OLD_DRIVER_TABLE)
    assert len(parsed.readings) == 1


# --- assessment ---------------------------------------------------------------------------

T = Thresholds()


def _result(pod: str, util: float | None, used: float | None, **kw: object) -> PodExecResult:
    reading = GpuReading(0, UUID_A, util, used, 10240.0)
    return PodExecResult("team-a", pod, "main", (reading,), **kw)  # type: ignore[arg-type]


def test_classes_follow_spec_11() -> None:
    allocations = {("team-a", p): 10000.0 for p in ("idle", "high", "normal", "low", "edge")}
    results = [
        _result("idle", 4.9, 999.0),  # util < 5 and mem < 10 %: idle first
        _result("high", 90.0, 8000.0),  # 80 % efficiency
        _result("normal", 10.0, 4000.0),  # 40 %
        _result("low", 50.0, 3999.0),  # 39.99 %
        _result("edge", 5.0, 500.0),  # util not below 5: not idle, efficiency 5 %: low
    ]
    by_pod = {u.pod: u for u in assess_real_usage(results, allocations, T)}
    assert by_pod["idle"].usage_class == "idle"
    assert by_pod["high"].usage_class == "high"
    assert by_pod["high"].mem_efficiency_percent == pytest.approx(80.0)
    assert by_pod["normal"].usage_class == "normal"
    assert by_pod["low"].usage_class == "low / over-allocated"
    assert by_pod["edge"].usage_class == "low / over-allocated"


def test_several_gpus_average_utilisation_and_sum_memory() -> None:
    readings = (
        GpuReading(0, UUID_A, 20.0, 3000.0, 7680.0),
        GpuReading(1, UUID_B, 60.0, 4000.0, 7680.0),
    )
    result = PodExecResult("ml-batch", "ddp-worker-0", "trainer", readings)
    (usage,) = assess_real_usage([result], {("ml-batch", "ddp-worker-0"): 15360.0}, T)
    assert usage.utilization_percent == pytest.approx(40.0)
    assert usage.mem_used_mib == pytest.approx(7000.0)
    assert usage.mem_efficiency_percent == pytest.approx(7000 / 15360 * 100)
    assert usage.usage_class == "normal"


def test_failures_are_kept_without_class_and_results_sorted() -> None:
    results = [
        PodExecResult("team-b", "z", None, (), failure="pod gone", detail="404"),
        PodExecResult("team-a", "y", "main", (), failure="exec blocked by policy"),
    ]
    usages = assess_real_usage(results, {("team-b", "z"): 100.0}, T)
    assert [(u.namespace, u.pod) for u in usages] == [("team-a", "y"), ("team-b", "z")]
    assert usages[1].failure == "pod gone"
    assert usages[1].usage_class is None
    assert usages[1].allocated_mem_mib == 100.0
    assert usages[1].detail == "404"


def test_unknown_allocation_falls_back_to_utilisation() -> None:
    (usage,) = assess_real_usage([_result("x", 85.0, 100.0)], {}, T)
    assert usage.mem_efficiency_percent is None
    assert usage.usage_class == "high"
    assert "no HAMi memory allocation" in usage.detail


def test_empty_gpu_list_is_not_a_failure() -> None:
    result = PodExecResult("team-a", "p", "main", ())
    (usage,) = assess_real_usage([result], {("team-a", "p"): 1024.0}, T)
    assert usage.failure is None
    assert usage.usage_class is None
    assert "inside a HAMi slice this can be normal" in usage.detail


# --- outputs of more drivers, MIG, Windows, HAMi-core -------------------------------------------
# Layouts as nvidia-smi prints them (column widths per driver branch); values are made up.

DRIVER_470_TABLE = """\
Mon Nov 28 10:11:12 2022
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 470.141.03   Driver Version: 470.141.03   CUDA Version: 11.4     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|                               |                      |               MIG M. |
|===============================+======================+======================|
|   0  NVIDIA GeForce ...  Off  | 00000000:3B:00.0 Off |                  N/A |
| 30%   38C    P2    97W / 350W |  18245MiB / 24268MiB |     87%      Default |
|                               |                      |                  N/A |
+-------------------------------+----------------------+----------------------+
|   1  Tesla V100-SXM2...  On   | 00000000:86:00.0 Off |                    0 |
| N/A   41C    P0    56W / 300W |   1024MiB / 32510MiB |      3%   E. Process |
|                               |                      |                  N/A |
+-------------------------------+----------------------+----------------------+

+-----------------------------------------------------------------------------+
| Processes:                                                                  |
|  GPU   GI   CI        PID   Type   Process name                  GPU Memory |
|        ID   ID                                                   Usage      |
|=============================================================================|
|    0   N/A  N/A      2231      C   python                          18243MiB |
+-----------------------------------------------------------------------------+
"""

DRIVER_535_TABLE = """\
Sat Apr  6 22:10:15 2024
+---------------------------------------------------------------------------------------+
| NVIDIA-SMI 535.161.07             Driver Version: 535.161.07   CUDA Version: 12.2     |
|-----------------------------------------+----------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |
|                                         |                      |               MIG M. |
|=========================================+======================+======================|
|   0  NVIDIA GeForce RTX 4090        Off | 00000000:01:00.0 Off |                  Off |
|  0%   28C    P8              11W / 450W |      1MiB / 24564MiB |      0%      Default |
|                                         |                      |                  N/A |
+-----------------------------------------+----------------------+----------------------+
"""

# 560/570 and later: a "+" rule under the version line and wider cells.
DRIVER_570_TABLE = """\
Tue May 27 11:22:23 2025
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 570.133.20             Driver Version: 570.133.20     CUDA Version: 12.8     |
+-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
|   0  NVIDIA H100 80GB HBM3          On  |   00000000:18:00.0 Off |                    0 |
| N/A   36C    P0            121W /  700W |   20480MiB /  81559MiB |     63%      Default |
|                                         |                        |             Disabled |
+-----------------------------------------+------------------------+----------------------+

+-----------------------------------------------------------------------------------------+
| Processes:                                                                              |
|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |
|        ID   ID                                                               Usage      |
|=========================================================================================|
|  No running processes found                                                             |
+-----------------------------------------------------------------------------------------+
"""

# Windows before 555: "TCC/WDDM" header, two rows per GPU, the driver model where Linux has the
# persistence mode.
WINDOWS_WDDM_TCC_TABLE = """\
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 527.27       Driver Version: 527.27       CUDA Version: 12.0     |
|-------------------------------+----------------------+----------------------+
| GPU  Name            TCC/WDDM | Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  NVIDIA GeForce RTX 2080 ... WDDM | 00000000:0C:00.0  On |                  N/A |
| 27%   51C    P8    13W / 225W |   1516MiB /  8192MiB |      4%      Default |
+-------------------------------+----------------------+----------------------+
|   1  Tesla T4            TCC  | 00000000:0D:00.0 Off |                    0 |
| N/A   45C    P0    27W /  70W |   6144MiB / 15360MiB |     55%      Default |
+-------------------------------+----------------------+----------------------+
"""

# Windows from 555 on: "Driver-Model" header.
WINDOWS_DRIVER_MODEL_TABLE = """\
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 576.80                 Driver Version: 576.80         CUDA Version: 12.9     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                  Driver-Model | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
|   0  NVIDIA GeForce RTX 3080      WDDM  |   00000000:01:00.0  On |                  N/A |
|  0%   54C    P8             23W /  340W |     665MiB /  10240MiB |      3%      Default |
|                                         |                        |                  N/A |
+-----------------------------------------+------------------------+----------------------+
"""

_MIG_HEADER = """\
+---------------------------------------------------------------------------------------+
| MIG devices:                                                                          |
+------------------+--------------------------------+-----------+-----------------------+
| GPU  GI  CI  MIG |                   Memory-Usage |        Vol|      Shared           |
|      ID  ID  Dev |                     BAR1-Usage | SM     Unc| CE ENC DEC OFA JPG    |
|                  |                                |        ECC|                       |
|==================+================================+===========+=======================|
"""

_MIG_GPU_HEADER = """\
+---------------------------------------------------------------------------------------+
| NVIDIA-SMI 535.183.01             Driver Version: 535.183.01   CUDA Version: 12.2     |
|-----------------------------------------+----------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |
|                                         |                      |               MIG M. |
|=========================================+======================+======================|
"""

# One compute instance per GPU instance (A30 split into 1g.6gb devices).
MIG_ONE_CI_TABLE = (
    _MIG_GPU_HEADER
    + """\
|   0  NVIDIA A30                     Off | 00000000:0B:00.0 Off |                   On |
| N/A   47C    P0              32W / 165W |     50MiB / 24576MiB |     N/A      Default |
|                                         |                      |              Enabled |
+-----------------------------------------+----------------------+----------------------+

"""
    + _MIG_HEADER
    + """\
|  0    3   0   0  |              25MiB /  5952MiB  | 14      0 |  1   0    1    0    0 |
|                  |               0MiB /  8191MiB  |           |                       |
+------------------+--------------------------------+-----------+-----------------------+
|  0    4   0   1  |              12MiB /  5952MiB  | 14      0 |  1   0    1    0    0 |
|                  |               0MiB /  8191MiB  |           |                       |
+------------------+--------------------------------+-----------+-----------------------+
"""
)

# Two compute instances in GI 1 of an H200: each CI row repeats the GI's memory. The GPU row says
# 16,959 MiB used of 143,771; counting the CI rows would say 33,885 of 208,896.
MIG_TWO_CI_TABLE = (
    _MIG_GPU_HEADER
    + """\
|   0  NVIDIA H200                    On  | 00000000:1B:00.0 Off |                   On |
| N/A   33C    P0             118W / 700W |  16959MiB / 143771MiB |     N/A      Default |
|                                         |                      |              Enabled |
+-----------------------------------------+----------------------+----------------------+

"""
    + _MIG_HEADER
    + """\
|  0    1   0   0  |           16926MiB / 69632MiB  | 32      0 |  2   0    3    0    3 |
|                  |               2MiB / 65535MiB  |           |                       |
+------------------+--------------------------------+-----------+-----------------------+
|  0    1   1   1  |           16926MiB / 69632MiB  | 32      0 |  2   0    3    0    3 |
|                  |               2MiB / 65535MiB  |           |                       |
+------------------+--------------------------------+-----------+-----------------------+
|  0    2   0   2  |              33MiB / 69632MiB  | 60      0 |  3   0    3    0    3 |
|                  |               0MiB / 65535MiB  |           |                       |
+------------------+--------------------------------+-----------+-----------------------+
"""
)

# MIG rows whose GPU instances claim more memory than the GPU has: the GPU row is used.
MIG_OVERCLAIMING_TABLE = MIG_TWO_CI_TABLE.replace(
    "|  0    2   0   2  |              33MiB / 69632MiB  |",
    "|  0    2   0   2  |              33MiB / 96256MiB  |",
)

# A host with one plain GPU and one MIG GPU (510 layout, memory in the MIG GPU's row).
MIXED_MIG_TABLE = """\
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 510.47.03    Driver Version: 510.47.03    CUDA Version: 11.6     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|                               |                      |               MIG M. |
|===============================+======================+======================|
|   0  NVIDIA A100-SXM...  On   | 00000000:01:00.0 Off |                    0 |
| N/A   38C    P0   163W / 500W |  23100MiB / 81920MiB |     58%      Default |
|                               |                      |             Disabled |
+-------------------------------+----------------------+----------------------+
|   1  NVIDIA A100-SXM...  On   | 00000000:41:00.0 Off |                   On |
| N/A   38C    P0   178W / 500W |  24205MiB / 81920MiB |     N/A      Default |
|                               |                      |              Enabled |
+-------------------------------+----------------------+----------------------+

+-----------------------------------------------------------------------------+
| MIG devices:                                                                |
+------------------+----------------------+-----------+-----------------------+
| GPU  GI  CI  MIG |         Memory-Usage |        Vol|         Shared        |
|      ID  ID  Dev |           BAR1-Usage | SM     Unc| CE  ENC  DEC  OFA  JPG|
|                  |                      |        ECC|                       |
|==================+======================+===========+=======================|
|  1    3   0   0  |  14366MiB / 19968MiB | 28      0 |  2   0    1    0    0 |
|                  |      4MiB / 32767MiB |           |                       |
+------------------+----------------------+-----------+-----------------------+
|  1    5   0   1  |   9826MiB / 19968MiB | 28      0 |  2   0    1    0    0 |
|                  |      2MiB / 32767MiB |           |                       |
+------------------+----------------------+-----------+-----------------------+
"""

# MIG mode on, no instance created yet (570 layout of the MIG table).
MIG_NO_INSTANCES_TABLE = """\
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 570.124.06             Driver Version: 570.124.06     CUDA Version: 12.8     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
|   0  NVIDIA RTX PRO 6000 Blac...    On  |   00000000:17:00.0 Off |                  Off |
| 30%   31C    P8             18W /  300W |      46MiB /  97887MiB |     N/A      Default |
|                                         |                        |              Enabled |
+-----------------------------------------+------------------------+----------------------+

+-----------------------------------------------------------------------------------------+
| MIG devices:                                                                            |
+------------------+----------------------------------+-----------+-----------------------+
| GPU  GI  CI  MIG |              Shared Memory-Usage |        Vol|        Shared         |
|      ID  ID  Dev |                Shared BAR1-Usage | SM     Unc| CE ENC  DEC  OFA  JPG |
|                  |                                  |        ECC|                       |
|==================+==================================+===========+=======================|
|  No MIG devices found                                                                   |
+-----------------------------------------------------------------------------------------+
"""

HAMI_PID = "80:140225570006848"

# HAMi-core in the container: log lines before the table and between its rows (550 layout).
HAMI_CORE_TABLE = f"""\
[HAMI-core Info({HAMI_PID}:hook.c:300)]: loaded nvml libraries
[HAMI-core Msg({HAMI_PID}:libvgpu.c:836)]: Initializing.....
[HAMI-core Info({HAMI_PID}:device.c:102)]: driver version=12040
Fri May 31 04:40:47 2024
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 550.78                 Driver Version: 550.78         CUDA Version: 12.4     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
[HAMI-core Info({HAMI_PID}:multiprocess_memory_limit.c:260)]: get_gpu_memory_usage dev=0
|   0  NVIDIA A10                     Off |   00000000:00:07.0 Off |                    0 |
[HAMI-core Warn({HAMI_PID}:hook.c:367)]: NVML error at line 367: 3
| 0%   41C    P0             58W /  150W |    3120MiB /   8192MiB |     35%      Default |
|                                         |                        |                  N/A |
[HAMI-core ERROR (pid:80 thread=140225570006848 utils.c:155)]: shrreg lock timeout
+-----------------------------------------+------------------------+----------------------+
[HAMI-core Msg({HAMI_PID}:libvgpu.c:911)]: Initialized
"""

HAMI_QUERY_CSV = f"""\
[HAMI-core Msg({HAMI_PID}:libvgpu.c:836)]: Initializing.....
[4pdvGPU Warn({HAMI_PID}:libvgpu.c:120)]: recursive dlsym : nvmlInit_v2
0, {UUID_A}, 35, 3120, 8192
[HAMI-core Info({HAMI_PID}:multiprocess_memory_limit.c:267)]: dev=1 pid=71 host pid=71
1, {UUID_B}, 12, 1024, 8192
[4pdvGPU Msg({HAMI_PID}:libvgpu.c:844)]: Initialized
"""

# HAMi-core's miscount: used above the slice's total.
HAMI_ABSURD_TABLE = DRIVER_535_TABLE.replace(
    "|      1MiB / 24564MiB |", "| 17592186044134MiB / 24564MiB |"
)
HAMI_ABSURD_CSV = f"0, {UUID_A}, 0, 17592186044134, 24564\n1, {UUID_B}, 50, 6000, 8192\n"


def _collapse(text: str) -> str:
    return "\n".join(" ".join(line.split()) for line in text.splitlines())


# Cut and reflowed tables: the GPU row is there, its values are not readable.
CUT_TABLE = OLD_DRIVER_TABLE.split("| N/A   34C")[0]
WRAPPED_TABLE = "\n".join(
    line[i : i + 80] for line in NEW_DRIVER_TABLE.splitlines() for i in range(0, len(line), 80)
)
JOINED_ROWS_TABLE = OLD_DRIVER_TABLE.replace(
    "|                    0 |\n| N/A   34C", "|                    0 || N/A   34C"
)
HEADER_ONLY_TABLE = OLD_DRIVER_TABLE.split("|   0  Tesla T4")[0]

DRIVER_ERRORS = {
    "no driver": (
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure "
        "that the latest NVIDIA driver is installed and running.\n"
    ),
    "no devices": "No devices were found\n",
    "version mismatch": (
        "Failed to initialize NVML: Driver/library version mismatch\n"
        "NVML library version: 535.183\n"
    ),
    "device handle": "Unable to determine the device handle for GPU0000:A1:00.0: Unknown Error\n",
    "hami before no driver": (
        f"[HAMI-core Msg({HAMI_PID}:libvgpu.c:836)]: Initializing.....\n"
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure "
        "that the latest NVIDIA driver is installed and running.\n"
    ),
}


def _memory(parsed_readings: tuple[GpuReading, ...]) -> list[tuple[float | None, float | None]]:
    return [(r.mem_used_mib, r.mem_total_mib) for r in parsed_readings]


def test_driver_470_table_with_two_gpus_and_processes() -> None:
    parsed = parse_nvidia_smi(DRIVER_470_TABLE)
    assert parsed.problem is None
    assert parsed.readings == (
        GpuReading(0, None, 87.0, 18245.0, 24268.0, "NVIDIA GeForce ..."),
        GpuReading(1, None, 3.0, 1024.0, 32510.0, "Tesla V100-SXM2..."),
    )


def test_driver_535_table() -> None:
    parsed = parse_nvidia_smi(DRIVER_535_TABLE)
    assert parsed.readings == (GpuReading(0, None, 0.0, 1.0, 24564.0, "NVIDIA GeForce RTX 4090"),)


def test_driver_570_table_with_the_newer_header_rule() -> None:
    parsed = parse_nvidia_smi(DRIVER_570_TABLE)
    assert parsed.readings == (
        GpuReading(0, None, 63.0, 20480.0, 81559.0, "NVIDIA H100 80GB HBM3"),
    )


def test_windows_driver_model_is_not_part_of_the_name() -> None:
    parsed = parse_nvidia_smi(WINDOWS_WDDM_TCC_TABLE)
    assert parsed.problem is None
    assert parsed.readings == (
        GpuReading(0, None, 4.0, 1516.0, 8192.0, "NVIDIA GeForce RTX 2080 ..."),
        GpuReading(1, None, 55.0, 6144.0, 15360.0, "Tesla T4"),
    )
    newer = parse_nvidia_smi(WINDOWS_DRIVER_MODEL_TABLE)
    assert newer.readings == (GpuReading(0, None, 3.0, 665.0, 10240.0, "NVIDIA GeForce RTX 3080"),)


def test_mig_with_one_compute_instance_per_gpu_instance() -> None:
    parsed = parse_nvidia_smi(MIG_ONE_CI_TABLE)
    assert parsed.readings == (
        GpuReading(0, None, None, 25.0, 5952.0, "MIG GI 3 CI 0"),
        GpuReading(0, None, None, 12.0, 5952.0, "MIG GI 4 CI 0"),
    )


def test_mig_with_two_compute_instances_counts_their_gpu_instance_once() -> None:
    parsed = parse_nvidia_smi(MIG_TWO_CI_TABLE)
    assert parsed.problem is None
    assert parsed.readings == (
        GpuReading(0, None, None, 16926.0, 69632.0, "MIG GI 1 CI 0,1"),
        GpuReading(0, None, None, 33.0, 69632.0, "MIG GI 2 CI 0"),
    )
    assert sum(r.mem_used_mib or 0 for r in parsed.readings) == 16959.0  # the GPU row's figure
    assert sum(r.mem_total_mib or 0 for r in parsed.readings) <= 143771.0


def test_h200_mig_efficiency_is_85_not_169_percent() -> None:
    parsed = parse_nvidia_smi(MIG_TWO_CI_TABLE)
    result = PodExecResult("llm", "h200-infer-0", "server", parsed.readings, detail=parsed.detail)
    (usage,) = assess_real_usage([result], {("llm", "h200-infer-0"): 20000.0}, T)
    assert usage.mem_used_mib == 16959.0
    assert usage.mem_efficiency_percent == pytest.approx(84.795)
    assert f"{usage.mem_efficiency_percent:.0f} %" == "85 %"
    assert usage.usage_class == "high"  # 85 % is at or above the 80 % "high" threshold


def test_mig_devices_claiming_more_than_the_gpu_fall_back_to_the_gpu_row() -> None:
    parsed = parse_nvidia_smi(MIG_OVERCLAIMING_TABLE)
    assert parsed.readings == (GpuReading(0, None, None, 16959.0, 143771.0, "NVIDIA H200"),)
    assert parsed.notes == (
        "GPU 0: its MIG devices add up to 165,888 MiB, more than the GPU's 143,771 MiB; "
        "the GPU row is used instead",
    )


def test_plain_gpu_beside_a_mig_gpu_keeps_both() -> None:
    parsed = parse_nvidia_smi(MIXED_MIG_TABLE)
    assert parsed.readings == (
        GpuReading(0, None, 58.0, 23100.0, 81920.0, "NVIDIA A100-SXM..."),
        GpuReading(1, None, None, 14366.0, 19968.0, "MIG GI 3 CI 0"),
        GpuReading(1, None, None, 9826.0, 19968.0, "MIG GI 5 CI 0"),
    )


def test_mig_mode_without_instances_reads_the_gpu_row() -> None:
    parsed = parse_nvidia_smi(MIG_NO_INSTANCES_TABLE)
    assert parsed.readings == (
        GpuReading(0, None, None, 46.0, 97887.0, "NVIDIA RTX PRO 6000 Blac..."),
    )


def test_hami_core_lines_between_table_rows_are_skipped_and_counted() -> None:
    parsed = parse_nvidia_smi(HAMI_CORE_TABLE)
    assert parsed.problem is None
    assert parsed.readings == (GpuReading(0, None, 35.0, 3120.0, 8192.0, "NVIDIA A10"),)
    assert parsed.skipped_lines == 7
    assert parsed.notes == ("skipped 7 HAMi-core log lines",)


def test_hami_core_lines_before_and_between_csv_rows_are_skipped() -> None:
    parsed = parse_nvidia_smi(HAMI_QUERY_CSV)
    assert parsed.problem is None
    assert parsed.readings == (
        GpuReading(0, UUID_A, 35.0, 3120.0, 8192.0),
        GpuReading(1, UUID_B, 12.0, 1024.0, 8192.0),
    )
    assert parsed.skipped_lines == 4
    assert parsed.detail == "skipped 4 HAMi-core log lines"


def test_only_hami_core_lines_is_empty_output_not_garbage() -> None:
    parsed = parse_nvidia_smi(f"[HAMI-core Msg({HAMI_PID}:libvgpu.c:836)]: Initializing.....\n")
    assert (parsed.readings, parsed.cause) == ((), "empty")
    assert parsed.problem == "nvidia-smi printed nothing but 1 HAMi-core log line"


def test_absurd_memory_from_hami_core_is_flagged_not_used() -> None:
    table = parse_nvidia_smi(HAMI_ABSURD_TABLE)
    assert table.readings == (GpuReading(0, None, 0.0, None, 24564.0, "NVIDIA GeForce RTX 4090"),)
    assert table.notes == (
        "GPU 0: memory used 17,592,186,044,134 MiB is more than its 24,564 MiB total, an "
        "implausible reading (HAMi-core has miscounted like this); left out of the efficiency",
    )
    csv = parse_nvidia_smi(HAMI_ABSURD_CSV)
    assert _memory(csv.readings) == [(None, 24564.0), (6000.0, 8192.0)]
    result = PodExecResult("team-a", "p", "main", csv.readings, detail=csv.detail)
    (usage,) = assess_real_usage([result], {("team-a", "p"): 16384.0}, T)
    assert usage.mem_used_mib is None
    assert usage.mem_efficiency_percent is None
    assert usage.utilization_percent == 25.0
    assert usage.usage_class == "low / over-allocated"  # by utilisation, 25 %
    assert "no usable memory figure for GPU 0, so no memory total" in usage.detail


def test_assessment_never_uses_a_reading_above_its_total() -> None:
    # A reading cached before these checks existed still cannot reach an efficiency.
    reading = GpuReading(0, UUID_A, 10.0, 17592186044134.0, 24564.0)
    result = PodExecResult("team-a", "p", "main", (reading,))
    (usage,) = assess_real_usage([result], {("team-a", "p"): 24564.0}, T)
    assert usage.mem_efficiency_percent is None
    assert usage.readings[0].mem_used_mib is None
    assert usage.detail.startswith("GPU 0: memory used 17,592,186,044,134 MiB is more than its")


def test_collapsed_spaces_still_read() -> None:
    parsed = parse_nvidia_smi(_collapse(OLD_DRIVER_TABLE))
    assert parsed.readings == (GpuReading(0, None, 12.0, 4096.0, 15109.0, "Tesla T4"),)


@pytest.mark.parametrize(
    ("output", "problem"),
    [
        (
            CUT_TABLE,
            "could not read nvidia-smi's output (first unreadable line: "
            "'|   0  Tesla T4            Off  | 00000000:00:1E.0 Off |                    0 |', "
            "GPU 0's row is not followed by its memory row)",
        ),
        (
            WRAPPED_TABLE,
            "could not read nvidia-smi's output (first unreadable line: '|   0  NVIDIA A100-PCIE-"
            "40GB          On  |   00000000:17:00.0 Off |', 2 cells where this table has 3)",
        ),
        (
            JOINED_ROWS_TABLE,
            "could not read nvidia-smi's output (first unreadable line: "
            "'|   0  Tesla T4            Off  | 00000000:00:1E.0 Off |                    0 "
            "|| N/A   34C    P8     9W /  70W |   4096M', 7 cells where this table has 3)",
        ),
        (
            HEADER_ONLY_TABLE,
            "could not read nvidia-smi's output (first unreadable line: '|======================="
            "========+======================+======================|', the table ends without a "
            "GPU row)",
        ),
    ],
)
def test_cut_or_reflowed_table_is_unreadable_not_gpu_less(output: str, problem: str) -> None:
    parsed = parse_nvidia_smi(output)
    assert parsed.readings == ()
    assert parsed.cause == "unreadable"
    assert parsed.problem == problem


@pytest.mark.parametrize("name", sorted(DRIVER_ERRORS))
def test_driver_error_texts_give_no_reading(name: str) -> None:
    parsed = parse_nvidia_smi(DRIVER_ERRORS[name])
    assert parsed.readings == ()
    assert parsed.cause == ("no-devices" if name == "no devices" else "driver-error")
    first_error = next(
        line for line in DRIVER_ERRORS[name].splitlines() if not line.startswith("[HAMI")
    )
    assert parsed.problem == first_error


def test_driver_complaint_beside_a_readable_table_is_kept_as_a_note() -> None:
    text = DRIVER_ERRORS["device handle"] + DRIVER_535_TABLE
    parsed = parse_nvidia_smi(text)
    assert len(parsed.readings) == 1
    assert parsed.notes == (
        "nvidia-smi also said 'Unable to determine the device handle for GPU0000:A1:00.0: "
        "Unknown Error'",
    )


def test_csv_header_without_rows_is_unreadable() -> None:
    parsed = parse_nvidia_smi("index, uuid, utilization.gpu [%], memory.used [MiB]\n")
    assert parsed.cause == "unreadable"
    assert parsed.problem == (
        "could not read nvidia-smi's output (first unreadable line: 'index, uuid, "
        "utilization.gpu [%], memory.used [MiB]', a header without GPU rows)"
    )


def test_csv_row_with_an_unreadable_value_refuses_the_whole_output() -> None:
    parsed = parse_nvidia_smi(f"0, {UUID_A}, 41, 9870, 10240\n1, {UUID_B}, 41, lots, 10240\n")
    assert parsed.readings == ()
    assert parsed.problem == (
        f"could not read nvidia-smi's output (first unreadable line: '1, {UUID_B}, 41, lots, "
        "10240')"
    )


def test_oversized_output_and_lines_are_refused_unread() -> None:
    huge = parse_nvidia_smi("0" * (MAX_OUTPUT_CHARS + 1))
    assert huge.problem == (
        "could not read nvidia-smi's output: 1,048,577 characters, more than the 1,048,576 read"
    )
    long_line = "| " + "9" * 40_000 + "MiB / 1MiB | x |"
    output = OLD_DRIVER_TABLE.replace("| N/A   34C", long_line + "\n| N/A   34C")
    line_no = output.split("\n").index(long_line) + 1
    table = parse_nvidia_smi(output)
    assert table.cause == "unreadable"
    assert table.problem == (
        f"could not read nvidia-smi's output: line {line_no} is 40,018 characters long, more "
        f"than the 32,768 read per line (it starts {long_line[:60]!r})"
    )
    csv = parse_nvidia_smi(f"0, {UUID_A}, 41, {'1' * 5000}, 10240\n")
    assert csv.cause == "unreadable"  # read, and refused for its value, not its length
    assert "first unreadable line" in (csv.problem or "")


def test_every_field_query_of_a_current_driver_is_read() -> None:
    # The header and rows of nvidia-smi 590 asked for every --query-gpu property (212 of
    # them, with units in the header and the cells, and "[N/A]" for what the GPU lacks): a
    # 6,570-character header, rows of about 1,550.
    output = read_fixture("nvidia-smi/query-gpu-every-field-590.csv")
    assert len(output.split("\n")[0]) == 6570
    parsed = parse_nvidia_smi(output)
    assert parsed.problem is None
    assert parsed.readings == (
        GpuReading(0, "GPU-3b1f7c2a-9d4e-4f10-8a6b-2c5d7e9f0a11", 37.0, 20481.0, 81559.0),
        GpuReading(1, "GPU-8e2d4b6f-1a3c-4d5e-9f70-81a2b3c4d5e6", 0.0, 0.0, 81559.0),
    )


@pytest.mark.parametrize(
    "hostile",
    [
        "1" * 100_000 + "x",
        "| " + "1" * 100_000 + " / " + "1" * 100_000,
        "[" * 100_000,
        "index, " + "[" * 100_000,
        "0, GPU-a, " + " " * 100_000 + "1",
    ],
)
def test_hostile_output_is_refused_with_a_reason(hostile: str) -> None:
    parsed = parse_nvidia_smi(hostile)
    assert parsed.readings == ()
    assert parsed.cause == "unreadable"
    assert parsed.problem is not None and parsed.problem.startswith(UNREADABLE_PROBLEM)


# --- every output above, at once ----------------------------------------------------------------

READABLE_OUTPUTS = {
    "csv": f"0, {UUID_A}, 41, 9870, 10240\n",
    "csv with header and units": (
        "index, uuid, utilization.gpu [%], memory.used [MiB], memory.total [MiB]\n"
        f"0, {UUID_A}, 41 %, 9870 MiB, 10240 MiB\n"
    ),
    "csv [N/A]": f"0, {UUID_A}, [N/A], [N/A], 40960\n",
    "csv [Not Supported]": f"0, {UUID_A}, [Not Supported], [Not Supported], 40960\n",
    "csv hami-core": HAMI_QUERY_CSV,
    "csv absurd": HAMI_ABSURD_CSV,
    "340": ANCIENT_DRIVER_TABLE,
    "450": OLD_DRIVER_TABLE,
    "450 MIG": MIG_TABLE,
    "470": DRIVER_470_TABLE,
    "510 mixed MIG": MIXED_MIG_TABLE,
    "535": DRIVER_535_TABLE,
    "535 MIG one CI": MIG_ONE_CI_TABLE,
    "535 MIG two CIs": MIG_TWO_CI_TABLE,
    "535 MIG overclaiming": MIG_OVERCLAIMING_TABLE,
    "550": NEW_DRIVER_TABLE,
    "550 hami-core": HAMI_CORE_TABLE,
    "535 absurd": HAMI_ABSURD_TABLE,
    "570": DRIVER_570_TABLE,
    "570 MIG none": MIG_NO_INSTANCES_TABLE,
    "windows tcc/wddm": WINDOWS_WDDM_TCC_TABLE,
    "windows driver-model": WINDOWS_DRIVER_MODEL_TABLE,
    "collapsed": _collapse(OLD_DRIVER_TABLE),
}

# Each refusal and the words that name its cause.
REFUSED_OUTPUTS = {
    **{
        f"driver: {name}": (text, text.splitlines()[-1 if "HAMI" in text else 0])
        for name, text in DRIVER_ERRORS.items()
    },
    "empty": ("\n", "nvidia-smi printed nothing"),
    "hami-core only": (f"[HAMI-core Msg({HAMI_PID}:libvgpu.c:836)]: x\n", "printed nothing"),
    "garbage": ("sh: 1: something odd happened\n", "'sh: 1: something odd happened'"),
    "cut": (CUT_TABLE, "is not followed by its memory row"),
    "wrapped": (WRAPPED_TABLE, "2 cells where this table has 3"),
    "joined": (JOINED_ROWS_TABLE, "7 cells where this table has 3"),
    "header only": (HEADER_ONLY_TABLE, "the table ends without a GPU row"),
    "csv header only": ("index, uuid\n", "a header without GPU rows"),
    "huge": ("0" * (MAX_OUTPUT_CHARS + 1), "more than the 1,048,576 read"),
}


def test_every_output_reads_within_the_gpu_and_every_refusal_names_its_cause() -> None:
    for name, text in READABLE_OUTPUTS.items():
        parsed = parse_nvidia_smi(text)
        assert parsed.problem is None, name
        assert parsed.readings, name
        for reading in parsed.readings:
            used, total = reading.mem_used_mib, reading.mem_total_mib
            assert used is None or used <= IMPLAUSIBLE_MIB, name
            assert used is None or total is None or used <= total, name
        by_gpu: dict[int | None, float] = {}
        for reading in parsed.readings:
            by_gpu[reading.index] = by_gpu.get(reading.index, 0.0) + (reading.mem_used_mib or 0)
        assert all(total <= 143771.0 for total in by_gpu.values()), name
    for name, (text, cause) in REFUSED_OUTPUTS.items():
        parsed = parse_nvidia_smi(text)
        assert parsed.readings == (), name
        assert parsed.cause is not None, name
        assert parsed.problem is not None and cause in parsed.problem, (name, parsed.problem)


def test_a_number_longer_than_any_memory_figure_is_unreadable() -> None:
    digits = "9" * 25
    table = parse_nvidia_smi(
        DRIVER_535_TABLE.replace("|      1MiB / 24564MiB |", f"| {digits}MiB / 24564MiB |")
    )
    assert table.cause == "unreadable"
    assert table.problem is not None and table.problem.endswith(", no memory figure for GPU 0)")
    csv = parse_nvidia_smi(f"0, {UUID_A}, 1, {digits}, 24564\n")
    assert csv.cause == "unreadable"


def test_every_pattern_repeats_possessively() -> None:
    # Pod output is untrusted: a backtracking repeat could make one line cost quadratic time.
    import importlib

    import core.realusage as realusage

    # The standard library's own regex parser (private modules: no stubs).
    sre_constants = importlib.import_module("re._constants")
    sre_parser = importlib.import_module("re._parser")

    def repeats(tree: Any) -> list[str]:
        found: list[str] = []
        for op, arg in tree:
            if op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT):
                found.append(str(op))
            for part in arg if isinstance(arg, (tuple, list)) else ():
                if isinstance(part, sre_parser.SubPattern):
                    found += repeats(part)
                elif isinstance(part, list):
                    found += [r for sub in part for r in repeats(sub)]
        return found

    patterns = [v for v in vars(realusage).values() if isinstance(v, re.Pattern)]
    assert len(patterns) == 2
    for pattern in patterns:
        assert repeats(sre_parser.parse(pattern.pattern, pattern.flags)) == [], pattern.pattern


def test_a_gpu_reading_is_an_immutable_value() -> None:
    reading = GpuReading(0, "GPU-a", 41.0, 9000.0, 10240.0)
    assert reading == GpuReading(0, "GPU-a", 41.0, 9000.0, 10240.0, None)
    assert hash(reading) == hash(GpuReading(0, "GPU-a", 41.0, 9000.0, 10240.0))
    assert reading != GpuReading(1, "GPU-a", 41.0, 9000.0, 10240.0)
    changed = replace(reading, mem_used_mib=None, name="NVIDIA L4")
    assert (changed.index, changed.mem_used_mib, changed.name) == (0, None, "NVIDIA L4")
    assert reading.mem_used_mib == 9000.0
    with pytest.raises(AttributeError):
        reading.index = 1  # type: ignore[misc]
    assert repr(reading).startswith("GpuReading(index=0, uuid='GPU-a'")


def test_a_gpu_reading_copies_and_pickles() -> None:
    import copy
    import pickle

    reading = GpuReading(0, "GPU-a", 41.0, 9000.0, 10240.0, "NVIDIA L4")
    assert copy.deepcopy(reading) == reading
    assert pickle.loads(pickle.dumps(reading)) == reading
