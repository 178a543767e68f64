"""Fixtures: a running local Kubernetes API server with HAMi laid out as its chart does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.kube.fake_apiserver import FakeApiServer, FakeCluster, hami_cluster


@pytest.fixture
def cluster() -> FakeCluster:
    return hami_cluster()


@pytest.fixture
def api_server(cluster: FakeCluster) -> Iterator[FakeApiServer]:
    with FakeApiServer(cluster) as server:
        yield server


@pytest.fixture
def kubeconfig(api_server: FakeApiServer, tmp_path: Path) -> Path:
    return api_server.write_kubeconfig(tmp_path / "kubeconfig", context="test")
