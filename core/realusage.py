"""Real GPU usage from ``nvidia-smi`` run inside pods, judged against what HAMi allocated.

Pure: text in, values out. Pod output is untrusted: it is read only up to ``MAX_OUTPUT_CHARS``,
lines longer than ``MAX_LINE_CHARS`` are refused unread, and the only regular expressions here are
anchored and possessive, so reading time grows linearly with the input.

``bot`` execs nvidia-smi in the pods that hold HAMi allocations and hands the output here.
Two output shapes exist in the wild:

* the query form ``nvidia-smi --query-gpu=index,uuid,utilization.gpu,memory.used,memory.total
  --format=csv,noheader,nounits`` (asked for first; header and units appear when a wrapper or an
  older driver ignores ``noheader``/``nounits``), with ``[N/A]``, ``N/A`` or ``[Not Supported]``
  for values a GPU or MIG slice does not report;
* the plain table of ``nvidia-smi`` (the fallback), whose layout changed between driver branches:
  column widths, ``MiB`` vs ``MB`` (drivers before ~350), model names truncated with ``...``,
  ``WDDM``/``TCC``/``MCDM`` in place of the persistence mode on Windows, and a separate
  "MIG devices" table on MIG-enabled GPUs, where every compute instance (CI) row repeats the
  memory of its GPU instance (GI).

Inside a HAMi slice, HAMi-core (libvgpu) intercepts NVML, so ``memory.total`` is the slice limit
and ``memory.used`` the container's own use; it also writes its own log lines
(``[HAMI-core Info(...)]``, ``[4pdvGPU Warn(...)]`` in older releases) anywhere in the output,
which are skipped and counted.
Nothing here raises on bad output: a driver error, an unreadable layout or garbage becomes
``NvidiaSmiParse.problem`` with its ``cause``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from core.model import GpuReading

# The fields asked for, in order; the exec layer builds its command from this tuple.
QUERY_FIELDS: tuple[str, ...] = ("index", "uuid", "utilization.gpu", "memory.used", "memory.total")
QUERY_COMMAND: tuple[str, ...] = (
    "nvidia-smi",
    "--query-gpu=" + ",".join(QUERY_FIELDS),
    "--format=csv,noheader,nounits",
)
TABLE_COMMAND: tuple[str, ...] = ("nvidia-smi",)

# nvidia-smi prints a few kB per GPU; HAMi-core at its debug level adds a few hundred lines.
MAX_OUTPUT_CHARS = 1_048_576
# nvidia-smi --query-gpu with every property (about 210 of them on drivers 590-610) writes a
# header of up to about 7,700 characters and rows of about 1,800; four times that, with margin.
MAX_LINE_CHARS = 32_768
# No GPU has 4 TiB of memory: above this a reading is a miscount even when no total is known.
IMPLAUSIBLE_MIB = 4 * 1024 * 1024

UNREADABLE_PROBLEM = "could not read nvidia-smi's output"
EMPTY_PROBLEM = "nvidia-smi printed nothing"

# Why nothing was read: the driver said so ("driver-error"), it found no GPU ("no-devices"), the
# output is not a layout read here ("unreadable"), or there was none ("empty").
ParseCause = Literal["driver-error", "no-devices", "unreadable", "empty"]

# Values nvidia-smi prints when a field has no value for this device (or for a MIG slice).
_NOT_AVAILABLE = frozenset(
    {
        "[n/a]",
        "n/a",
        "[not supported]",
        "not supported",
        "[unknown error]",
        "unknown error",
        "err!",
        "-",
        "",
    }
)

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
_NO_DEVICES_ERROR = "no devices were found"

# HAMi-core's log macros (src/include/log_utils.h): "[HAMI-core Info(pid:thread:file:line)]: ...",
# "[HAMI-core ERROR (pid:...)]: ..."; releases before the rename wrote "4pdvGPU" instead.
_HAMI_LOG_PREFIXES = tuple(
    f"[{tag} {level}"
    for tag in ("HAMI-core", "4pdvGPU")
    for level in ("Debug(", "Info(", "Warn(", "Msg(", "ERROR (", "ERROR(")
)

# The persistence-mode column on Linux, the driver-model column on Windows: the last word of the
# first cell of a GPU row, after the (possibly truncated) model name.
_MODE_WORDS = frozenset({"On", "Off", "N/A", "WDDM", "TCC", "MCDM"})

_UNITS = "MiB|MB|GiB|GB"
# A number as nvidia-smi prints one; 20 digits hold any count of MiB (HAMi-core's miscounts have
# 14), longer runs are not figures.
_NUMBER = r"(\d{1,20}+(?:\.\d{1,6}+)?+)"
# "9870MiB /  10240MiB": one memory cell, whole (fullmatch); every quantifier is possessive, so
# no run of digits or spaces is tried twice.
_MEM_PAIR = re.compile(rf"{_NUMBER}\s*+({_UNITS})\s*+/\s*+{_NUMBER}\s*+({_UNITS})")
# A CSV value: "41", "41 %", "10240 MiB", "1.5 GiB" (fullmatch).
_CSV_NUMBER = re.compile(rf"{_NUMBER}\s*+(%|{_UNITS})?+", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class NvidiaSmiParse:
    """The GPUs an nvidia-smi run reported, or why none could be read.

    ``notes`` say what was set aside on the way (HAMi-core log lines, implausible memory figures,
    driver complaints next to a readable table); ``skipped_lines`` counts the HAMi-core lines.
    """

    readings: tuple[GpuReading, ...]
    problem: str | None = None
    cause: ParseCause | None = None
    notes: tuple[str, ...] = ()
    skipped_lines: int = 0

    @property
    def detail(self) -> str:
        """The notes as one sentence list, for a pod's detail."""
        return "; ".join(self.notes)


