"""A Prometheus that scraped a drifting simulated HAMi scheduler every few minutes.

Each scrape stores the simulator's exposition at that time, with the target labels a
ServiceMonitor adds and ``cluster="prod"``; a second cluster (``cluster="other"``, another seed)
is scraped beside it, so a selector that filters badly shows. The simulated states are kept as
the ground truth of each scrape.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.simulate import SimulatedCluster, drift_cluster, render_exposition, simulate_cluster
from tests.kube.fake_http import SCRAPE_TARGET_LABELS, HttpState, series_from_exposition


@dataclass
class Timeline:
    state: HttpState
    truth: dict[float, SimulatedCluster]  # scrape time -> the prod cluster then

    def at_or_before(self, moment: float) -> tuple[float, SimulatedCluster]:
        newest = max(t for t in self.truth if t <= moment)
        return newest, self.truth[newest]


def drifting_timeline(
    newest: float, *, scrapes: int = 37, every_seconds: float = 600.0, steps_between: int = 2
) -> Timeline:
    """``scrapes`` scrapes ``every_seconds`` apart, the last at ``newest``; the cluster drifts
    ``steps_between`` simulator steps between two scrapes."""
    prod = simulate_cluster(6, 4, seed=3)
    other = simulate_cluster(3, 2, seed=8)
    state = HttpState()
    truth: dict[float, SimulatedCluster] = {}
    for index in range(scrapes):
        moment = newest - (scrapes - 1 - index) * every_seconds
        truth[moment] = prod
        state.timeline[moment] = series_from_exposition(
            render_exposition(prod), {**SCRAPE_TARGET_LABELS, "cluster": "prod"}, moment
        ) + series_from_exposition(
            render_exposition(other), {**SCRAPE_TARGET_LABELS, "cluster": "other"}, moment
        )
        prod = drift_cluster(prod, steps=steps_between)
        other = drift_cluster(other, steps=steps_between)
    return Timeline(state, truth)
