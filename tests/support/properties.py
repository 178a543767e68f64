"""Properties that run twice: a short run in the fast set, for the edit-test loop, and the full
example count among the slow tests, so the whole suite tries more examples than either alone
(as ``tests/core/test_exposition_differential.py`` does for its own)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis.strategies import SearchStrategy

QUICK_EXAMPLES = 50

Test = Callable[..., None]


def quick_and_full(
    full_examples: int, *strategies: SearchStrategy[Any]
) -> Callable[[Test], tuple[Test, Test]]:
    """The property ``body`` given ``strategies`` as two tests: ``QUICK_EXAMPLES`` examples,
    and ``full_examples`` marked slow. Bind both to names starting with ``test_``."""

    def both(body: Test) -> tuple[Test, Test]:
        def run(count: int) -> Test:
            test: Test = settings(max_examples=count, deadline=None)(given(*strategies)(body))
            return test

        return run(QUICK_EXAMPLES), pytest.mark.slow(run(full_examples))

    return both
