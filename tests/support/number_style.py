"""Checks of the one number style (``core.number_style``) on any rendered text.

Each check finds figures written another way: a count of 1,000 or more without thousands
separators, a percentage without exactly one decimal, MiB where GiB is due (1 GiB or more),
GiB or TiB with more digits than three significant ones need, cores abbreviated as ``c``.
Names keep their digits (``gpu-node-0283``, ``x87xs7wqb7``, dates and times): only numbers
standing alone are read.
"""

from __future__ import annotations

import re

# A number standing alone: not part of a name, date, time, version or another number.
_ALONE = r"(?<![\w.,/:+@-])"
_END = r"(?![\w.,/:-])"
_PLAIN_COUNT = re.compile(_ALONE + r"\d{4,}" + _END)
_PERCENT = re.compile(_ALONE + r"([\d,]+(?:\.\d+)?)%")
_MIB = re.compile(_ALONE + r"([\d,]+(?:\.\d+)?) MiB")
_GIB_TIB = re.compile(_ALONE + r"([\d,]+(?:\.\d+)?)(?:/[\d,.]+)? (GiB|TiB)")
_PAIR = re.compile(_ALONE + r"([\d,]+(?:\.\d+)?)/([\d,]+(?:\.\d+)?) GiB")
_CORES_ABBREVIATED = re.compile(_ALONE + r"\d[\d,]*c" + r"(?![\w])")


def _value(number: str) -> float:
    return float(number.replace(",", ""))


def _decimals(number: str) -> int:
    return len(number.split(".", 1)[1]) if "." in number else 0


def _significant_decimals(number: str) -> int:
    """Decimals after the leading zeros of a number below 1 (``0.500`` has 2)."""
    whole, _, decimals = number.partition(".")
    if whole.replace(",", "") == "0":
        decimals = decimals.lstrip("0")[1:] if decimals.strip("0") else ""
        return len(decimals) + 1 if decimals else 0
    return len(decimals)


def number_style_problems(text: str) -> list[str]:
    """Every figure in ``text`` that is not in the one number style, described."""
    problems = [f"no thousands separator: {m.group()}" for m in _PLAIN_COUNT.finditer(text)]
    problems += [
        f"percentage without one decimal: {m.group()}"
        for m in _PERCENT.finditer(text)
        if _decimals(m.group(1)) != 1
    ]
    problems += [
        f"MiB of 1 GiB or more, or with decimals: {m.group()}"
        for m in _MIB.finditer(text)
        if _value(m.group(1)) >= 1024 or _decimals(m.group(1))
    ]
    problems += [
        f"more than three significant digits: {m.group()}"
        for m in _GIB_TIB.finditer(text)
        if _significant_decimals(m.group(1)) > 2
    ]
    problems += [
        f"GiB pair without one decimal: {m.group()}"
        for m in _PAIR.finditer(text)
        if m.group(1) != "0" and (_decimals(m.group(1)) != 1 or _decimals(m.group(2)) != 1)
    ]
    problems += [f"cores abbreviated: {m.group()}" for m in _CORES_ABBREVIATED.finditer(text)]
    return problems
