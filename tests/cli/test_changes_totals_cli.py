"""``hami-summary changes`` whose only difference is in the totals: it says what changed."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from bot.cli.main import main
from tests.conftest import read_fixture


def test_changes_never_says_nothing_changed_beside_a_changed_total(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # The GPU's own series moves from 50 to 40 cores; its pods' series do not.
    line = (
        'hami_gpu_core_allocated_ratio{device_index="0",device_type="NVIDIA A100-PCIE-40GB",'
        'device_uuid="GPU-5f3c1a2e-7b4d-4e91-9c0a-1d2e3f405162",node="gpu-node-1",zone="vGPU"} '
    )
    before, after = tmp_path / "before.prom", tmp_path / "after.prom"
    before.write_text(read_fixture("scheduler-small.prom"), encoding="utf-8")
    after.write_text(read_fixture("scheduler-small.prom").replace(line + "50", line + "40"))
    hour_ago = time.time() - 3600
    os.utime(before, (hour_ago, hour_ago))
    code = main(["changes", str(before), str(after)])
    out = capsys.readouterr().out
    assert code == 0
    assert "Cores allocated 275 -> 265 (-10) of 600" in out
    assert "Nothing changed" not in out
