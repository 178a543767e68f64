"""``Record``: ``typing.NamedTuple`` for type checkers, a plain ``collections.namedtuple`` class
at run time.

``typing.NamedTuple`` checks every field's annotation when the class is made, and with
postponed annotations each check compiles the annotation's text: the sixty-odd row, reading and
settings types cost a command about 4 ms of start-up that way, for a check that nothing reads.
``Record`` makes the same class (fields from the annotations, defaults from their values, the
body's methods, properties and docstring) and keeps the annotations as their text in
``__annotations__``. Generic named tuples stay ``typing.NamedTuple``.
"""

from __future__ import annotations

import collections
from typing import TYPE_CHECKING, Any

__all__ = ["Record"]

if TYPE_CHECKING:
    from typing import NamedTuple as Record
else:
    # What a body may not set, as typing.NamedTuple refuses it; and what namedtuple has made.
    _PROHIBITED = frozenset(
        {
            "__new__",
            "__init__",
            "__slots__",
            "__getnewargs__",
            "_fields",
            "_field_defaults",
            "_make",
            "_replace",
            "_asdict",
            "_source",
        }
    )
    _MADE = frozenset({"__module__", "__name__", "__annotations__"})

    class _RecordType(type):
        def __new__(mcs, typename: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> type:
            if not bases:  # Record itself
                return super().__new__(mcs, typename, bases, namespace)
            if bases != (Record,):
                raise TypeError(f"{typename}: a Record may only derive from Record")
            annotations = namespace.get("__annotations__", {})
            defaults = []
            for name in annotations:
                if name in namespace:
                    defaults.append(namespace[name])
                elif defaults:
                    raise TypeError(
                        f"{typename}: field {name} without a default follows one with a default"
                    )
            made = collections.namedtuple(
                typename, list(annotations), defaults=defaults, module=namespace["__module__"]
            )
            made.__annotations__ = made.__new__.__annotations__ = dict(annotations)
            for key, value in namespace.items():
                if key in _PROHIBITED:
                    raise AttributeError(f"{typename}: cannot overwrite NamedTuple attribute {key}")
                if key not in _MADE and key not in made._fields:
                    setattr(made, key, value)
            return made

    class Record(metaclass=_RecordType):
        """Base of a named tuple class declared by annotated fields, as typing.NamedTuple."""
