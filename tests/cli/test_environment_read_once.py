"""The process environment is read in one module, ``bot/config.py``: every other module gets its
settings passed in, so a maintainer finds every variable (and its checks) in one place."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ALLOWED = {Path("bot/config.py")}


def test_only_bot_config_reads_the_environment() -> None:
    readers = sorted(
        str(path.relative_to(ROOT))
        for package in ("bot", "core")
        for path in (ROOT / package).rglob("*.py")
        if path.relative_to(ROOT) not in ALLOWED
        and ("os.environ" in (text := path.read_text(encoding="utf-8")) or "getenv" in text)
    )
    assert readers == []