def _refusal(cause: ParseCause, problem: str) -> NvidiaSmiParse:
    return NvidiaSmiParse((), problem, cause)


def _unreadable(line: str, why: str = "") -> NvidiaSmiParse:
    shown = line.strip()[:120]
    reason = f", {why}" if why else ""
    problem = f"{UNREADABLE_PROBLEM} (first unreadable line: {shown!r}{reason})"
    return _refusal("unreadable", problem)


def parse_nvidia_smi(output: str) -> NvidiaSmiParse:
    """Read query-form CSV or the plain table; never raises."""
    if len(output) > MAX_OUTPUT_CHARS:
        return _refusal(
            "unreadable",
            f"{UNREADABLE_PROBLEM}: {len(output):,} characters, more than the "
            f"{MAX_OUTPUT_CHARS:,} read",
        )
    lines = output.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    too_long = next((n for n, line in enumerate(lines, 1) if len(line) > MAX_LINE_CHARS), 0)
    if too_long:
        line = lines[too_long - 1]
        return _refusal(
            "unreadable",
            f"{UNREADABLE_PROBLEM}: line {too_long} is {len(line):,} characters long, more "
            f"than the {MAX_LINE_CHARS:,} read per line (it starts {line.strip()[:60]!r})",
        )
    content = [ln for ln in lines if ln.strip() and not _is_hami_log(ln)]
    skipped = sum(1 for ln in lines if _is_hami_log(ln))
    notes = [f"skipped {_hami_lines(skipped)}"] if skipped else []
    parsed = _parse_content(content, skipped)
    return replace(parsed, notes=(*notes, *parsed.notes), skipped_lines=skipped)


def _parse_content(content: list[str], skipped: int) -> NvidiaSmiParse:
    if not content:
        after = f" but {_hami_lines(skipped)}" if skipped else ""
        return _refusal("empty", f"{EMPTY_PROBLEM}{after}")
    error = _driver_error(content)
    if _looks_like_table(content):
        table = _TableReader().read(content)
        if table.readings:
            also = (f"nvidia-smi also said {error!r}",) if error is not None else ()
            return replace(table, notes=(*also, *table.notes))
        if error is not None:
            return _driver_refusal(error)
        return table
    if error is not None:
        return _driver_refusal(error)
    return _parse_csv(content)


def _hami_lines(count: int) -> str:
    return f"{count:,} HAMi-core log line{'' if count == 1 else 's'}"


def _is_hami_log(line: str) -> bool:
    return line.lstrip().startswith(_HAMI_LOG_PREFIXES)


def _driver_error(lines: Sequence[str]) -> str | None:
    for line in lines:
        lowered = line.strip().lower()
        if lowered.startswith(_DRIVER_ERRORS):
            return line.strip()[:300]
    return None


