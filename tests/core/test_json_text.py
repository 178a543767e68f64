"""The fast JSON writer writes what the standard library writes, floats from 1e-9 to 1e-4 read
back as the same values."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest
from hypothesis import strategies as st

from core.json_text import dumps, dumps_utf8
from tests.support.properties import quick_and_full

ROOT = Path(__file__).resolve().parents[2]

# Floats of every magnitude, the small ones orjson spells its own way well covered.
FLOATS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(min_value=1e-11, max_value=1e-3),
    st.floats(min_value=-1e-3, max_value=-1e-11),
    st.integers(-(10**6), 10**6).map(lambda n: n / 1024.0 / 1024.0),
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),  # past 64 bits too
    FLOATS,
    st.text(),  # lone surrogates and control characters too
)
DOCUMENTS = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.tuples(inner, inner),
        st.dictionaries(st.text(max_size=8), inner, max_size=5),
        st.dictionaries(st.integers(), inner, max_size=3),  # keys the standard library converts
    ),
    max_leaves=20,
)


def spelled_alike(document: object) -> bool:
    """Whether orjson and Python write every float in ``document`` the same way: all but those
    with 1e-9 <= |value| < 1e-4."""
    if isinstance(document, float):
        return not 1e-9 <= abs(document) < 1e-4
    if isinstance(document, dict):
        return all(map(spelled_alike, document.values()))
    if isinstance(document, (list, tuple)):
        return all(map(spelled_alike, document))
    return True


def standard(document: object, pretty: bool) -> str:
    if pretty:
        return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False)
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def assert_standard_text(text: str, document: object, pretty: bool) -> None:
    """``text`` holds the values of the standard library's text of ``document``, and is that
    text exactly when every float in it is spelled alike."""
    expected = standard(document, pretty)
    assert json.loads(text) == json.loads(expected)
    if spelled_alike(document):
        assert text == expected


def _the_text_is_the_standard_librarys_but_for_small_floats(document: object, pretty: bool) -> None:
    assert_standard_text(dumps(document, pretty=pretty), document, pretty)


(
    test_the_text_is_the_standard_librarys_but_for_small_floats,
    test_the_text_is_the_standard_librarys_but_for_small_floats_in_full,
) = quick_and_full(200, DOCUMENTS, st.booleans())(
    _the_text_is_the_standard_librarys_but_for_small_floats
)


def test_small_floats_read_back_as_the_same_values() -> None:
    values = [1e-05, 4.5e-06, -7e-09, 1e-09, 1e-10, 0.0001, 9.5367431640625e-07, 1e16, 2.5e-300]
    text = dumps(values)
    assert json.loads(text) == values
    # Python's spelling where the two agree, orjson's shortest one where they do not.
    assert text.startswith("[0.00001,4.5e-6,-7e-9,")
    assert text.endswith(",1e-10,0.0001,9.5367431640625e-7,1e+16,2.5e-300]")


def test_non_finite_values_never_reach_the_text_as_bare_names() -> None:
    text = dumps({"a": math.nan, "b": [math.inf]})
    assert "NaN" not in text and "Infinity" not in text
    assert json.loads(text) == {"a": None, "b": [None]}


def _the_utf8_route_writes_the_same_text(document: object, pretty: bool) -> None:
    """``dumps_utf8`` gives orjson's bytes or the standard library's string: either way the
    text of ``dumps``, which the command line writes without decoding it first."""
    written = dumps_utf8(document, pretty=pretty)
    text = written.decode() if isinstance(written, bytes) else written
    assert_standard_text(text, document, pretty)


(
    test_the_utf8_route_writes_the_same_text,
    test_the_utf8_route_writes_the_same_text_in_full,
) = quick_and_full(200, DOCUMENTS, st.booleans())(_the_utf8_route_writes_the_same_text)


def test_the_utf8_route_leaves_unencodable_text_to_the_standard_library() -> None:
    document = {"pod": "lone \ud800 surrogate", "small": 1e-06}
    assert dumps_utf8(document) == standard(document, False)
    assert dumps_utf8({"pod": "ünïcode ☃", "n": 1.5}) == '{"pod":"ünïcode ☃","n":1.5}'.encode()


def test_a_dataclass_is_refused_as_the_standard_library_refuses_it() -> None:
    """orjson could write dataclasses; documents here are plain, so one is a mistake to raise."""

    @dataclasses.dataclass
    class Row:
        name: str

    with pytest.raises(TypeError) as standard_error:
        json.dumps(Row("a"))
    with pytest.raises(TypeError) as ours:
        dumps(Row("a"))
    assert str(ours.value) == str(standard_error.value)
