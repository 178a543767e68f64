"""Job shapes for ``fit``: what a person types, read into HAMi's resource requests.

A shape is one container's GPU request, in HAMi's resource names: ``nvidia.com/gpu`` (how many
GPUs, all on one node), ``nvidia.com/gpucores`` (percent of each GPU's cores),
``nvidia.com/gpumem`` (MiB of each GPU's memory) or ``nvidia.com/gpumem-percentage``, and the
GPU model (HAMi's ``nvidia.com/use-gputype`` matches part of the device type). Accepted forms::

    8xH100                  8 whole H100 GPUs
    4                       4 whole GPUs of any model
    2x50c/20GiB             2 GPUs, 50 cores and 20 GiB each
    1xA100 memory=30GiB     1 A100 GPU with 30 GiB (cores not given: 0, HAMi's default)
    2 cores=50 gpumem-percentage=25

Defaults follow HAMi's device config (``nvidia.defaultCores: 0``, ``nvidia.defaultMem: 0``
meaning all of the device's memory). A shape with neither cores nor memory is a whole GPU: 100
cores and the device's whole memory, with no other task on it, as HAMi allocates it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from core.errors import InputError

SHAPE_EXAMPLES = ("8xH100", "2x50c/20GiB", "1xA100 memory=30GiB", "4 gpumem-percentage=50")
MAX_GPUS = 1024  # far above any node; a typo such as 80 x H100 still reads as a count

_COMPACT = re.compile(r"^(?:(\d++)\s*+[x×*])?+(.*+)$", re.IGNORECASE)
_COUNT_ONLY = re.compile(r"^\d++$")
_CORES = re.compile(r"^(\d++(?:\.\d++)?+)c(?:ores?)?$", re.IGNORECASE)
_NUMBER = re.compile(r"^(\d++(?:\.\d++)?+)$")
_MEMORY = re.compile(r"^(\d++(?:\.\d++)?+)\s*+(mib|mi|m|gib|gi|g|tib|ti|t)?$", re.IGNORECASE)
_PERCENT = re.compile(r"^(\d++(?:\.\d++)?+)%$")
_MIB_PER_UNIT = {"m": 1, "g": 1024, "t": 1024 * 1024}

_COUNT_KEYS = ("gpus", "gpu", "count", "nvidia.com/gpu")
_CORE_KEYS = ("cores", "core", "gpucores", "nvidia.com/gpucores")
_MEMORY_KEYS = ("memory", "mem", "gpumem", "nvidia.com/gpumem")
_PERCENT_KEYS = ("gpumem-percentage", "mem-percentage", "nvidia.com/gpumem-percentage")
_MODEL_KEYS = ("model", "type", "gputype", "use-gputype", "nvidia.com/use-gputype")


@dataclass(frozen=True, slots=True)
class Shape:
    """One container's request. ``None``: not given (HAMi's default applies)."""

    text: str
    gpus: int = 1
    cores: int | None = None
    mem_mib: int | None = None
    mem_percent: int | None = None
    model: str | None = None

    @property
    def whole_gpu(self) -> bool:
        """Neither cores nor memory given: whole GPUs, as HAMi gives them."""
        return self.cores is None and self.mem_mib is None and self.mem_percent is None

    @property
    def cores_per_gpu(self) -> int:
        if self.whole_gpu:
            return 100
        return self.cores if self.cores is not None else 0

    def mem_needed_mib(self, device_mem_mib: float) -> float:
        """Memory one slice takes on a device with ``device_mem_mib`` (HAMi's ``memreq``)."""
        if self.mem_mib is not None:
            return float(self.mem_mib)
        percent = self.mem_percent if self.mem_percent is not None else 100
        # HAMi computes Totalmem * percentage / 100 in integers.
        return float(int(device_mem_mib) * percent // 100)

    def compact(self, gpus: int | None = None) -> str:
        """The shape written back in its short form (with ``gpus`` GPUs): ``4x50c/20GiB``."""
        parts = [self.model] if self.model else []
        if self.cores is not None:
            parts.append(f"{self.cores}c")
        if self.mem_mib is not None:
            size = self.mem_mib
            parts.append(f"{size // 1024}GiB" if size % 1024 == 0 else f"{size}MiB")
        count = gpus if gpus is not None else self.gpus
        text = f"{count}x" + "/".join(parts) if parts else str(count)
        if self.mem_percent is not None:
            text += f" gpumem-percentage={self.mem_percent}"
        return text

    def describe(self) -> str:
        """``8 x H100, whole GPUs`` / ``2 GPUs, 50 cores and 20.0 GiB each``."""
        count = (
            f"{self.gpus:,} x {self.model}"
            if self.model
            else (f"{self.gpus:,} GPU" + ("s" if self.gpus != 1 else ""))
        )
        if self.whole_gpu:
            return f"{count}, whole GPU" + ("s" if self.gpus != 1 else "")
        if self.mem_mib is not None:
            memory = _memory_text(self.mem_mib)
        elif self.mem_percent is not None:
            memory = f"{self.mem_percent}% of the memory"
        else:
            memory = "all the memory"
        return f"{count}, {self.cores_per_gpu} cores and {memory} each"


def _memory_text(mib: float) -> str:
    return f"{mib / 1024:,.1f} GiB" if mib >= 1024 else f"{mib:,.0f} MiB"


def _problem(text: str, what: str) -> InputError:
    examples = ", ".join(f"`{e}`" for e in SHAPE_EXAMPLES)
    return InputError(f"Cannot read the shape '{text}': {what}. Examples: {examples}.")


def parse_shape(text: str) -> Shape:
    """``text`` as a ``Shape``; raises ``InputError`` saying which part is wrong and how."""
    words = text.split()
    if not words:
        raise _problem(text, "it is empty; give a GPU count, e.g. 8xH100")
    fields: dict[str, object] = {}
    for index, word in enumerate(words):
        key, sep, value = word.partition("=")
        if sep:
            _keyed(text, key.lower(), value, fields)
        elif index == 0:
            _compact(text, word, fields)
        else:
            raise _problem(
                text,
                f"'{word}' is not key=value (after the first word, give "
                "e.g. memory=30GiB or cores=50)",
            )
    if "mem_mib" in fields and "mem_percent" in fields:
        raise _problem(text, "give memory in MiB/GiB or as gpumem-percentage, not both")
    return Shape(text=" ".join(words), **fields)  # type: ignore[arg-type]


def _set(text: str, fields: dict[str, object], name: str, value: object, what: str) -> None:
    if name in fields:
        raise _problem(text, f"{what} is given twice")
    fields[name] = value


def _compact(text: str, word: str, fields: dict[str, object]) -> None:
    """``8xH100``, ``4``, ``2x50c/20GiB``, ``1xA100-80GB/40GiB``."""
    if _COUNT_ONLY.match(word):
        _set(text, fields, "gpus", _count(text, word), "the GPU count")
        return
    match = _COMPACT.match(word)
    count, rest = (match.group(1), match.group(2)) if match else (None, word)
    if count is not None:
        _set(text, fields, "gpus", _count(text, count), "the GPU count")
    for piece in rest.split("/") if rest else ():
        if not piece:
            raise _problem(text, "an empty part between '/'; write e.g. 2x50c/20GiB")
        cores = _CORES.match(piece)
        if cores:
            _set(text, fields, "cores", _cores(text, cores.group(1)), "cores")
        elif _PERCENT.match(piece):
            raise _problem(
                text,
                f"'{piece}' could be cores or memory; write 50c for cores or "
                "gpumem-percentage=50 for memory",
            )
        elif _MEMORY.match(piece) and not _NUMBER.match(piece):
            _set(text, fields, "mem_mib", _memory(text, piece), "memory")
        elif _NUMBER.match(piece):
            raise _problem(
                text,
                f"'{piece}' has no unit; write {piece}c for cores or "
                f"{piece}GiB / {piece}MiB for memory",
            )
        else:
            _set(text, fields, "model", piece, "the GPU model")


def _keyed(text: str, key: str, value: str, fields: dict[str, object]) -> None:
    if not value:
        raise _problem(text, f"'{key}=' has no value")
    if key in _COUNT_KEYS:
        _set(text, fields, "gpus", _count(text, value), "the GPU count")
    elif key in _CORE_KEYS:
        _set(text, fields, "cores", _cores(text, value.rstrip("%cC")), "cores")
    elif key in _MEMORY_KEYS:
        percent = _PERCENT.match(value)
        if percent:
            _set(text, fields, "mem_percent", _percent(text, percent.group(1)), "memory")
        else:
            _set(text, fields, "mem_mib", _memory(text, value), "memory")
    elif key in _PERCENT_KEYS:
        _set(text, fields, "mem_percent", _percent(text, value.rstrip("%")), "memory")
    elif key in _MODEL_KEYS:
        _set(text, fields, "model", value, "the GPU model")
    else:
        raise _problem(
            text, f"unknown key '{key}' (known: gpus, cores, memory, gpumem-percentage, model)"
        )


def _count(text: str, value: str) -> int:
    if not _COUNT_ONLY.match(value) or not 1 <= int(value) <= MAX_GPUS:
        raise _problem(
            text, f"the GPU count '{value}' must be a whole number from 1 to {MAX_GPUS:,}"
        )
    return int(value)


def _cores(text: str, value: str) -> int:
    if not _COUNT_ONLY.match(value) or not 0 <= int(value) <= 100:
        raise _problem(
            text,
            f"cores '{value}' must be a whole percent of one GPU, 0 to 100 "
            "(HAMi's nvidia.com/gpucores)",
        )
    return int(value)


def _percent(text: str, value: str) -> int:
    if not _COUNT_ONLY.match(value) or not 1 <= int(value) <= 100:
        raise _problem(text, f"gpumem-percentage '{value}' must be a whole number from 1 to 100")
    return int(value)


def _memory(text: str, value: str) -> int:
    match = _MEMORY.match(value)
    if match is None:
        raise _problem(
            text,
            f"memory '{value}' is not a size; write e.g. 20GiB or 20480MiB "
            "(a bare number is MiB, as HAMi's nvidia.com/gpumem)",
        )
    unit = (match.group(2) or "m")[0].lower()
    mib = math.ceil(float(match.group(1)) * _MIB_PER_UNIT[unit])
    if mib <= 0:
        raise _problem(text, f"memory '{value}' must be more than 0")
    return mib
