"""Which sample values a HAMi exporter can write, and setting aside those it cannot.

Each family of the family table names the range its values fall in (``core.value_ranges``:
32-bit MiB, core and slot counts, 64-bit quotas, the vGPU monitor's 64-bit byte counters, 0-100
utilisation). A value outside its range (NaN, an infinity, a negative number, 1e308, 2.5 task
slots), or a second sample of a series already read, cannot come from a working exporter:
summing it would crash a summary or make its totals lie. Such samples are left out of every
figure and named, so the report can say so.

Tighter "plausible hardware" bounds are deliberately not used: AWS Neuron reports its cores as
a bit mask, legacy AMD families as raw compute units, and deviceCoreScaling and
deviceMemoryScaling multiply limits, so any smaller ceiling would reject real clusters.
"""

from __future__ import annotations

import math
import sys
from array import array
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from functools import lru_cache
from operator import itemgetter
from typing import cast

from core.families import FAMILIES, FamilySpec
from core.model import InputProblem
from core.value_ranges import INT32_MAX, INT64_MAX, ValueRange

REPEAT_REASON = "a repeat of a series already read, with the same value"
# Longest label value shown in a message: enough to recognise a pod or UUID.
_SHOWN_LABEL_CHARS = 64


# What makes two samples of one family the same series (the readings' identity rules): a
# second sample with the same identity would silently replace the first.
# Node, device UUID and index: devices of one node with a masked (repeated) UUID stay apart.
_DEVICE_IDENTITY = itemgetter(0, 1, 2)
# One object per identity, shared by the roles it serves: a column proven free of repeats for
# one family is then known to be so for the next family with that column (``UniqueColumns``).
_QUOTA_IDENTITY = itemgetter(0, 1)  # namespace, resource
_POD_IDENTITY = itemgetter(0, 1, 2, 3)  # namespace, pod, container index, UUID
_UUID_IDENTITY = itemgetter(1)
_CONTAINER_INDEX = itemgetter(2)
_NODE_UUID = itemgetter(0, 1)
_HOST_ERROR_IDENTITY = itemgetter(0, 1, 2, 4)  # a device, and the kind of error


def _pod_identity(fields: tuple[str, ...]) -> Hashable:
    # A missing container index reads as "0" (HAMi writes "0" for every pod).
    return (fields[0], fields[1], fields[2] or "0", fields[3])


# Labels holding numbers that are read, by canonical name: (unit, largest value).
_NUMERIC_LABELS: dict[str, tuple[str, float]] = {
    "device_memory_limit": ("MiB", float(INT32_MAX)),
    "limit": ("limit", float(INT64_MAX)),
}


def _identity(spec: FamilySpec) -> Callable[[tuple[str, ...]], Hashable]:
    if spec.reading == "quota":
        return _QUOTA_IDENTITY
    if spec.reading == "allocation":
        return _POD_IDENTITY
    if spec.reading in ("container", "outcome", "monitor"):
        return tuple  # every field: (namespace, pod, container, vdevice index, UUID) or labels
    if spec.reading == "host_errors":
        return _HOST_ERROR_IDENTITY
    if "node" not in spec.canonical_labels:
        return _UUID_IDENTITY  # a host family without a node label: the UUID alone
    return _DEVICE_IDENTITY


def _numeric_label(spec: FamilySpec) -> tuple[int, str, float] | None:
    """(field position, unit, largest value) of the numeric label the family has, if any."""
    for canonical, (unit, largest) in _NUMERIC_LABELS.items():
        if canonical in spec.canonical_labels:
            return spec.fields.index(canonical), unit, largest
    return None


