"""A cluster's one-line headline (fleet view, App Home) holds the simulator's true figures."""

from __future__ import annotations

import pytest

from core.headline import headline_of, headline_text
from core.simulate import simulate_cluster
from core.views.tables import short_type
from tests.core.history_support import free_whole_per_model, summary_of


@pytest.mark.parametrize("seed", [1, 7])
def test_headline_figures_are_the_true_ones(seed: int) -> None:
    cluster = simulate_cluster(12, 4, seed=seed)
    headline = headline_of(summary_of(cluster))
    free = free_whole_per_model(cluster)
    assert {m.model: m.free_whole for m in headline.models} == free
    assert {m.model: m.gpus for m in headline.models} == {
        model: sum(1 for d in cluster.devices if d.device_type == model) for model in free
    }
    cores = sum(a.cores for a in cluster.allocations)
    assert headline.core_allocated_percent == pytest.approx(cores / (48 * 100) * 100)
    assert headline.gpus == 48 and headline.nodes == 12
    assert headline.free_whole_gpus == sum(free.values())


def test_headline_text_in_the_summary_number_style() -> None:
    cluster = simulate_cluster(3, 2, seed=2)
    headline = headline_of(summary_of(cluster))
    free = free_whole_per_model(cluster)
    per_model = ", ".join(
        f"{short_type(model)} {free[model]} of "
        f"{sum(1 for d in cluster.devices if d.device_type == model)}"
        for model in sorted(free)
    )
    assert headline_text(headline).startswith(
        f"6 GPUs on 3 nodes · cores {headline.core_allocated_percent:.1f}% · memory "
        f"{headline.mem_allocated_percent:.1f}% · free whole GPUs: {per_model}"
    )
