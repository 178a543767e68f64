"""Tests that start processes are marked ``slow``: an audit hook sees every process started.

``python3 -m bot.quickstart test --fast`` runs ``-m "not slow"`` for the edit-test loop, so a
test that starts a process without the mark would slow that loop down unnoticed. While a test
body runs, every ``subprocess.Popen``, ``os.posix_spawn`` and ``os.fork`` that the project's own
code asks for is recorded; a test without ``@pytest.mark.slow`` that started one fails and names
what it started. Processes a library starts for itself (matplotlib runs ``fc-list`` once to
find fonts) do not count. Function-scoped fixtures are watched too (a process started for
one test is that test's cost); fixtures of a wider scope, such as the Redis server a whole
session shares, are not: they start once, whichever test happens to need them first.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

_PROCESS_EVENTS = frozenset({"subprocess.Popen", "os.posix_spawn", "os.fork", "os.forkpty"})
_started: list[str] = []
_watching = [False]


_REPO = Path(__file__).resolve().parents[2]
_VENV = _REPO / ".venv"
_STDLIB = (os.path.dirname(subprocess.__file__),)  # where subprocess and os live


def _asked_for_by_the_project() -> bool:
    """Whether the nearest caller outside the standard library is the project's own code."""
    frame = sys._getframe(2)
    while frame is not None:
        path = frame.f_code.co_filename
        if not path.startswith(_STDLIB) and path != __file__:
            resolved = Path(path).resolve()
            return resolved.is_relative_to(_REPO) and not resolved.is_relative_to(_VENV)
        frame = frame.f_back
    return False


def _record_process(event: str, args: tuple[Any, ...]) -> None:
    if _watching[0] and event in _PROCESS_EVENTS and _asked_for_by_the_project():
        _started.append(f"{event} {str(args[:2])[:120]}")


sys.addaudithook(_record_process)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    _started.clear()
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(
    fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest
) -> Generator[None, object, object]:
    was_watching = _watching[0]
    _watching[0] = fixturedef.scope == "function"
    try:
        return (yield)
    finally:
        _watching[0] = was_watching


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    _watching[0] = True
    try:
        yield
    finally:
        _watching[0] = False
    if _started and item.get_closest_marker("slow") is None:
        pytest.fail(
            f"{item.nodeid} starts processes (itself or in its fixtures) but is not "
            f"marked @pytest.mark.slow: "
            f"{_started[0]} (and {len(_started) - 1} more)",
            pytrace=False,
        )
