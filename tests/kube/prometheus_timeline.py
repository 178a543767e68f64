"""A Prometheus that scraped a drifting simulated HAMi scheduler every few minutes.

Each scrape stores the simulator's exposition at that time, with the target labels a
ServiceMonitor adds and ``cluster="prod"``; a second cluster (``cluster="other"``, another seed)
is scraped beside it, so a selector that filters badly shows. The simulated states are kept as
the ground truth of each scrape.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

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
    state = HttpState()
    truth: dict[float, SimulatedCluster] = {}
    for index, (prod, items) in enumerate(_drifted(scrapes, steps_between)):
        moment = newest - (scrapes - 1 - index) * every_seconds
        truth[moment] = prod
        state.timeline[moment] = [
            {"metric": dict(item["metric"]), "value": [moment, item["value"][1]]} for item in items
        ]
    return Timeline(state, truth)


@cache
def _drifted(
    scrapes: int, steps_between: int
) -> tuple[tuple[SimulatedCluster, tuple[dict[str, Any], ...]], ...]:
    """Each scrape's prod cluster and the series of both clusters, stamped at time 0.

    Simulating, drifting and parsing do not depend on when the scrapes happen, so they run
    once per process; each timeline stamps the series with its own times.
    """
    prod = simulate_cluster(6, 4, seed=3)
    other = simulate_cluster(3, 2, seed=8)
    out = []
    for _ in range(scrapes):
        items = series_from_exposition(
            render_exposition(prod), {**SCRAPE_TARGET_LABELS, "cluster": "prod"}, 0.0
        ) + series_from_exposition(
            render_exposition(other), {**SCRAPE_TARGET_LABELS, "cluster": "other"}, 0.0
        )
        out.append((prod, tuple(items)))
        prod = drift_cluster(prod, steps=steps_between)
        other = drift_cluster(other, steps=steps_between)
    return tuple(out)
