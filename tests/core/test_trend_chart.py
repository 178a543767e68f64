"""The trend chart: its series hold the snapshots' numbers, and it renders a valid PNG."""

from __future__ import annotations

import io

import pytest
from matplotlib.image import imread

from core.history.snapshot import Snapshot
from core.simulate import SimulatedCluster, drift_cluster, simulate_cluster
from core.views.trend_chart import OTHER_LABEL, render_trend_chart, trend_series
from tests.core.history_support import free_whole_per_model, snapshot_at

T0 = 1_767_225_600.0


@pytest.fixture(scope="module")
def history() -> tuple[list[Snapshot], list[SimulatedCluster]]:
    cluster = simulate_cluster(60, 4, seed=5)
    snapshots: list[Snapshot] = []
    clusters: list[SimulatedCluster] = []
    for step in range(6):
        snapshots.append(snapshot_at(cluster, T0 + step * 1800))
        clusters.append(cluster)
        cluster = drift_cluster(cluster, steps=8)
    return snapshots, clusters


def test_series_hold_every_namespace_and_model(
    history: tuple[list[Snapshot], list[SimulatedCluster]],
) -> None:
    snapshots, clusters = history
    series = trend_series(list(reversed(snapshots)))  # any order in, oldest first out
    assert [t.timestamp() for t in series.times] == [s.taken_at for s in snapshots]
    names = [name for name, _ in series.namespace_cores]
    assert len(names) == 9 and names[-1] == OTHER_LABEL
    newest = clusters[-1].namespace_totals()
    top8 = sorted(newest, key=lambda ns: (-newest[ns][0], ns))[:8]
    assert names[:8] == top8
    for index, cluster in enumerate(clusters):
        totals = cluster.namespace_totals()
        stacked = sum(values[index] for _, values in series.namespace_cores)
        assert stacked == sum(cores for cores, _ in totals.values())
        free = free_whole_per_model(cluster)
        assert {model: values[index] for model, values in series.free_whole} == free


def test_chart_is_a_valid_png(history: tuple[list[Snapshot], list[SimulatedCluster]]) -> None:
    snapshots, _ = history
    png = render_trend_chart(snapshots)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) < 1_000_000
    image = imread(io.BytesIO(png))
    assert image.shape[1] == 1400 and image.shape[0] == 800
    assert render_trend_chart(snapshots) == png  # the same history gives the same bytes
    one = render_trend_chart(snapshots[:1])
    assert one[:8] == b"\x89PNG\r\n\x1a\n"


def test_namespaces_in_one_chart_never_share_a_colour(
    history: tuple[list[Snapshot], list[SimulatedCluster]],
) -> None:
    from core.views.trend_chart import build_trend_figure

    snapshots, _ = history
    figure = build_trend_figure(snapshots)
    areas = figure.axes[0].collections
    colours = [tuple(area.get_facecolor()[0]) for area in areas]
    assert len(areas) == 9 and len(set(colours)) == 9
