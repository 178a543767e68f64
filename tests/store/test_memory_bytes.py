"""The in-process store is bounded by bytes, not only by keys: large pastes cannot grow it
past its bound, and the oldest go first."""

from __future__ import annotations

from bot.config import load_config
from bot.store.factory import store_from_config
from bot.store.memory import MemoryStore

MIB = 1024 * 1024


def test_large_values_evict_the_oldest_to_stay_within_the_bound() -> None:
    store = MemoryStore(max_bytes=20 * MIB)
    for number in range(10):
        store.put(f"paste-{number}", bytes(4 * MIB), 3600)
        assert store.size_bytes <= 20 * MIB
    kept = [n for n in range(10) if store.get(f"paste-{n}") is not None]
    assert kept == [6, 7, 8, 9]  # five would be 20 MiB and their keys: one key too many
    assert store.size_bytes == sum(len(f"paste-{n}") + 4 * MIB for n in kept)


def test_expired_entries_go_before_live_ones() -> None:
    now = [0.0]
    store = MemoryStore(max_bytes=10 * MIB, clock=lambda: now[0])
    store.put("short", bytes(4 * MIB), 10)
    store.put("long", bytes(4 * MIB), 3600)
    now[0] = 20.0
    store.put("new", bytes(4 * MIB), 3600)
    assert store.get("long") is not None and store.get("new") is not None
    assert store.get("short") is None


def test_a_value_over_the_whole_bound_is_not_kept_and_nothing_else_goes() -> None:
    store = MemoryStore(max_bytes=MIB)
    store.put("small", b"x", 60)
    store.put("huge", bytes(2 * MIB), 60)
    assert store.get("huge") is None
    assert store.put_if_absent("huge", bytes(2 * MIB), 60) is False
    assert store.get("small") == b"x"


def test_counters_deletes_and_rewrites_keep_the_count_exact() -> None:
    store = MemoryStore(max_bytes=MIB)
    store.put("k", b"abc", 60)
    store.put("k", b"abcdef", 60)
    assert store.incr("n", 60) == 1 and store.incr("n", 60) == 2
    assert store.size_bytes == len("k") + 6 + len("n") + 1
    store.delete("k")
    assert store.delete_if_equals("n", b"2")
    assert store.size_bytes == 0


def test_the_bound_comes_from_the_environment() -> None:
    config = load_config({"HAMI_SUMMARY_MEMORY_STORE_MIB": "32"})
    store = store_from_config(config.redis)
    assert isinstance(store, MemoryStore)
    store.put("big", bytes(40 * MIB), 60)
    assert store.get("big") is None
    assert load_config({}).redis.memory_max_bytes == 256 * MIB
