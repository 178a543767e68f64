"""The guard behind ``--fast``: it sees processes the project starts, not a library's own."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import process_guard


@pytest.mark.slow
def test_a_process_the_project_starts_is_recorded() -> None:
    process_guard._started.clear()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    assert process_guard._started and "subprocess.Popen" in process_guard._started[0]
    process_guard._started.clear()  # this test is marked slow; nothing to report


@pytest.mark.slow
def test_a_library_starting_its_own_process_is_not(tmp_path: Path) -> None:
    # A module outside the repository, as matplotlib is when it runs fc-list to find fonts.
    library = tmp_path / "some_library.py"
    library.write_text(
        "import subprocess, sys\n"
        "def find_fonts():\n"
        "    subprocess.run([sys.executable, '-c', 'pass'], check=True)\n"
    )
    spec = importlib.util.spec_from_file_location("some_library", library)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    process_guard._started.clear()
    module.find_fonts()
    assert process_guard._started == []


@pytest.fixture
def started_for_this_test() -> None:
    subprocess.run([sys.executable, "-c", "pass"], check=True)


@pytest.mark.slow
def test_a_process_a_function_fixture_starts_is_recorded(started_for_this_test: None) -> None:
    assert process_guard._started and "subprocess.Popen" in process_guard._started[0]
    process_guard._started.clear()  # this test is marked slow; nothing to report
