"""``hami-summary gpu-hours`` over a directory of exports whose modification times are
when they were taken: the namespaces' GPU-hours, the gap said, a CSV of numbers."""

from __future__ import annotations

import math
import os
import time
from pathlib import Path

import pytest

from bot.cli.main import main
from core.simulate import drift_cluster, render_exposition, simulate_cluster
from tests.kube.fake_http import HttpState, http_server
from tests.kube.prometheus_timeline import Timeline, drifting_timeline
from tests.support.gpu_hours_csv import namespace_hours

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
    got = namespace_hours(capsys.readouterr().out)
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


def _truth_hours(timeline: Timeline, since: float, until: float) -> dict[str, float]:
    points = sorted(timeline.truth.items())
    ends = [t for t, _ in points[1:]] + [until]
    hours: dict[str, float] = {}
    for (start, cluster), end in zip(points, ends, strict=True):
        seconds = max(0.0, min(end, until) - max(start, since))
        for a in cluster.allocations:
            hours[a.namespace] = hours.get(a.namespace, 0.0) + a.cores / 100 * seconds / 3600
    return {namespace: value for namespace, value in hours.items() if value > 0}


def test_over_a_prometheus_url_the_hours_are_those_of_its_scrapes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    timeline = drifting_timeline(math.floor(time.time() / 600) * 600)
    with http_server(timeline.state) as url:
        argv = ["gpu-hours", "--prometheus", url, "--selector", 'cluster="prod"', "--since", "3h"]
        assert main([*argv, "--format", "csv"]) == 0
        until = time.time()
        got = namespace_hours(capsys.readouterr().out)
        assert main(argv) == 0
        text = capsys.readouterr().out
    expected = _truth_hours(timeline, until - 3 * 3600, until)
    assert got.keys() == expected.keys()  # nothing of cluster "other"
    for namespace, hours in got.items():
        assert hours == pytest.approx(expected[namespace], abs=0.01), namespace
    assert f'GPU-hours by namespace, {url} {{cluster="prod"}}' in text
    assert "Not counted" not in text
    assert {step for *_, step in timeline.state.range_queries} == {600.0}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "give a directory of exports, or --prometheus URL."),
        (["--selector", 'a="b"'], "--selector needs --prometheus URL."),
        (["DIR", "--prometheus", "http://p:9090"], "give either exports or --prometheus URL"),
        (["--prometheus", "p:9090"], "--prometheus must be an http(s) URL"),
        (
            ["--prometheus", "http://p:9090", "--selector", "cluster=prod"],
            "--selector: cannot read 'cluster=prod' as PromQL label matchers",
        ),
        (["--prometheus", "http://p:9090", "--timeout", "0"], "--timeout must be more than 0"),
    ],
)
def test_a_missing_or_doubled_source_is_explained(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main(["gpu-hours", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hami-summary gpu-hours: ") and message in err, err


def test_an_unreachable_prometheus_is_said_without_a_traceback(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with http_server(HttpState()) as url:
        pass  # closed again: nothing listens there now
    assert main(["gpu-hours", "--prometheus", url, "--timeout", "2"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("hami-summary gpu-hours: ") and "Traceback" not in err, err
    assert "Prometheus" in err


def test_a_prometheus_without_the_scheduler_series_says_so(
    capsys: pytest.CaptureFixture[str],
) -> None:
    timeline = drifting_timeline(math.floor(time.time() / 600) * 600)
    with http_server(timeline.state) as url:
        assert main(["gpu-hours", "--prometheus", url, "--selector", 'cluster="lab"']) == 2
    assert "Prometheus holds fewer than two states" in capsys.readouterr().err
