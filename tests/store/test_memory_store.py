"""The in-process store's lock operations behave like Redis's (``tests/store/test_redis_store``)."""

from __future__ import annotations

from bot.store.memory import MemoryStore


def test_extend_if_equals_only_renews_own_live_value() -> None:
    now = [100.0]
    store = MemoryStore(clock=lambda: now[0])
    store.put("lock", b"token-a", 1)
    assert store.extend_if_equals("lock", b"token-b", 30) is False
    now[0] += 0.9
    assert store.extend_if_equals("lock", b"token-a", 30) is True
    now[0] += 29
    assert store.get("lock") == b"token-a"  # renewed: 30 s from the renewal
    now[0] += 1.5
    assert store.get("lock") is None
    assert store.extend_if_equals("lock", b"token-a", 30) is False
    assert store.get("lock") is None  # an expired lock is not revived


def test_replace_if_equals_only_writes_over_the_value_named() -> None:
    store = MemoryStore()
    store.put("post", b"replica-b:sending", 5)
    assert store.replace_if_equals("post", b"replica-a:sending", b"posted", 60) is False
    assert store.get("post") == b"replica-b:sending"
    assert store.replace_if_equals("post", b"replica-b:sending", b"posted", 60) is True
    assert store.get("post") == b"posted"
    assert store.replace_if_equals("absent", b"replica-a:sending", b"posted", 60) is False
    assert store.get("absent") is None
