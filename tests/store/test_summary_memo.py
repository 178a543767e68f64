"""The in-process memo of summaries and rendered files."""

from __future__ import annotations

import threading
import time

import pytest

from bot.store.summary_memo import IdentityMemo, memoized_render
from core.api import summarize_text
from core.model import SourceInfo
from tests.conftest import read_fixture


class Owner:
    """Stands for a CollectedMetrics object: only its identity matters to the memo."""


def test_builds_once_per_owner_and_key() -> None:
    memo: IdentityMemo[str] = IdentityMemo(max_entries=8)
    builds: list[str] = []

    def build(value: str) -> str:
        builds.append(value)
        return value

    first, second = Owner(), Owner()
    assert memo.get_or_build(first, ("ns", None), lambda: build("a")) == "a"
    assert memo.get_or_build(first, ("ns", None), lambda: build("again")) == "a"
    assert memo.get_or_build(first, ("other", None), lambda: build("b")) == "b"
    assert memo.get_or_build(second, ("ns", None), lambda: build("c")) == "c"
    assert builds == ["a", "b", "c"]


def test_concurrent_requests_build_once() -> None:
    memo: IdentityMemo[int] = IdentityMemo(max_entries=8)
    builds: list[int] = []
    owner = Owner()
    barrier = threading.Barrier(10)
    results: list[int] = []

    def slow_build() -> int:
        builds.append(1)
        time.sleep(0.2)
        return 42

    def ask() -> None:
        barrier.wait()
        results.append(memo.get_or_build(owner, "k", slow_build))

    threads = [threading.Thread(target=ask) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [42] * 10 and len(builds) == 1


def test_bounded_and_least_recently_used_goes_first() -> None:
    memo: IdentityMemo[str] = IdentityMemo(max_entries=2)
    a, b, c = Owner(), Owner(), Owner()
    memo.get_or_build(a, "k", lambda: "a")
    memo.get_or_build(b, "k", lambda: "b")
    memo.get_or_build(a, "k", lambda: "not rebuilt")  # a is now the most recent
    memo.get_or_build(c, "k", lambda: "c")
    assert len(memo) == 2
    assert memo.get_or_build(a, "k", lambda: "rebuilt") == "a"
    assert memo.get_or_build(b, "k", lambda: "rebuilt") == "rebuilt"


def test_a_failed_build_is_not_remembered() -> None:
    memo: IdentityMemo[str] = IdentityMemo(max_entries=2)
    owner = Owner()

    def fail() -> str:
        raise ValueError("scheduler text unusable")

    with pytest.raises(ValueError):
        memo.get_or_build(owner, "k", fail)
    assert memo.get_or_build(owner, "k", lambda: "second try") == "second try"


def test_rendered_files_of_a_real_summary_are_made_once() -> None:
    summary = summarize_text(
        read_fixture("scheduler-small.prom"), SourceInfo(kind="paste", label="fixture")
    )
    renders: list[int] = []

    def render() -> bytes:
        renders.append(1)
        return b"gpu,cores\n"

    chart = memoized_render(summary, "test-file.csv", render)
    assert chart() == chart() == b"gpu,cores\n"
    assert memoized_render(summary, "test-file.csv", render)() == b"gpu,cores\n"
    assert len(renders) == 1
