"""requirements.lock, deploy/build-requirements.lock and requirements.txt agree with pyproject.toml.

Offline: nothing is resolved here. Every runtime dependency must be pinned at a version its
specifier allows, every pin must carry hashes, and the lock's first line must name the
dependency list it was made from (so editing pyproject.toml without `python deploy/lock.py`
fails here, with the command to run).
"""

from __future__ import annotations

import importlib.util
import re
import tomllib
from pathlib import Path
from types import ModuleType

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO = Path(__file__).resolve().parents[2]
PIN_BLOCK = re.compile(
    r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[^\s;\\]+)"
    r"(?:\s*;\s*(?P<marker>[^\\\n]+?))?\s*\\\n(?P<hashes>(?:\s+--hash=sha256:[0-9a-f]{64}\s*\\?\n?)+)",
    re.MULTILINE,
)
# The image's Python and the platforms it runs on.
IMAGE_ENVIRONMENT = {
    "python_version": "3.11",
    "python_full_version": "3.11.16",
    "sys_platform": "linux",
    "platform_system": "Linux",
    "platform_machine": "x86_64",
    "implementation_name": "cpython",
}


def lock_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("deploy_lock", REPO / "deploy" / "lock.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def locked(path: Path) -> dict[str, list[tuple[Version, str | None]]]:
    """name -> [(version, marker)], each pin checked to carry at least one sha256."""
    pins: dict[str, list[tuple[Version, str | None]]] = {}
    text = path.read_text()
    blocks = list(PIN_BLOCK.finditer(text))
    pinned_lines = [line for line in text.splitlines() if re.match(r"^[A-Za-z0-9].*==", line)]
    assert len(blocks) == len(pinned_lines), f"{path.name}: a pin without --hash lines"
    for block in blocks:
        name = canonicalize_name(block["name"])
        pins.setdefault(name, []).append((Version(block["version"]), block["marker"]))
    return pins


def for_image(entries: list[tuple[Version, str | None]]) -> list[Version]:
    """The pinned versions that apply on the image's platform: one, or none for a backport."""
    chosen = [
        v for v, marker in entries if marker is None or Marker(marker).evaluate(IMAGE_ENVIRONMENT)
    ]
    assert len(chosen) <= 1, entries
    return chosen


def test_the_lock_was_made_from_this_pyproject() -> None:
    tool = lock_tool()
    first_line = (REPO / "requirements.lock").read_text().splitlines()[0]
    expected = tool.FINGERPRINT_PREFIX + tool.dependency_fingerprint(
        (REPO / "pyproject.toml").read_text()
    )
    assert first_line == expected, (
        "requirements.lock is stale: the dependencies in pyproject.toml changed. "
        "Run `python deploy/lock.py` and commit the three files it writes."
    )


def test_every_runtime_dependency_is_pinned_where_its_specifier_allows() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    pins = locked(REPO / "requirements.lock")
    for text in project["dependencies"]:
        requirement = Requirement(text)
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{name} is not in requirements.lock: run python deploy/lock.py"
        for version, _ in pins[name]:
            assert requirement.specifier.contains(version, prereleases=True), (name, version)
        assert len(for_image(pins[name])) == 1, f"{name}: no pin for the image's Python"
    # No package is pinned twice for the same platform.
    for entries in pins.values():
        for_image(entries)


def test_the_fingerprint_follows_every_dependency_edit() -> None:
    tool = lock_tool()
    pyproject = (REPO / "pyproject.toml").read_text()
    opening = "dependencies = [\n"
    with_waitress = pyproject.replace(opening, opening + '    "waitress>=3",\n')
    assert with_waitress != pyproject
    assert tool.dependency_fingerprint(with_waitress) != tool.dependency_fingerprint(pyproject)
    dev_only = pyproject.replace('"ruff>=0.5",', '"ruff>=0.6",')
    assert tool.dependency_fingerprint(dev_only) == tool.dependency_fingerprint(pyproject)


def test_requirements_txt_installs_the_locked_set_and_the_project() -> None:
    tool = lock_tool()
    lock_text = (REPO / "requirements.lock").read_text()
    assert (REPO / "requirements.txt").read_text() == tool.requirements_txt(lock_text)
    lines = [
        line
        for line in (REPO / "requirements.txt").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    assert lines[-1] == "."
    assert len(lines) - 1 == len(tool.pins(lock_text)) > 10


def test_the_build_tools_are_pinned_with_hashes() -> None:
    pins = locked(REPO / "deploy" / "build-requirements.lock")
    assert {"pip", "setuptools", "wheel"} <= set(pins)
    build_system = tomllib.loads((REPO / "pyproject.toml").read_text())["build-system"]
    for text in build_system["requires"]:
        requirement = Requirement(text)
        [version] = for_image(pins[canonicalize_name(requirement.name)])
        assert requirement.specifier.contains(version), (requirement, version)
