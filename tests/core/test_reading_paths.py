"""The whole-column shortcuts of the sample screen and the readings give what the value-by-value
and row-by-row rules give, for every input: the shortcuts only decide how fast an answer is
reached, never which answer.
"""

from __future__ import annotations

import math
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.sample_screen import VALUE_RANGES, ValueRange, _all_in_range, _value_reason

_RANGES = sorted(set(VALUE_RANGES.values()))


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


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(_RANGES),
    st.lists(
        st.one_of(
            st.floats(),
            st.floats(min_value=0.0, max_value=2.0**66),
            st.integers(min_value=0, max_value=2**64).map(float),
        ),
        min_size=1,
        max_size=12,
    ),
)
def test_any_column_is_screened_as_value_by_value(bounds: ValueRange, column: list[float]) -> None:
    assert _all_in_range(column, bounds) == _each_in_range(column, bounds)
