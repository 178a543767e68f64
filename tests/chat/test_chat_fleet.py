"""``/hami-summary fleet`` in ``hami-summary chat``: every registered cluster, one line each,
from a real process against a drifting simulated scheduler and one that is not there."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.demo_exporter import start_demo_exporter
from tests.chat.test_chat import chat
from tests.support.redis_server import free_port


@pytest.mark.slow
def test_fleet_lists_every_cluster_with_its_figures_or_its_problem(tmp_path: Path) -> None:
    with start_demo_exporter(nodes=3, gpus_per_node=2, seed=4, drift_seconds=1) as exporter:
        registry = tmp_path / "clusters.yaml"
        registry.write_text(
            "clusters:\n"
            "  - name: demo\n"
            f"    metrics_url: {exporter.url}\n"
            "  - name: gone\n"
            f"    metrics_url: http://127.0.0.1:{free_port()}/metrics\n"
        )
        result = chat(
            stdin="/hami-summary fleet\n",
            tmp_path=tmp_path,
            env={"HAMI_CLUSTERS_FILE": str(registry)},
        )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "Fleet: 2 registered cluster(s), collected in parallel:" in lines
    demo = next(line for line in lines if line.startswith("  - demo: "))
    assert demo.startswith("  - demo: 6 GPUs on 3 nodes · cores ")
    assert "free whole GPUs: " in demo and "scraped 0 s ago" in demo
    gone = next(line for line in lines if line.startswith("  - gone: "))
    assert gone.startswith("  - gone: could not collect: Cannot reach the metrics URL of cluster")
    assert "connection refused" in gone
