"""``changes`` in ``hami-summary chat``: two pastes in the one thread, then the comparison."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.simulate import drift_cluster, render_exposition, simulate_cluster
from tests.chat.test_chat import chat, saved_paths
from tests.core.history_support import pods_of


@pytest.mark.slow
def test_a_second_paste_then_changes(tmp_path: Path) -> None:
    first = simulate_cluster(3, 2, seed=1)
    second = drift_cluster(first, steps=8)
    started = sorted(pods_of(second).keys() - pods_of(first).keys())
    script = (
        "changes\n"
        + render_exposition(first).rstrip("\n")
        + "\n\n"
        + render_exposition(second).rstrip("\n")
        + "\n\nchanges\n"
    )
    result = chat(stdin=script, tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "this thread has none I remember" in out  # ``changes`` before any paste
    assert "Since the previous paste" in out
    assert f"Started holding GPUs: {len(started)} pod(s)" in out
    listing = [p for p in saved_paths(out) if p.name.startswith("hami-changes-pods")]
    assert listing and all(pod in listing[0].read_text() for _, pod in started)