def prometheus_value(value: float) -> str:
    """A value as the exposition format spells it."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return repr(value)


def _shown(text: str) -> str:
    """A label value safe to quote in one line of a message: control characters escaped,
    long values cut."""
    if len(text) > _SHOWN_LABEL_CHARS:
        text = text[:_SHOWN_LABEL_CHARS] + "..."
    if text.isprintable():
        return text.replace("\\", "\\\\").replace('"', '\\"')
    return "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text
    ).replace('"', '\\"')


@lru_cache(maxsize=64)
def _named_fields(spec: FamilySpec) -> tuple[tuple[int, str], ...]:
    """(position, own label name) of the fields that name a series in a message."""
    named = []
    for position, canonical in enumerate(spec.fields):
        own = spec.own_label_for(canonical)
        if own and canonical not in ("device_type", "device_memory_limit", "limit"):
            named.append((position, own))
    return tuple(named)


def series_name(spec: FamilySpec, fields: tuple[str, ...]) -> str:
    """The series as written: the family and its identifying labels, by their own names."""
    pairs = [f'{own}="{_shown(fields[i])}"' for i, own in _named_fields(spec) if fields[i]]
    return spec.name + ("{" + ",".join(pairs) + "}" if pairs else "")


def _value_reason(value: float, bounds: ValueRange) -> str | None:
    if math.isnan(value):
        return "not a number"
    if math.isinf(value):
        return "infinite"
    if value < 0:
        return "negative"
    if value > bounds.upper:
        return f"above {bounds.ceiling}"
    if bounds.whole and not value.is_integer():
        return "not a whole number"
    return None


# The byte of a float64 that holds its sign and the top seven bits of its exponent.
_HIGH_BYTE = 7 if sys.byteorder == "little" else 0


@lru_cache(maxsize=16)
def _high_bytes_at_or_above(upper: float) -> bytes:
    """The high bytes that a float64 between 0 and ``upper`` may not have, found by the largest
    ``t`` such that every float64 whose high byte is below ``t`` is below ``upper``.

    A high byte below 0x80 means a clear sign bit, and below ``t`` a biased exponent of at most
    ``16 t - 1``, so a value below ``2 ** (16 t - 1023)``; NaN and the infinities have the
    largest exponent, so their high bytes are 0x7F and 0xFF.
    """
    t = 0
    while t < 0x7F and 2.0 ** (16 * (t + 1) - 1023) <= upper:
        t += 1
    return bytes(range(t))


def _all_in_range(values: list[float], bounds: ValueRange) -> bool:
    # Most columns are small numbers far below their bound: one C-level pass over the high
    # byte of each value (array, slice and translate) then proves every one non-negative,
    # finite and in range, where min() and max() compare Python objects twice per value.
    # A column it cannot clear (a value near the bound, or -0.0, whose sign bit is set) gets
    # the exact test: a finite sum rules out NaN and infinities, and then min() and max() are
    # exact.
    high_bytes = array("d", values).tobytes()[_HIGH_BYTE::8]
    if high_bytes.translate(None, _high_bytes_at_or_above(bounds.upper)):
        total = sum(values)
        if not math.isfinite(total) or min(values) < 0 or max(values) > bounds.upper:
            return False
    # float.is_integer mapped in C: no generator frame per value.
    return not bounds.whole or all(map(float.is_integer, values))


def _label_reason(text: str, largest: float) -> str | None:
    try:
        number = float(text)
    except ValueError:
        return "not a number"
    return _value_reason(number, ValueRange(largest, f"{largest:,.0f}"))


# Field columns found to hold each series once, by the identity they were checked with.
UniqueColumns = dict[Callable[[tuple[str, ...]], Hashable], list[tuple[str, ...]]]


class _Screen:
    __slots__ = ("fields", "keys", "problems", "spec", "values")

    def __init__(
        self,
        spec: FamilySpec,
        fields: list[tuple[str, ...]],
        values: list[float],
        problems: list[InputProblem],
    ) -> None:
        self.spec = spec
        self.fields = fields
        self.values = values
        self.problems = problems
        self.keys: list[tuple[str, ...]] | None = None

    def problem(self, i: int, value: str, reason: str) -> None:
        series = series_name(self.spec, self.fields[i])
        self.problems.append(InputProblem(self.spec.name, series, value, reason))

    def values_out_of_range(self, bounds: ValueRange) -> set[int]:
        if _all_in_range(self.values, bounds):
            return set()
        out = set()
        for i, value in enumerate(self.values):
            reason = _value_reason(value, bounds)
            if reason is not None:
                self.problem(i, prometheus_value(value), reason)
                out.add(i)
        return out

    def duplicates(self, skip: set[int], unique: UniqueColumns) -> set[int]:
        identity = _identity(self.spec)
        # A missing container index reads as "0" (as the readings key allocations), in both
        # pod families: a series without it repeats the one with index "0".
        if identity is _POD_IDENTITY and "" in map(_CONTAINER_INDEX, self.fields):
            identity = _pod_identity
        # Families with one label set list the same series in the same order (the Go client
        # sorts them): a column already found unique needs no second look.
        proven = unique.get(identity)
        if proven is not None and proven == self.fields:
            # The equal column read before stands in for this one: a reader that compares
            # columns then finds the very same list, with no tuple to compare again.
            self.fields = proven
            return set()
        if identity is _DEVICE_IDENTITY:
            # Distinct (node, UUID) pairs make distinct identities, and they are the keys the
            # readings look devices up by: a second tuple per row is then never built.
            pairs = list(map(_NODE_UUID, self.fields))
            if len(set(pairs)) == len(pairs):
                unique[identity] = self.fields
                self.keys = pairs
                return set()
        keys = list(map(identity, self.fields))
        if len(set(keys)) == len(keys):
            unique[identity] = self.fields
            if identity is _POD_IDENTITY or identity is _pod_identity:
                self.keys = cast(list[tuple[str, ...]], keys)
            return set()
        first: dict[Hashable, int] = {}
        out = set()
        for i, key in enumerate(keys):
            if i in skip:
                continue
            kept = first.setdefault(key, i)
            if kept == i:
                continue
            out.add(i)
            if self.values[i] == self.values[kept]:
                reason = REPEAT_REASON
            else:
                shown = prometheus_value(self.values[kept])
                reason = f"a second sample of a series already read; the first, {shown}, is kept"
            self.problem(i, prometheus_value(self.values[i]), reason)
        return out

    def numeric_label(self, skip: set[int], position: int, unit: str, largest: float) -> None:
        """Blank a numeric label no exporter could write (the sample's value stays)."""
        texts = {fields[position] for fields in self.fields} - {""}
        verdicts = {text: _label_reason(text, largest) for text in texts}
        if not any(verdicts.values()):
            return
        self.fields = list(self.fields)
        for i, fields in enumerate(self.fields):
            text = fields[position]
            reason = verdicts.get(text)
            if reason is not None and i not in skip:
                own = self.spec.own_label_for(self.spec.fields[position]) or unit
                self.problem(i, f'{own}="{_shown(text)}"', f"label {reason}, read as not set")
                self.fields[i] = (*fields[:position], "", *fields[position + 1 :])


@dataclass(frozen=True, slots=True)
class ScreenedFamily:
    """The usable samples of one family, the problems of those left out, and the identity
    keys of the usable rows when the screen built them (None when it did not): (node, UUID)
    of a device family whose pairs are all distinct, and the identity of a pod family (its
    container index as written, or read as "0" where the core family has one missing)."""

    fields: list[tuple[str, ...]]
    values: list[float]
    problems: list[InputProblem]
    keys: list[tuple[str, ...]] | None = None


def screen_family(
    name: str,
    fields: list[tuple[str, ...]],
    values: list[float],
    unique: UniqueColumns | None = None,
) -> ScreenedFamily:
    """The samples of one family that can be used, and the problems of those left out.

    ``unique`` remembers field columns already found free of repeated series, across the
    families of one reading; ``fields`` and ``values`` are never changed in place.
    """
    spec = FAMILIES[name]
    bounds = spec.value_range
    if bounds is None or not values:
        return ScreenedFamily(fields, values, [])  # descriptive families: never read
    screen = _Screen(spec, fields, values, [])
    left_out = screen.values_out_of_range(bounds)
    left_out |= screen.duplicates(left_out, {} if unique is None else unique)
    label = _numeric_label(spec)
    if label is not None:
        screen.numeric_label(left_out, *label)
    if left_out:
        kept = [i for i in range(len(values)) if i not in left_out]
        return ScreenedFamily(
            [screen.fields[i] for i in kept], [values[i] for i in kept], screen.problems
        )
    return ScreenedFamily(screen.fields, values, screen.problems, screen.keys)
