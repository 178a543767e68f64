"""The one number style of every human-readable view (text, Markdown, Block Kit, chart).

* counts with thousands separators: ``8,000``;
* cores in HAMi's share points (100 = one whole GPU), called "cores": ``275 cores``;
* percentages with one decimal: ``45.8%``;
* memory of one GPU or one pod in GiB with one decimal, in MiB below 1 GiB: ``40.0 GiB``,
  ``512 MiB``;
* totals (a cluster, a node, a namespace, a quota) in GiB or TiB with three significant
  digits: ``0.500 GiB``, ``77.0 GiB``, ``188 TiB``;
* a figure the input does not give is ``not known``, never 0.

Machine formats (JSON, CSV) keep exact MiB and name the unit in their keys and headers; they
do not use this module.
"""

from __future__ import annotations

import math

NOT_KNOWN = "not known"
MIB_PER_GIB = 1024.0
GIB_PER_TIB = 1024.0


def count(value: float | None) -> str:
    """``8,000``; ``not known`` for None."""
    if value is None:
        return NOT_KNOWN
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def counted(value: float | None, noun: str, plural: str | None = None) -> str:
    """``1 GPU``, ``8,000 GPUs``; ``GPUs not known`` for None."""
    word = noun if value == 1 else plural or noun + "s"
    if value is None:
        return f"{plural or noun + 's'} {NOT_KNOWN}"
    return f"{count(value)} {word}"


def measured(value: float | None, unit: str) -> str:
    """A measured figure in whole units: ``88 °C``, ``250 W``; ``not known`` for None."""
    return NOT_KNOWN if value is None else f"{value:,.0f} {unit}"


def cores_value(value: float | None) -> str:
    """Share points without the unit (for a column headed "cores"): ``275``, ``12.5``."""
    if value is None:
        return NOT_KNOWN
    rounded = round(float(value), 1)
    return f"{rounded:,.0f}" if rounded.is_integer() else f"{rounded:,.1f}"


def cores(value: float | None) -> str:
    """``275 cores`` (100 cores = one whole GPU)."""
    if value is None:
        return NOT_KNOWN
    return f"{cores_value(value)} cores"


def percent(value: float | None) -> str:
    """``45.8%``."""
    if value is None or math.isnan(value):
        return NOT_KNOWN
    return f"{value:,.1f}%"


def share(part: float, whole: float) -> str:
    """``part`` as a percentage of ``whole``; ``not known`` when the whole is 0."""
    if whole <= 0:
        return NOT_KNOWN
    return percent(part / whole * 100.0)


def mem_each(mib: float | None) -> str:
    """Memory of one GPU or one pod: ``40.0 GiB``, ``512 MiB``."""
    if mib is None:
        return NOT_KNOWN
    if abs(mib) < MIB_PER_GIB:
        return f"{mib:,.0f} MiB"
    return f"{mib / MIB_PER_GIB:,.1f} GiB"


def mem_each_gib(mib: float | None) -> str:
    """``mem_each`` without its unit, for a column headed "GiB": ``40.0``, ``0.5``, ``0``."""
    if mib is None:
        return NOT_KNOWN
    return "0" if mib == 0 else f"{mib / MIB_PER_GIB:,.1f}"


def mem_each_pair(used_mib: float | None, limit_mib: float | None) -> str:
    """Memory used of a GPU's or pod's limit: ``12.0/22.5 GiB``, ``512 MiB/22.5 GiB``,
    ``0/22.5 GiB``."""
    if used_mib is None or limit_mib is None:
        return NOT_KNOWN
    if used_mib == 0 or (abs(used_mib) >= MIB_PER_GIB and abs(limit_mib) >= MIB_PER_GIB):
        return f"{mem_each_gib(used_mib)}/{mem_each(limit_mib)}"
    return f"{mem_each(used_mib)}/{mem_each(limit_mib)}"


def significant(value: float, digits: int = 3) -> str:
    """``value`` to ``digits`` significant digits, with thousands separators: 188, 18.8,
    1.88, 1,230."""
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else str(value)
    rounded = float(f"{value:.{digits}g}")
    magnitude = math.floor(math.log10(abs(rounded)))
    decimals = max(digits - 1 - magnitude, 0)
    return f"{rounded:,.{decimals}f}"


def mem_total(mib: float | None) -> str:
    """A total (cluster, node, namespace, quota): ``0.500 GiB``, ``77.0 GiB``, ``188 TiB``."""
    if mib is None:
        return NOT_KNOWN
    gib = mib / MIB_PER_GIB
    if abs(gib) < GIB_PER_TIB:
        return f"{significant(gib)} GiB"
    return f"{significant(gib / GIB_PER_TIB)} TiB"


def mem_total_pair(used_mib: float | None, limit_mib: float | None) -> str:
    """``77.0 GiB / 165 GiB``."""
    return f"{mem_total(used_mib)} / {mem_total(limit_mib)}"


def cores_pair(used: float | None, limit: float | None) -> str:
    """``275 / 600 cores``."""
    if used is None or limit is None:
        return NOT_KNOWN
    return f"{cores_value(used)} / {cores_value(limit)} cores"


def seconds(value: float | None) -> str:
    """``12 s``, ``4.2 min``, ``3.1 h``: how long since something happened."""
    if value is None:
        return NOT_KNOWN
    if value < 120:
        return f"{value:,.0f} s"
    if value < 7200:
        return f"{value / 60:,.1f} min"
    return f"{value / 3600:,.1f} h"
