"""How the charts write numbers and names: the one number style of every view.

The figures are written by ``core.number_style`` (thousands separators, cores as "cores",
memory totals in GiB or TiB with three significant digits, memory of one GPU or pod in GiB with
one decimal, percentages with one decimal, "not known" never 0); names are shortened in the
middle by ``core.views.text_fit``. What is the chart's own is here: node labels without their
shared domain and short, unique model names.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from core import number_style
from core.views.text_fit import shorten_middle
from core.visible_text import visible

NOT_KNOWN: Final = number_style.NOT_KNOWN
MAX_NAME_CHARS: Final = 22


def count(value: int | None, noun: str = "", plural: str | None = None) -> str:
    """``1,204 GPUs``; ``not known`` for None."""
    if value is None:
        return f"{noun} {NOT_KNOWN}".strip() if noun else NOT_KNOWN
    if not noun:
        return number_style.count(value)
    word = noun if value == 1 else (plural or noun + "s")
    return f"{number_style.count(value)} {word}"


def cores(value: float) -> str:
    """``9,530 cores`` (HAMi's unit: 100 cores are one whole GPU)."""
    return number_style.cores(value)


def percent(value: float | None) -> str:
    return number_style.percent(value)


def memory_total(mib: float | None) -> str:
    """A sum over GPUs or pods: ``40.0 GiB``, ``1.21 TiB``, ``189 TiB``."""
    return number_style.mem_total(mib)


def memory_each(mib: float | None) -> str:
    """One GPU's or pod's memory: ``39.5 GiB``, ``512 MiB`` below 1 GiB."""
    return number_style.mem_each(mib)


def short_name(name: str, limit: int = MAX_NAME_CHARS) -> str:
    """``name`` cut in the middle with an ellipsis, so a node's number at the end stays; its
    control characters shown as escapes (a newline would split the label)."""
    return shorten_middle(visible(name), limit)


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