def _driver_refusal(error: str) -> NvidiaSmiParse:
    no_devices = error.lower().startswith(_NO_DEVICES_ERROR)
    cause: ParseCause = "no-devices" if no_devices else "driver-error"
    return _refusal(cause, error)


def _looks_like_table(lines: Sequence[str]) -> bool:
    has_rows = any(line.lstrip().startswith("|") for line in lines)
    return has_rows and any("NVIDIA-SMI" in line or "Memory-Usage" in line for line in lines)


# --- checks shared by both forms --------------------------------------------------------------


def checked_reading(reading: GpuReading, notes: list[str]) -> GpuReading:
    """The reading with an impossible memory figure left out (and said so in ``notes``)."""
    used, total = reading.mem_used_mib, reading.mem_total_mib
    label = reading_label(reading)
    if total is not None and total > IMPLAUSIBLE_MIB:
        notes.append(f"{label}: a memory total of {total:,.0f} MiB is implausible; left out")
        reading = replace(reading, mem_total_mib=None)
        total = None
    if used is None:
        return reading
    if used > IMPLAUSIBLE_MIB or (total is not None and used > total):
        limit = f"its {total:,.0f} MiB total" if total is not None else "any GPU's memory"
        notes.append(
            f"{label}: memory used {used:,.0f} MiB is more than {limit}, an implausible reading "
            "(HAMi-core has miscounted like this); left out of the efficiency"
        )
        return replace(reading, mem_used_mib=None)
    return reading


def reading_label(reading: GpuReading) -> str:
    where = f"GPU {reading.index}" if reading.index is not None else "a GPU"
    if reading.name and reading.name.startswith("MIG "):
        return f"{where} {reading.name}"
    return where


def _mem_pair(cell: str) -> tuple[float, float] | None:
    match = _MEM_PAIR.fullmatch(cell.strip())
    if match is None:
        return None
    return _to_mib(match.group(1), match.group(2)), _to_mib(match.group(3), match.group(4))


def _to_mib(amount: str, unit: str) -> float:
    value = float(amount)
    # Old drivers print "MB" for what is in fact MiB (nvidia-smi always counted in 2^20 bytes).
    return value * 1024 if unit.lower() in ("gib", "gb") else value


# --- the query form (CSV) ---------------------------------------------------------------------


def _csv_value(cell: str) -> tuple[bool, float | None]:
    """(readable, number) for a CSV cell: ``41``, ``41 %``, ``10240 MiB`` or an N/A marker."""
    cleaned = cell.strip()
    if cleaned.lower() in _NOT_AVAILABLE:
        return True, None
    match = _CSV_NUMBER.fullmatch(cleaned)
    if match is None:
        return False, None
    unit = (match.group(2) or "").lower()
    return True, _to_mib(match.group(1), unit) if unit else float(match.group(1))


def _header_columns(line: str) -> dict[str, int] | None:
    """Map query field -> column for a CSV header such as ``index, uuid, memory.used [MiB]``."""
    cells = [c.split("[", 1)[0].strip().lower() for c in line.split(",")]
    if not any(c in QUERY_FIELDS for c in cells):
        return None
    return {name: i for i, name in enumerate(cells) if name in QUERY_FIELDS}


def _parse_csv(lines: list[str]) -> NvidiaSmiParse:
    columns = {name: i for i, name in enumerate(QUERY_FIELDS)}
    header = _header_columns(lines[0])
    rows = lines
    if header is not None:
        columns, rows = header, lines[1:]
    if not rows:
        return _unreadable(lines[0], "a header without GPU rows")
    readings: list[GpuReading] = []
    notes: list[str] = []
    for line in rows:
        reading = _csv_reading(line, columns)
        if reading is None:
            return _unreadable(line)
        readings.append(checked_reading(reading, notes))
    return NvidiaSmiParse(tuple(readings), notes=tuple(notes))


