"""``fit`` in ``hami-summary chat``: a file, then ``fit`` follow-ups, through piped stdin."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.api import summarize_text
from core.model import SourceInfo
from core.simulate import simulate_exposition
from tests.chat.test_chat import chat
from tests.conftest import FIXTURES
from tests.core.test_fit import oracle_fit


@pytest.mark.slow
def test_fit_follow_ups_in_the_chat(tmp_path: Path) -> None:
    script = "fit 1xA100\nfit 8xH100\nfit 2x50\nfit\nfit 1\nquit\n"
    result = chat(str(FIXTURES / "scheduler-small.prom"), stdin=script, tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "1 x A100, whole GPU: fits now on 1 node, 1 placement." in out
    assert "8 x H100, whole GPUs: does not fit now." in out
    assert "no GPU model matches 'H100'. Models here:" in out
    assert "'50' has no unit" in out
    assert "`fit` needs a job shape" in out
    # A count alone is the follow-up, though it has the shape of a sample named fit.
    assert "1 GPU, whole GPU: fits now on 2 nodes, 2 placements." in out
    assert "Traceback" not in out + result.stderr


@pytest.mark.slow
def test_fit_on_a_simulated_cluster_in_the_chat(tmp_path: Path) -> None:
    metrics = tmp_path / "sim.prom"
    text = simulate_exposition(10, 8, seed=2)
    metrics.write_text(text, encoding="utf-8")
    result = chat(str(metrics), stdin="fit 1x25c/8GiB\nquit\n", tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    gpus = summarize_text(text, SourceInfo(kind="file", label="sim")).gpus
    nodes, placements = oracle_fit(gpus, "1x25c/8GiB")
    assert nodes > 0
    assert (
        f"1 GPU, 25 cores and 8.0 GiB each: fits now on {nodes:,} nodes, "
        f"{placements:,} placements." in result.stdout
    )
