"""The whole-column shortcuts of the sample screen and the readings give what the value-by-value
and row-by-row rules give, for every input: the shortcuts only decide how fast an answer is
reached, never which answer.
"""

from __future__ import annotations

import math
import sys

import pytest
from hypothesis import strategies as st

from core import readings
from core.families import FAMILIES
from core.family_rows import FamilyRows
from core.sample_screen import _all_in_range, _value_reason
from core.value_ranges import ValueRange
from tests.support.properties import quick_and_full

# Every range a family of the table is screened with, in a fixed order.
_RANGES = sorted(
    {spec.value_range for spec in FAMILIES.values() if spec.value_range is not None},
    key=lambda bounds: (bounds.upper, bounds.ceiling, bounds.whole),
)


def _each_in_range(values: list[float], bounds: ValueRange) -> bool:
    return all(_value_reason(value, bounds) is None for value in values)


def _near(upper: float) -> list[float]:
    """Values at and around the bound and the powers of two where the high-byte test stops."""
    edges = [float(upper), math.nextafter(float(upper), math.inf), math.ulp(float(upper))]
    for exponent in (1, 17, 33, 49, 65):
        power = 2.0**exponent
        edges += [power, math.nextafter(power, 0.0), math.nextafter(power, math.inf)]
    return edges


HOSTILE = [
    0.0,
    -0.0,
    1.0,
    2.5,
    -1.0,
    -5e-324,
    5e-324,
    sys.float_info.min,
    sys.float_info.max,
    -sys.float_info.max,
    math.inf,
    -math.inf,
    math.nan,
    -math.nan,
    1e308,
    100.0,
    100.5,
]


@pytest.mark.parametrize("bounds", _RANGES)
@pytest.mark.parametrize("odd", [*HOSTILE, None])
def test_a_column_is_in_range_exactly_when_each_of_its_values_is(
    bounds: ValueRange, odd: float | None
) -> None:
    for edge in [None, *_near(bounds.upper)]:
        column = [1.0, 4.0, 64.0]
        column += [] if odd is None else [odd]
        column += [] if edge is None else [edge]
        assert _all_in_range(column, bounds) == _each_in_range(column, bounds), column


_COLUMNS = st.lists(
    st.one_of(
        st.floats(),
        st.floats(min_value=0.0, max_value=2.0**66),
        st.integers(min_value=0, max_value=2**64).map(float),
    ),
    min_size=1,
    max_size=12,
)


def _any_column_is_screened_as_value_by_value(bounds: ValueRange, column: list[float]) -> None:
    assert _all_in_range(column, bounds) == _each_in_range(column, bounds)


(
    test_any_column_is_screened_as_value_by_value,
    test_any_column_is_screened_as_value_by_value_in_full,
) = quick_and_full(300, st.sampled_from(_RANGES), _COLUMNS)(
    _any_column_is_screened_as_value_by_value
)


# Readings: every input read by the whole-column paths equals the row-by-row reading.

_DEVICE_FAMILIES = (
    "hami_gpu_core_allocated_ratio",
    "hami_gpu_memory_limit_bytes",
    "hami_gpu_core_limit_ratio",
    "hami_node_gpu_overview",
    "GPUDeviceCoreAllocated",
    "nodeGPUOverview",
)
_POD_FAMILIES = (
    "hami_vgpu_core_allocated_ratio",
    "hami_vgpu_memory_allocated_bytes",
    "vGPUCoreAllocated",
)
_VALUES = st.sampled_from([0.0, 1.0, 2.0, 100.0, 2.5, -1.0, math.nan, math.inf, 1e308])
_DEVICE_ROWS = st.tuples(
    st.sampled_from(["node-a", "node-b"]),
    st.sampled_from(["GPU-1", "GPU-2", "GPU-xxxx"]),
    st.sampled_from(["0", "1", ""]),
    st.sampled_from(["A100", ""]),
    st.sampled_from(["", "40960", "many"]),
    st.sampled_from(["", "4"]),
)
_POD_ROWS = st.tuples(
    st.sampled_from(["ns-a", "ns-b"]),
    st.sampled_from(["pod-1", "pod-2"]),
    st.sampled_from(["0", "1", ""]),
    st.sampled_from(["GPU-1", "GPU-2"]),
    st.sampled_from(["node-a", "node-b"]),
)


