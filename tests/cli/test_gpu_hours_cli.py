"""``hami-summary gpu-hours`` over a directory of exports whose modification times are
when they were taken: the namespaces' GPU-hours, the gap said, a CSV of numbers."""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

import pytest

from bot.cli.main import main
from core.simulate import drift_cluster, render_exposition, simulate_cluster

T0 = 1_780_000_000.0


def _exports(folder: Path, offsets: list[float]) -> dict[str, float]:
    """Write one export per offset; the GPU-hours per namespace the test expects, counted
    from the simulator's allocations over the intervals of at most 10 minutes."""
    cluster = simulate_cluster(8, 4, seed=5)
    clusters = [cluster]
    for _ in offsets[1:]:
        clusters.append(drift_cluster(clusters[-1]))
    for number, (c, offset) in enumerate(zip(clusters, offsets, strict=True)):
        path = folder / f"export-{number:02d}.prom"
        path.write_text(render_exposition(c))
        os.utime(path, (T0 + offset, T0 + offset))
    expected: dict[str, float] = {}
    for index in range(len(offsets) - 1):
        seconds = offsets[index + 1] - offsets[index]
        if seconds > 900:  # 1.5x the usual 10 minutes
            continue
        for a in clusters[index].allocations:
            expected[a.namespace] = expected.get(a.namespace, 0.0) + a.cores / 100 * seconds / 3600
    return expected


def test_csv_rows_equal_the_simulators_hours(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = _exports(tmp_path, [0, 600, 1200, 4800, 5400])
    assert main(["gpu-hours", str(tmp_path), "--since", "2h", "--format", "csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    got = {row[0]: float(row[2]) for row in rows[2:]}
    assert got.keys() == {ns for ns, hours in expected.items() if hours > 0}
    for namespace, hours in got.items():
        assert hours == pytest.approx(expected[namespace], abs=1e-4)


def test_text_names_the_gap_and_one_namespaces_pods(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = _exports(tmp_path, [0, 600, 1200, 4800, 5400])
    biggest = max(expected, key=expected.__getitem__)
    assert main(["gpu-hours", str(tmp_path), "--since", "90m", "--ns", biggest]) == 0
    out = capsys.readouterr().out
    assert "covered 30 min by 5 snapshots" in out
    assert "Not counted: 60 min in 1 gap with no snapshot within 15 min of the next" in out
    assert f"Pods of {biggest}" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--since", "2w"], "argument --since: must be minutes, hours or days"),
        (["--max-gap", "0m"], "argument --max-gap: must be minutes, hours or days"),
    ],
)
def test_bad_spans_are_refused_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["gpu-hours", str(tmp_path), *argv])
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


def test_one_export_or_a_bad_file_is_explained(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _exports(tmp_path, [0])
    assert main(["gpu-hours", str(tmp_path)]) == 2
    assert "one export measures no time" in capsys.readouterr().err
    (tmp_path / "notes.txt").write_text("not metrics at all\n")
    assert main(["gpu-hours", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"hami-summary gpu-hours: {tmp_path / 'notes.txt'}:"), err
    assert "Traceback" not in err
    assert main(["gpu-hours", str(tmp_path / "missing")]) == 2
    assert "is neither a file nor a directory" in capsys.readouterr().err
