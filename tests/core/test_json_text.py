"""The fast JSON writer writes what the standard library writes, floats from 1e-9 to 1e-4 read
back as the same values."""

from __future__ import annotations

import json
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from core.json_text import dumps, dumps_utf8

# Floats of every magnitude, the small ones orjson spells its own way well covered.
FLOATS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(min_value=1e-11, max_value=1e-3),
    st.floats(min_value=-1e-3, max_value=-1e-11),
    st.integers(-(10**6), 10**6).map(lambda n: n / 1024.0 / 1024.0),
)


def _spelled_alike(value: float) -> bool:
    """Whether orjson and Python write ``value`` the same way (all but 1e-9 <= |value| < 1e-4)."""
    return not 1e-9 <= abs(value) < 1e-4


def documents(floats: st.SearchStrategy[float]) -> st.SearchStrategy[object]:
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),  # past 64 bits too
        floats,
        st.text(),  # lone surrogates and control characters too
    )
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=5),
            st.tuples(inner, inner),
            st.dictionaries(st.text(max_size=8), inner, max_size=5),
            st.dictionaries(st.integers(), inner, max_size=3),  # keys the standard library converts
        ),
        max_leaves=20,
    )


DOCUMENTS = documents(FLOATS)
DOCUMENTS_SPELLED_ALIKE = documents(FLOATS.filter(_spelled_alike))


def standard(document: object, pretty: bool) -> str:
    if pretty:
        return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False)
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(DOCUMENTS_SPELLED_ALIKE, st.booleans())
def test_the_text_is_the_standard_librarys(document: object, pretty: bool) -> None:
    assert dumps(document, pretty=pretty) == standard(document, pretty)


@settings(max_examples=200, deadline=None)
@given(DOCUMENTS, st.booleans())
def test_every_document_reads_back_as_the_standard_librarys_text_does(
    document: object, pretty: bool
) -> None:
    assert json.loads(dumps(document, pretty=pretty)) == json.loads(standard(document, pretty))


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


@settings(max_examples=200, deadline=None)
@given(DOCUMENTS_SPELLED_ALIKE, st.booleans())
def test_the_utf8_route_writes_the_same_text(document: object, pretty: bool) -> None:
    """``dumps_utf8`` gives orjson's bytes or the standard library's string: either way the
    text of ``dumps``, which the command line writes without decoding it first."""
    text = dumps_utf8(document, pretty=pretty)
    expected = standard(document, pretty)
    assert (text.decode() if isinstance(text, bytes) else text) == expected


def test_the_utf8_route_leaves_unencodable_text_to_the_standard_library() -> None:
    document = {"pod": "lone \ud800 surrogate", "small": 1e-06}
    assert dumps_utf8(document) == standard(document, False)
    assert dumps_utf8({"pod": "ünïcode ☃", "n": 1.5}) == '{"pod":"ünïcode ☃","n":1.5}'.encode()
