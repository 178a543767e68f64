"""Parsed samples grouped by HAMi family, their labels mapped to canonical field tuples.

The two readers meet here: the bulk reader (``core.fast_reader``) builds ``FamilyRows``
directly, the general parser's samples go through ``rows_from_samples``; ``core.readings``
turns either into typed readings.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from core.families import FamilySpec, family_spec


class _SampleLike(Protocol):
    """Structural type of a parsed sample (``core.exposition.Sample``)."""

    @property
    def name(self) -> str: ...

    @property
    def labels(self) -> dict[str, str]: ...

    @property
    def value(self) -> float: ...


# One family's samples as two parallel columns: canonical field tuples, and values.
Columns = tuple[list[tuple[str, ...]], list[float]]


@dataclass(slots=True)
class FamilyRows:
    """The samples of the HAMi families of one or more texts, as canonical field tuples."""

    rows: dict[str, Columns] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    foreign: dict[str, None] = field(default_factory=dict)

    def add_family(self, name: str, fields: list[tuple[str, ...]], values: list[float]) -> None:
        have = self.rows.get(name)
        if have is None:
            self.rows[name] = (fields, values)
        else:
            have[0].extend(fields)
            have[1].extend(values)
        self.counts[name] = self.counts.get(name, 0) + len(values)

    def merge(self, other: FamilyRows) -> None:
        """Add another text's rows (e.g. one vGPU monitor per node) to these."""
        for name, (fields, values) in other.rows.items():
            have = self.rows.setdefault(name, ([], []))
            have[0].extend(fields)
            have[1].extend(values)
        for name, count in other.counts.items():
            self.counts[name] = self.counts.get(name, 0) + count
        self.foreign.update(other.foreign)


def rows_from_samples(samples: Iterable[_SampleLike]) -> FamilyRows:
    """Group parsed samples by family, with identifying labels mapped to canonical fields."""
    out = FamilyRows()
    # Parsers may share one labels dict between series with the same label block; the field
    # tuple is cached per (labels object, family spec), holding the object so its id cannot be
    # reused while cached.
    cache: dict[tuple[int, int], tuple[dict[str, str], tuple[str, ...]]] = {}
    getters: dict[str, tuple[str | None, ...]] = {}
    last_name = ""
    spec: FamilySpec | None = None
    fields_column: list[tuple[str, ...]] = []
    values_column: list[float] = []
    for sample in samples:
        name = sample.name
        out.counts[name] = out.counts.get(name, 0) + 1
        if name != last_name:
            last_name = name
            spec = family_spec(name)
            if spec is None:
                out.foreign[name] = None
                continue
            fields_column, values_column = out.rows.setdefault(spec.name, ([], []))
            if spec.name not in getters:
                getters[spec.name] = tuple(spec.own_label_for(f) for f in spec.fields)
        if spec is None:
            continue
        labels = sample.labels
        key = (id(labels), id(spec))
        hit = cache.get(key)
        if hit is not None and hit[0] is labels:
            fields = hit[1]
        else:
            fields = tuple(labels.get(own, "") if own else "" for own in getters[spec.name])
            cache[key] = (labels, fields)
        fields_column.append(fields)
        values_column.append(sample.value)
    return out
