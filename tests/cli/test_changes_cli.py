"""``hami-summary changes OLD NEW`` as a user runs it: a real process, real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.simulate import drift_cluster, render_exposition, simulate_cluster
from tests.core.history_support import pods_of

_SCRIPT = Path(sys.executable).with_name("hami-summary")
CLI = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "bot.cli.main"]
OLD_TIME = 1_767_225_600  # 2026-01-01 00:00 UTC
NEW_TIME = OLD_TIME + 3 * 3600


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, "changes", *args], capture_output=True, text=True, timeout=120, check=False
    )


@pytest.fixture
def exports(tmp_path: Path) -> tuple[Path, Path, dict[str, int]]:
    before = simulate_cluster(12, 4, seed=4)
    after = drift_cluster(before, steps=15)
    old, new = tmp_path / "before.prom", tmp_path / "after.prom"
    old.write_text(render_exposition(before))
    new.write_text(render_exposition(after))
    os.utime(old, (OLD_TIME, OLD_TIME))
    os.utime(new, (NEW_TIME, NEW_TIME))
    old_pods, new_pods = pods_of(before), pods_of(after)
    counts = {
        "started": len(new_pods.keys() - old_pods.keys()),
        "stopped": len(old_pods.keys() - new_pods.keys()),
    }
    return old, new, counts


@pytest.mark.slow
def test_text_and_json(exports: tuple[Path, Path, dict[str, int]]) -> None:
    old, new, counts = exports
    text = _run(str(old), str(new))
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0] == (
        "Changes in before.prom -> after.prom: 2026-01-01 00:00 UTC -> 2026-01-01 03:00 UTC "
        "(3.0 h apart)"
    )
    assert f"Started holding GPUs: {counts['started']} pod(s)" in text.stdout
    assert f"Stopped holding GPUs: {counts['stopped']} pod(s)" in text.stdout
    assert len(lines) <= 45
    as_json = _run(str(old), str(new), "--format", "json")
    assert as_json.returncode == 0, as_json.stderr
    data = json.loads(as_json.stdout)
    assert len(data["pods_started"]) == counts["started"]
    assert len(data["pods_stopped"]) == counts["stopped"]
    assert data["before_at"] == "2026-01-01T00:00:00+00:00"


@pytest.mark.slow
def test_what_cannot_be_compared_is_named(
    exports: tuple[Path, Path, dict[str, int]], tmp_path: Path
) -> None:
    old, _, _ = exports
    missing = _run(str(old), str(tmp_path / "nope.prom"))
    assert missing.returncode == 2
    assert missing.stderr.startswith("hami-summary changes: cannot read ")
    assert "nope.prom" in missing.stderr and "Traceback" not in missing.stderr
    junk = tmp_path / "notes.txt"
    junk.write_text("nothing to see here\n")
    refused = _run(str(junk), str(old))
    assert refused.returncode == 2
    assert refused.stderr.startswith(f"hami-summary changes: {junk}: ")
    assert "Traceback" not in refused.stderr
    top = _run(str(old), str(old), "--top", "0")
    assert top.returncode == 2 and "--top must be 1 or more; got 0." in top.stderr
