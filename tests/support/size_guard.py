"""Tests that build a 1,000-node cluster are marked ``slow``, like those that start processes.

Simulating, summarising and drawing 8,000 GPUs takes seconds, and ``python3 -m bot.quickstart
test --fast`` (``-m "not slow"``) must stay quick for the edit-test loop. Tests build clusters
that large with the simulator: while a test runs (its fixtures included), a call of
``simulate_cluster`` for 1,000 nodes or more from a test not marked ``@pytest.mark.slow`` fails
that test and says why. Outside a test run (benchmarks, scripts) nothing is checked.
"""

from __future__ import annotations

from collections.abc import Generator
from functools import wraps
from typing import Any

import pytest

import core.simulate
import core.simulate.generate
from core.simulate import SimulatedCluster

LARGE_CLUSTER_NODES = 1000
_current: list[pytest.Item | None] = [None]
_simulate_cluster = core.simulate.generate.simulate_cluster


@wraps(_simulate_cluster)
def _guarded_simulate_cluster(nodes: int, gpus_per_node: int, **kwargs: Any) -> SimulatedCluster:
    item = _current[0]
    if nodes >= LARGE_CLUSTER_NODES and item is not None and not item.get_closest_marker("slow"):
        pytest.fail(
            f"{item.nodeid} builds a {nodes}-node cluster but is not marked @pytest.mark.slow",
            pytrace=False,
        )
    return _simulate_cluster(nodes, gpus_per_node, **kwargs)


# Before any test module imports it by name.
core.simulate.generate.simulate_cluster = _guarded_simulate_cluster
core.simulate.simulate_cluster = _guarded_simulate_cluster


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, object, object]:
    _current[0] = item
    try:
        return (yield)
    finally:
        _current[0] = None