@st.composite
def _family_rows(draw: st.DrawFn) -> FamilyRows:
    """Families of a few devices and pods, with repeats, masked UUIDs, missing indexes and
    types, bad values, and columns shared, copied, reordered or shortened between families."""
    rows = FamilyRows()
    columns: dict[str, list[tuple[str, ...]]] = {}
    names = draw(st.permutations(_DEVICE_FAMILIES + _POD_FAMILIES))
    for name in names[: draw(st.integers(1, len(names)))]:
        kind = "pod" if name in _POD_FAMILIES else "device"
        earlier = columns.get(kind)
        how = draw(st.sampled_from(["new", "same", "copy", "reversed", "shorter"]))
        if earlier is None or how == "new":
            cells = _POD_ROWS if kind == "pod" else _DEVICE_ROWS
            fields: list[tuple[str, ...]] = draw(st.lists(cells, min_size=1, max_size=8))
        elif how == "same":
            fields = earlier
        elif how == "copy":
            fields = list(earlier)
        elif how == "reversed":
            fields = earlier[::-1]
        else:
            fields = earlier[1:] or earlier
        columns[kind] = fields
        values = draw(st.lists(_VALUES, min_size=len(fields), max_size=len(fields)))
        rows.add_family(name, fields, values)
    return rows


def _whole_column_readings_equal_row_by_row_readings(rows: FamilyRows) -> None:
    fast = readings.read_family_rows(rows)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(readings, "_device_column", lambda *_: None)
        patch.setattr(readings, "_allocation_column", lambda *_: None)
        slow = readings.read_family_rows(rows)
    assert fast == slow


(
    test_whole_column_readings_equal_row_by_row_readings,
    test_whole_column_readings_equal_row_by_row_readings_in_full,
) = quick_and_full(400, _family_rows())(_whole_column_readings_equal_row_by_row_readings)


def test_the_first_device_family_with_a_masked_uuid_is_read_row_by_row() -> None:
    rows = FamilyRows()
    fields = [
        ("node-a", "GPU-xxxx", "0", "A100", "", ""),
        ("node-a", "GPU-xxxx", "1", "A100", "", ""),
    ]
    rows.add_family("hami_gpu_core_limit_ratio", fields, [100.0, 50.0])
    rows.add_family("hami_node_gpu_overview", fields[::-1], [1.0, 2.0])
    read = readings.read_family_rows(rows)
    assert read.repeated_device_uuids == (("node-a", "GPU-xxxx"),)
    limits = sorted(
        (d.device_index, d.core_limit, d.overview_mem_allocated_bytes)
        for d in read.devices.values()
    )
    assert limits == [("0", 100.0, 2.0), ("1", 50.0, 1.0)]


def test_an_overview_naming_a_device_no_other_family_has_adds_it() -> None:
    rows = FamilyRows()
    rows.add_family("hami_gpu_core_limit_ratio", [("node-a", "GPU-1", "0", "", "", "")], [100.0])
    overview = [
        ("node-a", "GPU-2", "1", "T4", "15360", "2"),
        ("node-a", "GPU-1", "0", "A100", "40960", ""),
    ]
    rows.add_family("hami_node_gpu_overview", overview, [3.0, 4.0])
    read = readings.read_family_rows(rows)
    one, two = read.devices[("node-a", "GPU-1")], read.devices[("node-a", "GPU-2")]
    assert (one.device_type, one.overview_mem_limit_mib, one.overview_shared_count) == (
        "A100",
        40960.0,
        None,
    )
    assert (two.core_limit, two.overview_mem_allocated_bytes, two.overview_shared_count) == (
        None,
        3.0,
        2.0,
    )
