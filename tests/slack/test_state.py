"""Bot state over a real store: thread context, delivery dedupe, picker choices, versions."""

from __future__ import annotations

import json
import threading

from bot.conversation.replies import SummaryRef
from bot.store import codec
from bot.store.memory import MemoryStore
from bot.store.state import BotState, ClusterTarget, PastedMetrics, PickerChoice
from tests.support.redis_topologies import redis_client


def test_thread_metrics_round_trip_and_expire() -> None:
    now = [1000.0]
    store = MemoryStore(clock=lambda: now[0])
    state = BotState(store, thread_ttl_seconds=60, clock=lambda: now[0])
    pasted = PastedMetrics("hami_gpu_core_limit_ratio{} 100\n" * 100, "pasted", "paste", 999.0)
    assert state.remember_thread("C1", "1.1", pasted)
    assert state.thread_subject("C1", "1.1") == pasted
    assert state.thread_subject("C1", "2.2") is None
    target = ClusterTarget("prod", "prod-admin", True)
    state.remember_thread("C1", "3.3", target)
    assert state.thread_subject("C1", "3.3") == target
    now[0] += 61
    assert state.thread_subject("C1", "1.1") is None


def test_a_cluster_thread_remembers_real_usage() -> None:
    state = BotState(MemoryStore())
    target = ClusterTarget("lab", "lab", usage=True)
    assert state.remember_thread("C1", "4.4", target)
    assert state.thread_subject("C1", "4.4") == target
    assert state.thread_subject("C1", "4.4") != ClusterTarget("lab", "lab")


def test_a_cluster_entry_written_before_real_usage_was_remembered_still_reads() -> None:
    store = MemoryStore()
    state = BotState(store)
    # Exactly what the previous release wrote: codec version 1, no "usage" key.
    old_entry = codec.encode(
        "thread", {"type": "cluster", "cluster": "prod", "context": "prod-admin", "runtime": True}
    )
    store.put(state._thread_key("C1", "5.5"), old_entry, 60)
    assert state.thread_subject("C1", "5.5") == ClusterTarget(
        "prod", "prod-admin", runtime=True, usage=False
    )
    # And the previous release reads a new entry: the same version, one more key it ignores.
    state.remember_thread("C1", "6.6", ClusterTarget("prod", None, usage=True))
    payload = codec.decode("thread", store.get(state._thread_key("C1", "6.6")))
    assert payload == {
        "type": "cluster",
        "cluster": "prod",
        "context": None,
        "runtime": False,
        "usage": True,
    }


def test_button_values_carry_real_usage_with_the_cluster() -> None:
    ref = SummaryRef(cluster=ClusterTarget("lab", "lab", usage=True), namespace="team-a")
    assert json.loads(ref.to_value()) == {"cl": "lab", "cx": "lab", "us": 1, "ns": "team-a"}
    assert SummaryRef.from_value(ref.to_value()) == ref and ref.usage
    # A value without "us" (any allocation summary, and every button of before) is allocation.
    old = SummaryRef.from_value('{"cl":"prod","cx":"prod-admin","rt":1}')
    assert old.cluster == ClusterTarget("prod", "prod-admin", runtime=True) and not old.usage


def test_metrics_over_the_size_cap_are_not_kept_and_do_not_leave_old_ones() -> None:
    state = BotState(MemoryStore(), thread_max_bytes=2048)
    small = PastedMetrics("a 1\n", "small", "paste", 1.0)
    assert state.remember_thread("C1", "1.1", small)
    # Random-looking text does not compress below the cap.
    big = PastedMetrics(
        "".join(f"m{i * 7919 % 100003} {i}\n" for i in range(2000)), "big", "paste", 2.0
    )
    assert not state.remember_thread("C1", "1.1", big)
    assert state.thread_subject("C1", "1.1") is None


def test_each_delivery_is_seen_first_exactly_once_across_threads() -> None:
    state = BotState(MemoryStore())
    results: list[bool] = []
    lock = threading.Lock()

    def claim() -> None:
        first = state.first_sighting("event:Ev123")
        with lock:
            results.append(first)

    threads = [threading.Thread(target=claim) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results.count(True) == 1
    assert state.first_sighting("event:Ev124")


def test_picker_choices_are_per_user_and_channel() -> None:
    state = BotState(MemoryStore())
    state.remember_picker("U1", "C1", PickerChoice("prod", "ctx", "team-a"))
    assert state.picker_choice("U1", "C1") == PickerChoice("prod", "ctx", "team-a")
    assert state.picker_choice("U2", "C1") == PickerChoice()
    state.forget_picker("U1", "C1")
    assert state.picker_choice("U1", "C1") == PickerChoice()


def test_every_key_has_the_prefix_and_a_ttl() -> None:
    store = MemoryStore()
    state = BotState(store, prefix="bot:")
    state.remember_thread("C1", "1.1", ClusterTarget("prod", None))
    state.first_sighting("event:Ev1")
    state.remember_picker("U1", "C1", PickerChoice("prod"))
    keys = list(store._data)
    assert keys and all(key.startswith("bot:") for key in keys)
    assert all(expiry != float("inf") for _, expiry in store._data.values())


def test_values_of_another_version_or_kind_read_as_absent() -> None:
    store = MemoryStore()
    state = BotState(store)
    key = state._thread_key("C1", "1.1")
    store.put(key, b"hs\x02\x06thread" + b"j{}", 60)  # version 2: unknown to this release
    assert state.thread_subject("C1", "1.1") is None
    store.put(key, codec.encode("picker", {"cluster": "x"}), 60)  # another kind
    assert state.thread_subject("C1", "1.1") is None
    store.put(key, b"garbage", 60)
    assert state.thread_subject("C1", "1.1") is None
    assert codec.decode("k", codec.encode("k", {"a": 1}, compress=True)) == {"a": 1}


def test_two_replicas_sharing_redis_agree_on_deliveries_and_threads(
    redis_url: str, redis_key_prefix: str
) -> None:

    from bot.store.redis_store import RedisStore

    replica_a = BotState(RedisStore(redis_url, redis_key_prefix))
    replica_b = BotState(RedisStore(redis_url, redis_key_prefix))
    assert replica_a.remember_thread("C1", "8.8", ClusterTarget("lab", "lab", usage=True))
    assert replica_b.thread_subject("C1", "8.8") == ClusterTarget("lab", "lab", usage=True)
    assert replica_a.first_sighting("event:Ev777")
    assert not replica_b.first_sighting("event:Ev777")
    pasted = PastedMetrics("hami_gpu_shared_count{} 2\n", "pasted", "paste", 5.0)
    assert replica_a.remember_thread("C1", "9.9", pasted)
    assert replica_b.thread_subject("C1", "9.9") == pasted
    client = redis_client(redis_url)
    try:
        keys = list(client.scan_iter(match=f"{redis_key_prefix}:*"))
        assert keys and all(0 < client.ttl(key) <= 24 * 3600 for key in keys)
    finally:
        client.close()
