"""A conversation over a registry of one cluster, ``demo``, that nothing can collect from."""

from __future__ import annotations

from pathlib import Path

from bot.clusters.registry import load_registry
from bot.conversation.service import Conversation
from bot.live import RegistryLiveSource
from bot.store.memory import MemoryStore
from bot.store.ratelimit import per_user_limiter
from bot.store.state import BotState

CHANNEL = "C0OPS0001"  # the channel ``demo`` is open to


def demo_conversation(tmp_path: Path, *, paste_limit: int | None = None) -> Conversation:
    """``paste_limit``: pastes allowed per user per hour (None: no limit)."""
    registry = tmp_path / "clusters.yaml"
    # Port 9 (discard) is never answered: nothing here may collect.
    registry.write_text(
        "clusters:\n"
        "  - name: demo\n"
        "    metrics_url: http://127.0.0.1:9/metrics\n"
        f"    allowed_channels: [{CHANNEL}]\n"
    )
    store = MemoryStore()
    limiter = per_user_limiter(store, paste_limit, 3600) if paste_limit is not None else None
    return Conversation(
        BotState(store), RegistryLiveSource(load_registry(registry), store), paste_limit=limiter
    )
