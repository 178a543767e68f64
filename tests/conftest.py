"""Settings shared by every test: fixture paths and a private matplotlib config folder."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from tests.support.redis_server import private_redis  # noqa: F401
from tests.support.redis_topologies import redis_key_prefix, redis_url  # noqa: F401

# matplotlib must never touch the user's config or need a display (DESIGN.md, "Charts").
os.environ.setdefault("MPLCONFIGDIR", tempfile.mkdtemp(prefix="hami-summary-mpl-"))
os.environ.setdefault("MPLBACKEND", "Agg")

FIXTURES = Path(__file__).parent / "fixtures"

# pytest.approx looks numpy up in sys.modules; while a bot thread imports matplotlib (and so
# numpy) for a chart, it would find a half-initialised module and fail. Import it whole first.
import numpy  # noqa: E402, F401


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES


def read_fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


# A test that starts a process without @pytest.mark.slow fails (see the module).
from tests.support.process_guard import (  # noqa: E402, F401
    pytest_fixture_setup,
    pytest_runtest_call,
    pytest_runtest_setup,
)

# A test that builds a 1,000-node cluster without @pytest.mark.slow fails (see the module).
from tests.support.size_guard import pytest_runtest_protocol  # noqa: E402, F401
