"""The word ``fit`` in a slash command or a thread follow-up, and the job shape after it.

``/hami-summary prod fit 8xH100`` and, in a thread, ``fit 2x50c/20GiB``: everything after
``fit`` is the shape (``core.fit_shape``), read at once so a bad shape is answered before any
cluster is asked.
"""

from __future__ import annotations

from core.errors import InputError
from core.fit_shape import SHAPE_EXAMPLES, Shape, parse_shape

FIT_WORD = "fit"
FIT_USAGE = "fit SHAPE"


def split_fit(words: list[str]) -> tuple[list[str], Shape | None]:
    """The words before ``fit``, and the shape after it (None when there is no ``fit``)."""
    for index, word in enumerate(words):
        if word.lower() == FIT_WORD:
            rest = words[index + 1 :]
            if not rest:
                examples = ", ".join(f"`fit {e}`" for e in SHAPE_EXAMPLES)
                raise InputError(f"`fit` needs a job shape after it, e.g. {examples}.")
            return words[:index], parse_shape(" ".join(rest))
    return words, None


def fit_follow_up(body: str) -> Shape | None:
    """The shape of a ``fit ...`` follow-up (``body`` already cleaned of mentions), or None."""
    words = body.split()
    if not words or words[0].lower() != FIT_WORD:
        return None
    return split_fit(words)[1]