def _csv_reading(line: str, columns: Mapping[str, int]) -> GpuReading | None:
    cells = [c.strip() for c in line.split(",")]
    if len(cells) < max(columns.values(), default=0) + 1:
        return None

    def cell(name: str) -> str | None:
        col = columns.get(name)
        return cells[col] if col is not None else None

    index_text, uuid_text = cell("index"), cell("uuid")
    if index_text is not None and not index_text.isdigit():
        return None
    if uuid_text is not None and not (
        uuid_text.startswith(("GPU-", "MIG-")) or uuid_text.lower() in _NOT_AVAILABLE
    ):
        return None
    numbers: dict[str, float | None] = {}
    for name in ("utilization.gpu", "memory.used", "memory.total"):
        text = cell(name)
        readable, numbers[name] = _csv_value(text) if text is not None else (True, None)
        if not readable:
            return None
    return GpuReading(
        index=int(index_text) if index_text is not None else None,
        uuid=uuid_text if uuid_text and uuid_text.lower() not in _NOT_AVAILABLE else None,
        utilization_percent=numbers["utilization.gpu"],
        mem_used_mib=numbers["memory.used"],
        mem_total_mib=numbers["memory.total"],
    )


# --- the plain table --------------------------------------------------------------------------


@dataclass(slots=True)
class _TableGpu:
    """One row of the GPU table, filled in from its memory line."""

    index: int
    name: str
    line: str
    has_memory_line: bool = False
    memory: tuple[float, float] | None = None
    utilization: float | None = None


@dataclass(slots=True)
class _GpuInstance:
    """One MIG GPU instance: its compute instances share (and each repeat) its memory."""

    gpu: int
    gi: int
    cis: list[int]
    memory: tuple[float, float] | None


class _Unreadable(Exception):
    def __init__(self, line: str, why: str = "") -> None:
        super().__init__(why)
        self.line, self.why = line, why


# The "|=====|" rule under a table's header starts its body.
_BODY_AFTER_RULE = {"header": "gpus", "mig-header": "mig"}


@dataclass(slots=True)
class _TableReader:
    """Reads the GPU table and the "MIG devices" table; refuses any row it cannot place."""

    gpus: list[_TableGpu] = field(default_factory=list)
    instances: dict[tuple[int, int], _GpuInstance] = field(default_factory=dict)
    section: str = "header"
    last_line: str = ""

    def read(self, lines: Sequence[str]) -> NvidiaSmiParse:
        try:
            for line in lines:
                self.last_line = line.strip()
                self._line(self.last_line)
            return self._readings()
        except _Unreadable as problem:
            return _unreadable(problem.line, problem.why)

    def _line(self, line: str) -> None:
        if line.startswith("|") and "MIG devices:" in line:
            self._end_gpu_section(line)
            self.section = "mig-header"
        elif line.startswith("|") and "Processes:" in line:
            self._end_gpu_section(line)
            self.section = "processes"
        elif set(line) <= set("+-=|"):  # borders and the rule under a header
            if "=" in line:
                self.section = _BODY_AFTER_RULE.get(self.section, self.section)
        elif self.section == "gpus":
            self._gpu_line(line)
        elif self.section == "mig":
            self._mig_line(line)

    def _end_gpu_section(self, line: str) -> None:
        if self.section == "gpus":
            self._check_last_gpu(line)

    def _check_last_gpu(self, line: str) -> None:
        last = self.gpus[-1] if self.gpus else None
        if last is not None and not last.has_memory_line:
            why = f"GPU {last.index}'s row is not followed by its memory row"
            raise _Unreadable(last.line, why)

    def _gpu_line(self, line: str) -> None:
        cells = _cells(line, 3)
        gpu = _gpu_row(cells[0], line)
        if gpu is not None:
            self._check_last_gpu(line)
            self.gpus.append(gpu)
            return
        current = self.gpus[-1] if self.gpus else None
        if current is None:
            raise _Unreadable(line, "not a GPU row")
        if current.has_memory_line:
            return  # the third row of a GPU (MIG mode, ECC): nothing read from it
        memory_cell = cells[1].strip()
        current.memory = _mem_pair(memory_cell)
        if current.memory is None and memory_cell.lower() not in _NOT_AVAILABLE:
            raise _Unreadable(line, f"no memory figure for GPU {current.index}")
        current.utilization = _percent(cells[2])
        current.has_memory_line = True

    def _mig_line(self, line: str) -> None:
        if "No MIG devices found" in line:
            return  # MIG mode on, no instance created yet: the GPU row stands alone
        cells = _cells(line, 4)
        ids = cells[0].split()
        if not ids:
            return  # the BAR1 row under a MIG device, or an empty continuation row
        if len(ids) != 4 or not all(i.isdigit() for i in ids):
            raise _Unreadable(line, "not a MIG device row")
        gpu, gi, ci = int(ids[0]), int(ids[1]), int(ids[2])
        memory_cell = cells[1].strip()
        memory = _mem_pair(memory_cell)
        if memory is None and memory_cell.lower() not in _NOT_AVAILABLE:
            raise _Unreadable(line, f"no memory figure for MIG GI {gi} CI {ci}")
        instance = self.instances.get((gpu, gi))
        if instance is None:
            self.instances[(gpu, gi)] = _GpuInstance(gpu, gi, [ci], memory)
            return
        instance.cis.append(ci)
        if instance.memory is None:
            instance.memory = memory

    def _readings(self) -> NvidiaSmiParse:
        if self.section == "gpus":
            self._check_last_gpu(self.gpus[-1].line if self.gpus else "")
        if not self.gpus:
            where = "the table ends" if self.section in ("header", "gpus") else "the table has"
            raise _Unreadable(self.last_line, f"{where} without a GPU row")
        listed = {gpu.index for gpu in self.gpus}
        for gpu_index, gi in self.instances:
            if gpu_index not in listed:
                raise _Unreadable(
                    self.last_line, f"MIG GI {gi} is on GPU {gpu_index}, which has no GPU row"
                )
        notes: list[str] = []
        readings: list[GpuReading] = []
        for gpu in self.gpus:
            instances = [i for i in self.instances.values() if i.gpu == gpu.index]
            readings.extend(_gpu_readings(gpu, instances, notes))
        return NvidiaSmiParse(tuple(readings), notes=tuple(notes))


