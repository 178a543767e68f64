"""``core`` is pure: it never imports ``bot`` nor any library that does network or Slack I/O."""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "core"
FORBIDDEN = (
    "bot",
    "socket",
    "http",
    "urllib",
    "requests",
    "redis",
    "slack_sdk",
    "slack_bolt",
    "kubernetes",
    "websocket",
    "websockets",
    "subprocess",
)


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def test_core_imports_nothing_with_io() -> None:
    offenders = {
        str(path.relative_to(CORE.parent)): sorted(_imports(path) & set(FORBIDDEN))
        for path in CORE.rglob("*.py")
    }
    offenders = {name: bad for name, bad in offenders.items() if bad}
    assert offenders == {}


def test_the_check_sees_core_modules() -> None:
    # Guard against a vacuous pass: the walk must find the engine's modules.
    names = {p.name for p in CORE.rglob("*.py")}
    assert {"api.py", "model.py", "readings.py", "build.py"} <= names
