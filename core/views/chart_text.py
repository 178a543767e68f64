"""How the charts write numbers and names: one style for every label.

Counts and cores with thousands separators, cores as "cores" (100 = one GPU), memory totals in
GiB or TiB with three significant digits, memory of one GPU or pod in GiB with one decimal (MiB
below 1 GiB), percentages with one decimal. Figures the input does not give are "not known",
never 0.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Final

from core.views.visible_text import visible

NOT_KNOWN: Final = "not known"
MAX_NAME_CHARS: Final = 22
_MIB_PER_GIB: Final = 1024.0
_GIB_PER_TIB: Final = 1024.0


def count(value: int | None, noun: str = "", plural: str | None = None) -> str:
    """``1,204 GPUs``; ``not known`` for None."""
    if value is None:
        return f"{noun} {NOT_KNOWN}".strip() if noun else NOT_KNOWN
    if not noun:
        return f"{value:,}"
    word = noun if value == 1 else (plural or noun + "s")
    return f"{value:,} {word}"


def cores(value: float) -> str:
    """``9,530 cores`` (HAMi's unit: 100 cores are one whole GPU)."""
    return f"{value:,.0f} cores"


def percent(value: float | None) -> str:
    return NOT_KNOWN if value is None else f"{value:.1f}%"


def three_digits(value: float) -> str:
    """``1.21``, ``12.3``, ``123``, ``1,230``: three significant digits."""
    if value == 0:
        return "0"
    digits = math.floor(math.log10(abs(value)))
    if digits >= 2:
        rounded = round(value, -(digits - 2))
        return f"{rounded:,.0f}"
    return f"{value:.{2 - digits}f}"


def memory_total(mib: float | None) -> str:
    """A sum over GPUs or pods: ``40.0 GiB``, ``1.21 TiB``, ``189 TiB``."""
    if mib is None:
        return NOT_KNOWN
    gib = mib / _MIB_PER_GIB
    if gib >= _GIB_PER_TIB:
        return f"{three_digits(gib / _GIB_PER_TIB)} TiB"
    return f"{three_digits(gib)} GiB"


def memory_each(mib: float | None) -> str:
    """One GPU's or pod's memory: ``39.5 GiB``, ``512 MiB`` below 1 GiB."""
    if mib is None:
        return NOT_KNOWN
    if mib < _MIB_PER_GIB:
        return f"{mib:,.0f} MiB"
    return f"{mib / _MIB_PER_GIB:,.1f} GiB"


def short_name(name: str, limit: int = MAX_NAME_CHARS) -> str:
    """``name`` cut in the middle with an ellipsis, so a node's number at the end stays; its
    control characters shown as escapes (a newline would split the label)."""
    name = visible(name)
    if len(name) <= limit:
        return name
    keep_end = (limit - 1) // 2
    keep_start = limit - 1 - keep_end
    return f"{name[:keep_start]}\u2026{name[-keep_end:]}"


def common_suffix(names: Sequence[str]) -> str:
    """The domain every name ends in (``.eu-west-1.compute.internal``), or ``""``."""
    if len(names) < 2 or not all("." in n for n in names):
        return ""
    tails = {n[n.index(".") :] for n in names}
    return tails.pop() if len(tails) == 1 else ""


def node_labels(names: Iterable[str]) -> tuple[dict[str, str], str]:
    """Short labels for node names, and a note naming the suffix left out of them."""
    ordered = sorted(set(names))
    suffix = common_suffix(ordered)
    labels = {
        name: short_name(name[: len(name) - len(suffix)] if suffix else name) for name in ordered
    }
    return labels, (f"node names shown without {suffix!r}" if suffix else "")


_VENDOR_WORDS: Final = ("NVIDIA", "Tesla")


def model_name(device_type: str) -> str:
    """``NVIDIA-Tesla T4`` -> ``T4``, ``NVIDIA A100-PCIE-40GB`` -> ``A100-PCIE-40GB``."""
    device_type = visible(device_type)
    name = device_type
    stripped = True
    while stripped:
        stripped = False
        for word in _VENDOR_WORDS:
            if name[: len(word) + 1].lower() in (word.lower() + "-", word.lower() + " "):
                name = name[len(word) + 1 :]
                stripped = True
    return name or device_type


def model_short_names(device_types: Iterable[str]) -> dict[str, str]:
    """Device type -> a short name (chip and memory: ``A100 40GB``), unique among them.

    Two types that would shorten to one name (a PCIe and an SXM A100 of 40 GB) keep their
    longer names, so a label never merges two models.
    """
    types = sorted(set(device_types))
    short = {t: _chip_and_memory(model_name(t)) for t in types}
    seen: dict[str, int] = {}
    for name in short.values():
        seen[name] = seen.get(name, 0) + 1
    return {t: (s if seen[s] == 1 else short_name(model_name(t), 18)) for t, s in short.items()}


def _chip_and_memory(name: str) -> str:
    """The chip (first word of letters then digits: A100, L40S, T4) and a memory size (80GB)."""
    words = name.replace("-", " ").replace("_", " ").split()
    chip = next((w for w in words if _is_chip(w)), None)
    if chip is None:
        return short_name(name, 18)
    after = words[words.index(chip) + 1 :]
    size = next((w for w in after if w[:-2].isdigit() and w[-2:].upper() == "GB"), None)
    return chip + (f" {size.upper()}" if size else "")


def _is_chip(word: str) -> bool:
    letters = len(word) - len(word.lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
    return 1 <= letters <= 3 and word[letters : letters + 1].isdigit() and len(word) <= 8
