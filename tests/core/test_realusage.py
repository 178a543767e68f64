"""nvidia-smi parsing (query CSV, plain tables of several driver branches) and SPEC 11 classes."""

from __future__ import annotations

import pytest

from core.model import GpuReading, PodExecResult
from core.realusage import QUERY_COMMAND, assess_real_usage, parse_nvidia_smi
from core.settings import Thresholds

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
