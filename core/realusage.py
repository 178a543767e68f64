"""Real GPU usage from ``nvidia-smi`` run inside pods (SPEC.md section 11).

Pure: text in, values out.

``bot`` execs nvidia-smi in the pods that hold HAMi allocations and hands the output here.
Two output shapes exist in the wild:

* the query form ``nvidia-smi --query-gpu=index,uuid,utilization.gpu,memory.used,memory.total
  --format=csv,noheader,nounits`` (asked for first; header and units appear when a wrapper or an
  older driver ignores ``noheader``/``nounits``), with ``[N/A]``, ``N/A`` or ``[Not Supported]``
  for values a GPU or MIG slice does not report;
* the plain table of ``nvidia-smi`` (the fallback), whose layout changed between driver branches:
  column widths, ``MiB`` vs ``MB`` (drivers before ~350), model names truncated with ``...``,
  and a separate "MIG devices" table on MIG-enabled GPUs.

Inside a HAMi slice, HAMi-core intercepts NVML, so ``memory.total`` is the slice limit and
``memory.used`` the container's own use. Nothing here raises on bad output: a driver error or
garbage becomes ``NvidiaSmiParse.problem``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from core.model import GpuReading, PodExecResult, PodRealUsage, UsageClass
from core.settings import Thresholds

# The fields asked for, in order; the exec layer builds its command from this tuple.
QUERY_FIELDS: tuple[str, ...] = ("index", "uuid", "utilization.gpu", "memory.used", "memory.total")
QUERY_COMMAND: tuple[str, ...] = (
    "nvidia-smi",
    "--query-gpu=" + ",".join(QUERY_FIELDS),
    "--format=csv,noheader,nounits",
)
TABLE_COMMAND: tuple[str, ...] = ("nvidia-smi",)

# Values nvidia-smi prints when a field has no value for this device (or for a MIG slice).
_NOT_AVAILABLE = {"[n/a]", "n/a", "[not supported]", "not supported", "[unknown error]", "-", ""}

# Lines nvidia-smi prints instead of data. Matched case-insensitively at the start of a line.
_DRIVER_ERRORS = (
    "nvidia-smi has failed",
    "failed to initialize nvml",
    "unable to determine the device handle",
    "no devices were found",
    "nvml: ",
    "error: ",
    "couldn't find libnvidia-ml",
)
NO_DEVICES_PROBLEM = "nvidia-smi listed no GPUs"

_MEM_PAIR = re.compile(r"(\d+(?:\.\d+)?)\s*(MiB|MB|GiB|GB)\s*/\s*(\d+(?:\.\d+)?)\s*(MiB|MB|GiB|GB)")
_UTIL = re.compile(r"(\d+(?:\.\d+)?)\s*%|\bN/A\b")
_TABLE_GPU_LINE = re.compile(r"^\|\s*(\d+)\s+(.*?)\s+(On|Off)\s*\|", re.IGNORECASE)
_MIG_ROW = re.compile(r"^\|\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\|")


@dataclass(frozen=True, slots=True)
class NvidiaSmiParse:
    """The GPUs an nvidia-smi run reported, or why none could be read."""

    readings: tuple[GpuReading, ...]
    problem: str | None = None


def parse_nvidia_smi(output: str) -> NvidiaSmiParse:
    """Read query-form CSV or the plain table; never raises."""
    text = output.replace("\r\n", "\n").replace("\r", "\n").strip()
    if not text:
        return NvidiaSmiParse((), f"{NO_DEVICES_PROBLEM} (empty output)")
    error = _driver_error(text)
    if "|" in text and ("NVIDIA-SMI" in text or "Memory-Usage" in text):
        table = _parse_table(text)
        if table.readings or error is None:
            return table
        return NvidiaSmiParse((), error)
    if error is not None:
        return NvidiaSmiParse((), error)
    return _parse_csv(text)


def _driver_error(text: str) -> str | None:
    for line in text.splitlines():
        lowered = line.strip().lower()
        if any(lowered.startswith(marker) for marker in _DRIVER_ERRORS):
            return line.strip()
    return None


def _value(cell: str) -> float | None:
    """A number from a CSV cell, tolerating units (``41 %``, ``10240 MiB``) and N/A markers."""
    cleaned = cell.strip()
    if cleaned.lower() in _NOT_AVAILABLE:
        return None
    match = re.match(r"^(-?\d+(?:\.\d+)?)\s*(%|MiB|MB|GiB|GB)?$", cleaned, re.IGNORECASE)
    if match is None:
        return None
    number = float(match.group(1))
    unit = (match.group(2) or "").lower()
    return number * 1024 if unit in ("gib", "gb") else number


def _header_columns(line: str) -> dict[str, int] | None:
    """Map query field -> column for a CSV header such as ``index, uuid, memory.used [MiB]``."""
    cells = [re.sub(r"\s*\[.*\]$", "", c.strip()).lower() for c in line.split(",")]
    if not any(c in QUERY_FIELDS for c in cells):
        return None
    return {name: i for i, name in enumerate(cells) if name in QUERY_FIELDS}


def _parse_csv(text: str) -> NvidiaSmiParse:
    lines = [ln for ln in text.split("\n") if ln.strip()]
    columns = {name: i for i, name in enumerate(QUERY_FIELDS)}
    header = _header_columns(lines[0])
    if header is not None:
        columns = header
        lines = lines[1:]
    readings: list[GpuReading] = []
    for number, line in enumerate(lines, start=1):
        cells = [c.strip() for c in line.split(",")]
        if len(cells) < len(columns) or not _looks_like_row(cells, columns):
            first = lines[0][:120]
            return NvidiaSmiParse(
                tuple(readings),
                f"unrecognised nvidia-smi output on data line {number}: {first!r}",
            )
        readings.append(_csv_reading(cells, columns))
    if not readings:
        return NvidiaSmiParse((), f"{NO_DEVICES_PROBLEM} (only a header)")
    return NvidiaSmiParse(tuple(readings))


def _looks_like_row(cells: list[str], columns: Mapping[str, int]) -> bool:
    index_col = columns.get("index")
    if index_col is not None and not cells[index_col].isdigit():
        return False
    uuid_col = columns.get("uuid")
    if uuid_col is not None:
        uuid = cells[uuid_col]
        if not (uuid.startswith(("GPU-", "MIG-")) or uuid.lower() in _NOT_AVAILABLE):
            return False
    return True


def _csv_reading(cells: list[str], columns: Mapping[str, int]) -> GpuReading:
    def cell(name: str) -> str | None:
        col = columns.get(name)
        return cells[col] if col is not None and col < len(cells) else None

    index_text = cell("index")
    uuid_text = cell("uuid")
    util = cell("utilization.gpu")
    used = cell("memory.used")
    total = cell("memory.total")
    return GpuReading(
        index=int(index_text) if index_text is not None and index_text.isdigit() else None,
        uuid=uuid_text if uuid_text and uuid_text.lower() not in _NOT_AVAILABLE else None,
        utilization_percent=_value(util) if util is not None else None,
        mem_used_mib=_mib(used),
        mem_total_mib=_mib(total),
    )


def _mib(cell: str | None) -> float | None:
    # The query form reports MiB (``nounits``) whatever the header says; GiB only in odd wrappers.
    return _value(cell) if cell is not None else None


def _to_mib(amount: str, unit: str) -> float:
    value = float(amount)
    # Old drivers print "MB" for what is in fact MiB (nvidia-smi always counted in 2^20 bytes).
    return value * 1024 if unit.lower() in ("gib", "gb") else value


def _parse_table(text: str) -> NvidiaSmiParse:
    lines = text.split("\n")
    gpu_rows: list[GpuReading] = []
    mig_rows: list[GpuReading] = []
    section = "gpus"
    pending: tuple[int, str] | None = None
    for line in lines:
        if "MIG devices" in line:
            section = "mig"
            continue
        if "Processes" in line:
            section = "processes"
            continue
        if section == "gpus":
            gpu = _TABLE_GPU_LINE.match(line)
            if gpu is not None:
                pending = (int(gpu.group(1)), gpu.group(2).strip())
                continue
            mem = _MEM_PAIR.search(line)
            if pending is not None and mem is not None:
                util = _util_after(line, mem.end())
                gpu_rows.append(
                    GpuReading(
                        index=pending[0],
                        uuid=None,
                        utilization_percent=util,
                        mem_used_mib=_to_mib(mem.group(1), mem.group(2)),
                        mem_total_mib=_to_mib(mem.group(3), mem.group(4)),
                        name=pending[1],
                    )
                )
                pending = None
            elif pending is not None and "N/A" in _cell(line, 2):
                # A MIG-enabled GPU may print N/A for memory in its row; the MIG table has values.
                gpu_rows.append(GpuReading(pending[0], None, None, None, None, pending[1]))
                pending = None
        elif section == "mig":
            row = _MIG_ROW.match(line)
            mem = _MEM_PAIR.search(line)
            if row is not None and mem is not None:
                gi, ci = row.group(2), row.group(3)
                mig_rows.append(
                    GpuReading(
                        index=int(row.group(1)),
                        uuid=None,
                        utilization_percent=None,
                        mem_used_mib=_to_mib(mem.group(1), mem.group(2)),
                        mem_total_mib=_to_mib(mem.group(3), mem.group(4)),
                        name=f"MIG GI {gi} CI {ci}",
                    )
                )
    if mig_rows:
        # On a MIG GPU the slice rows are what this container can use.
        return NvidiaSmiParse(tuple(mig_rows))
    if not gpu_rows:
        return NvidiaSmiParse((), f"{NO_DEVICES_PROBLEM} (table without GPU rows)")
    return NvidiaSmiParse(tuple(gpu_rows))


def _cell(line: str, position: int) -> str:
    cells = line.split("|")
    return cells[position] if position < len(cells) else ""


def _util_after(line: str, start: int) -> float | None:
    match = _UTIL.search(line, start)
    if match is None or match.group(1) is None:
        return None
    return float(match.group(1))


# --- assessment (SPEC.md section 11) ----------------------------------------------------------


def assess_real_usage(
    results: Sequence[PodExecResult],
    allocated_mem_mib: Mapping[tuple[str, str], float],
    thresholds: Thresholds,
) -> tuple[PodRealUsage, ...]:
    """Classify each pod's point-in-time use against its HAMi allocation.

    ``allocated_mem_mib`` maps (namespace, pod) to the MiB HAMi allocated to that pod over all its
    devices. Utilisation is the mean over the GPUs the pod sees; memory used is their sum.
    Memory efficiency = used / allocated x 100. Classes (SPEC.md 11): **idle** when utilisation is
    below ``idle_utilization_percent`` and memory used below ``idle_mem_percent`` of the allocation
    (checked first); otherwise by memory efficiency: **high** at or above
    ``high_utilization_percent``, **normal** from ``normal_utilization_percent``, else
    **low / over-allocated**. Without an allocation figure (no efficiency), utilisation is used.
    Results are sorted by namespace and pod.
    """
    assessed = [_assess_one(r, allocated_mem_mib, thresholds) for r in results]
    return tuple(sorted(assessed, key=lambda u: (u.namespace, u.pod)))


def _assess_one(
    result: PodExecResult,
    allocated_mem_mib: Mapping[tuple[str, str], float],
    thresholds: Thresholds,
) -> PodRealUsage:
    allocated = allocated_mem_mib.get((result.namespace, result.pod), 0.0)
    utils = [r.utilization_percent for r in result.readings if r.utilization_percent is not None]
    used = [r.mem_used_mib for r in result.readings if r.mem_used_mib is not None]
    utilization = sum(utils) / len(utils) if utils else None
    mem_used = sum(used) if used else None
    efficiency = mem_used / allocated * 100 if mem_used is not None and allocated > 0 else None
    usage_class: UsageClass | None = None
    detail = result.detail
    if result.failure is None:
        usage_class = _classify(utilization, efficiency, thresholds)
        if not result.readings and not detail:
            detail = "nvidia-smi listed no GPUs; inside a HAMi slice this can be normal"
        elif allocated <= 0 and not detail:
            detail = "no HAMi memory allocation known for this pod, so no efficiency"
    return PodRealUsage(
        namespace=result.namespace,
        pod=result.pod,
        container=result.container,
        readings=result.readings,
        allocated_mem_mib=allocated,
        utilization_percent=utilization,
        mem_used_mib=mem_used,
        mem_efficiency_percent=efficiency,
        usage_class=usage_class,
        failure=result.failure,
        detail=detail,
    )


def _classify(
    utilization: float | None, efficiency: float | None, t: Thresholds
) -> UsageClass | None:
    if (
        utilization is not None
        and efficiency is not None
        and utilization < t.idle_utilization_percent
        and efficiency < t.idle_mem_percent
    ):
        return "idle"
    score = efficiency if efficiency is not None else utilization
    if score is None:
        return None
    if score >= t.high_utilization_percent:
        return "high"
    if score >= t.normal_utilization_percent:
        return "normal"
    return "low / over-allocated"