def _cells(line: str, count: int) -> list[str]:
    """The cells of a table row, or unreadable when the row is cut, joined or not a row."""
    if not (line.startswith("|") and line.endswith("|") and len(line) > 1):
        raise _Unreadable(line, "not a table row")
    cells = line[1:-1].split("|")
    if len(cells) != count:
        raise _Unreadable(line, f"{len(cells)} cells where this table has {count}")
    return cells


def _gpu_row(cell: str, line: str) -> _TableGpu | None:
    words = cell.split()
    if len(words) < 3 or not words[0].isdigit() or words[-1] not in _MODE_WORDS:
        return None
    return _TableGpu(int(words[0]), " ".join(words[1:-1]), line)


def _percent(cell: str) -> float | None:
    words = cell.split()
    first = words[0] if words else ""
    number = first[:-1] if first.endswith("%") else ""
    return float(number) if number.isdigit() else None


def _gpu_readings(
    gpu: _TableGpu, instances: list[_GpuInstance], notes: list[str]
) -> list[GpuReading]:
    """One reading per GPU, or per MIG GPU instance (each counted once, whatever its CIs)."""
    used, total = gpu.memory if gpu.memory is not None else (None, None)
    whole = checked_reading(
        GpuReading(gpu.index, None, gpu.utilization, used, total, gpu.name), notes
    )
    if not instances:
        return [whole]
    slices = [_instance_reading(gpu.index, instance) for instance in instances]
    capacity = whole.mem_total_mib
    if capacity is not None:
        slice_total = sum(s.mem_total_mib or 0.0 for s in slices)
        slice_used = sum(s.mem_used_mib or 0.0 for s in slices)
        if slice_total > capacity or slice_used > capacity:
            notes.append(
                f"GPU {gpu.index}: its MIG devices add up to {max(slice_total, slice_used):,.0f} "
                f"MiB, more than the GPU's {capacity:,.0f} MiB; the GPU row is used instead"
            )
            return [replace(whole, utilization_percent=None)]
    return [checked_reading(s, notes) for s in slices]


def _instance_reading(gpu_index: int, instance: _GpuInstance) -> GpuReading:
    used, total = instance.memory if instance.memory is not None else (None, None)
    cis = ",".join(str(ci) for ci in instance.cis)
    return GpuReading(gpu_index, None, None, used, total, f"MIG GI {instance.gi} CI {cis}")
