"""``core.record.Record``: the named tuple classes ``typing.NamedTuple`` would make."""

from __future__ import annotations

import pickle
from typing import Generic, NamedTuple, TypeVar

import pytest

from core.record import Record

T = TypeVar("T")


class Point(Record):
    """A point."""

    x: int
    y: float | None = None
    label: str = "p"

    @property
    def total(self) -> float:
        return self.x + (self.y or 0.0)


class TypingPoint(NamedTuple):
    x: int
    y: float | None = None
    label: str = "p"


def test_a_record_behaves_as_the_typing_named_tuple_with_the_same_fields() -> None:
    made, typed = Point(1, 2.5), TypingPoint(1, 2.5)
    assert made == typed == (1, 2.5, "p")
    assert Point._fields == TypingPoint._fields == ("x", "y", "label")
    assert Point._field_defaults == TypingPoint._field_defaults == {"y": None, "label": "p"}
    assert made._replace(label="q") == (1, 2.5, "q")
    assert made._asdict() == typed._asdict()
    assert repr(made) == "Point(x=1, y=2.5, label='p')"
    assert Point._make([3, None, "r"]).total == 3.0
    assert pickle.loads(pickle.dumps(made)) == made
    assert Point.__doc__ == "A point."
    assert Point.__module__ == __name__ and Point.__qualname__ == "Point"
    assert Point.__annotations__ == {"x": "int", "y": "float | None", "label": "str"}
    with pytest.raises(AttributeError):
        made.x = 2  # type: ignore[misc]


def test_a_field_without_a_default_after_one_with_a_default_is_refused() -> None:
    with pytest.raises(TypeError, match="field b without a default"):

        class Bad(Record):
            a: int = 0
            b: int


def test_a_body_may_not_replace_what_the_named_tuple_makes() -> None:
    with pytest.raises(AttributeError, match="_replace"):

        class Bad(Record):
            a: int

            def _replace(self) -> None:  # type: ignore[override]
                pass


def test_a_record_derives_from_record_alone() -> None:
    with pytest.raises(TypeError, match="only derive from Record"):

        class Bad(Record, Generic[T]):
            z: int = 0
