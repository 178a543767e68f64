"""The fast JSON writer writes what the standard library writes, floats from 1e-9 to 1e-4 read
back as the same values."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import subprocess
import sys
import uuid
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


# Run in fresh interpreters: the test process has long loaded uuid and dataclasses, and then
# core.json_text imports orjson as it is. ``BEFORE`` runs before the import.
IMPORT_PROBE = """
import json, sys
{before}
import core.json_text as json_text
loaded = {{name: name in sys.modules for name in ("uuid", "dataclasses", "inspect", "platform")}}
import dataclasses, uuid


@dataclasses.dataclass
class Row:
    name: str


def refusal(value):
    try:
        json_text.dumps(value)
    except TypeError as error:
        return str(error)
    return None


document = {{"gpus": [{{"uuid": "GPU-1e-6", "cores": 0.5, "pods": None}}], "ok": True}}
print(json.dumps({{
    "loaded_with_orjson": loaded,
    "stand_ins_gone": all(
        not (sys.modules[name].__doc__ or "").startswith("Stands in")
        for name in ("uuid", "dataclasses")
    ),
    "real_modules_work": [
        len(str(uuid.uuid4())), dataclasses.asdict(Row("a")), dataclasses.fields(Row)[0].name
    ],
    "uuid_refused": refusal(uuid.UUID(int=1)),
    "dataclass_refused": refusal(Row("a")),
    "text": json_text.dumps(document),
    "standard_text": json.dumps(document, separators=(",", ":")),
}}))
"""


def _probe(before: str = "") -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_PROBE.format(before=before)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    seen: dict[str, object] = json.loads(done.stdout)
    return seen


def _refusal_of_the_standard_library() -> dict[str, str]:
    @dataclasses.dataclass
    class Row:
        name: str

    refused = {}
    for key, value in (("uuid_refused", uuid.UUID(int=1)), ("dataclass_refused", Row("a"))):
        with pytest.raises(TypeError) as error:
            json.dumps(value)
        refused[key] = str(error.value)
    return refused


@pytest.mark.slow  # Python processes of their own
def test_orjson_is_imported_without_uuid_and_dataclasses_and_they_still_work() -> None:
    seen = _probe()
    assert seen["loaded_with_orjson"] == dict.fromkeys(
        ("uuid", "dataclasses", "inspect", "platform"), False
    )
    assert seen["stand_ins_gone"] is True
    assert seen["real_modules_work"] == [36, {"name": "a"}, "name"]
    # As the standard library: a UUID and a dataclass are refused, whoever writes the text.
    refused = _refusal_of_the_standard_library()
    assert seen["uuid_refused"] == refused["uuid_refused"]
    assert seen["dataclass_refused"] == refused["dataclass_refused"]
    assert seen["text"] == seen["standard_text"]


@pytest.mark.slow  # Python processes of their own
@pytest.mark.parametrize(
    "before",
    [
        "import uuid",  # loaded already: orjson sees the real module, the other a stand-in
        "import dataclasses",
        # Another thread could import uuid while a stand-in is in sys.modules: none is used.
        "import threading; threading.Thread(target=__import__('time').sleep, args=(2,)).start()",
    ],
)
def test_orjson_meets_the_real_modules_that_are_loaded_or_could_be(before: str) -> None:
    seen = _probe(before)
    loaded = seen["loaded_with_orjson"]
    assert isinstance(loaded, dict)
    threads = "threading" in before
    assert loaded["uuid"] is (threads or "uuid" in before)
    assert loaded["dataclasses"] is (threads or "dataclasses" in before)
    assert seen["stand_ins_gone"] is True
    refused = _refusal_of_the_standard_library()
    # orjson writes a UUID (as its string) when it saw the real module: documents hold none.
    assert seen["uuid_refused"] == (None if loaded["uuid"] else refused["uuid_refused"])
    assert seen["dataclass_refused"] == refused["dataclass_refused"]
    assert seen["text"] == seen["standard_text"]
