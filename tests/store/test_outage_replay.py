"""Writes made while Redis was away reach Redis when it is back: a thread started during an
outage is known afterwards to a fresh store (another replica), with its TTL kept."""

from __future__ import annotations

import time

import pytest
import redis

from bot.notify.records import AlertPost, NotifyRecords
from bot.store.outage_journal import OutageJournal
from bot.store.redis_store import RedisStore
from bot.store.resilient import ResilientStore
from bot.store.state import BotState, ClusterTarget, PastedMetrics, PickerChoice
from tests.conftest import read_fixture
from tests.support.redis_server import RedisServerProcess, free_port

CHANNEL = "C0HAMI01"
THREAD_TTL = 24 * 3600.0


def _wait_until_ok(store: ResilientStore) -> None:
    deadline = time.monotonic() + 10
    while store.check_health().state != "ok" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert store.check_health().state == "ok"


@pytest.mark.slow
def test_threads_and_picker_choices_of_an_outage_survive_it(
    private_redis: RedisServerProcess,
) -> None:
    store = ResilientStore(RedisStore(private_redis.url, "t"), retry_interval_seconds=0.2)
    state = BotState(store, thread_ttl_seconds=THREAD_TTL)
    state.remember_picker("U1", CHANNEL, PickerChoice(cluster="old"))

    private_redis.stop()  # and it comes back empty: no persistence
    paste = PastedMetrics(read_fixture("scheduler-small.prom"), "pasted", "paste", 1.7e9)
    cluster = ClusterTarget("prod", "prod-admin", runtime=True, usage=False)
    assert state.remember_thread(CHANNEL, "1700000000.000100", paste) is True
    assert state.remember_thread(CHANNEL, "1700000000.000200", cluster) is True
    state.remember_picker("U2", CHANNEL, PickerChoice(cluster="prod", namespace="team-a"))
    state.forget_picker("U1", CHANNEL)
    assert store.redis_state() == "degraded"

    private_redis.start()
    _wait_until_ok(store)

    # Another replica: its own connection, nothing in its memory.
    other_redis = RedisStore(private_redis.url, "t")
    other = BotState(other_redis)
    assert other.thread_subject(CHANNEL, "1700000000.000100") == paste
    assert other.thread_subject(CHANNEL, "1700000000.000200") == cluster
    assert other.picker_choice("U2", CHANNEL) == PickerChoice(cluster="prod", namespace="team-a")
    assert other.picker_choice("U1", CHANNEL) == PickerChoice()
    # The TTL is what was left of it, not a new one and not none.
    remaining = other_redis.ttl_seconds("bot:thread:C0HAMI01:1700000000.000200")
    assert remaining is not None and THREAD_TTL - 120 < remaining <= THREAD_TTL


def test_the_journal_keeps_the_last_write_per_key_within_its_bounds() -> None:
    now = [0.0]
    journal = OutageJournal(lambda: now[0], max_entries=3, max_bytes=1000)
    for n in range(5):
        journal.record_put(f"k{n}", b"x", 60)
    journal.record_put("k4", b"newest", 10)
    journal.record_delete("k3")
    entries, dropped = journal.take()
    assert [(e.key, e.value) for e in entries] == [("k2", b"x"), ("k4", b"newest"), ("k3", None)]
    assert dropped == 2
    assert len(journal) == 0

    journal.record_put("big", b"y" * 900, 60)
    journal.record_put("bigger", b"z" * 200, 60)  # 1,100 bytes in all: the oldest goes
    journal.record_put("short", b"s", 5)
    now[0] = 30.0  # "short" has expired by the time Redis is back: not copied
    entries, dropped = journal.take()
    assert [e.key for e in entries] == ["bigger"] and dropped == 1


def test_entries_a_replay_could_not_write_are_kept_behind_newer_writes() -> None:
    journal = OutageJournal(lambda: 0.0, max_entries=10)
    journal.record_put("a", b"1", 60)
    journal.record_put("b", b"1", 60)
    entries, _ = journal.take()
    journal.record_put("b", b"2", 60)  # written while the replay ran
    journal.give_back(entries, dropped=4)
    again, dropped = journal.take()
    assert [(e.key, e.value) for e in again] == [("a", b"1"), ("b", b"2")]
    assert dropped == 4  # still reported when the replay that failed is done again


@pytest.mark.slow
def test_a_choice_forgotten_while_redis_refused_writes_stays_forgotten(
    private_redis: RedisServerProcess,
) -> None:
    store = ResilientStore(RedisStore(private_redis.url, "t"), retry_interval_seconds=0.2)
    state = BotState(store)
    state.remember_picker("U1", CHANNEL, PickerChoice(cluster="prod"))
    admin = redis.Redis.from_url(private_redis.url, socket_timeout=2)
    admin.replicaof("127.0.0.1", free_port())  # read-only; keeps its data meanwhile
    try:
        state.forget_picker("U1", CHANNEL)
        assert store.redis_state() == "degraded"
        assert BotState(RedisStore(private_redis.url, "t")).picker_choice("U1", CHANNEL) == (
            PickerChoice(cluster="prod")
        )
    finally:
        admin.replicaof("NO", "ONE")
    _wait_until_ok(store)
    assert BotState(RedisStore(private_redis.url, "t")).picker_choice("U1", CHANNEL) == (
        PickerChoice()
    )


@pytest.mark.slow
def test_a_compare_and_delete_of_an_outage_removes_only_the_value_it_named(
    private_redis: RedisServerProcess,
) -> None:
    # A replica writes its digest mark, loses Redis before the answer, and takes the mark back
    # from memory: once Redis is back, its own mark goes, and another replica's value stays.
    store = ResilientStore(RedisStore(private_redis.url, "t"), retry_interval_seconds=0.2)
    store.put("mine", b"replica-a:sending", 60)
    store.put("theirs", b"replica-b:posted", 60)
    private_redis.pause()
    try:
        assert store.delete_if_equals("mine", b"replica-a:sending") is False
        assert store.delete_if_equals("theirs", b"replica-a:sending") is False
        assert store.redis_state() == "degraded"
    finally:
        private_redis.resume()
    _wait_until_ok(store)
    other = RedisStore(private_redis.url, "t")
    assert other.get("mine") is None
    assert other.get("theirs") == b"replica-b:posted"


@pytest.mark.slow
def test_a_compare_and_set_of_an_outage_puts_back_only_over_the_value_it_named(
    private_redis: RedisServerProcess,
) -> None:
    # A replica wrote its alert's ``sending`` record over the ``posted`` one, the post failed,
    # and Redis went away before the record was put back: once Redis is back the old record
    # returns, over that replica's own ``sending`` only, with what is left of its TTL.
    store = ResilientStore(RedisStore(private_redis.url, "t"), retry_interval_seconds=0.2)
    store.put("mine", b"replica-a:sending", 60)
    store.put("taken-over", b"replica-b:sending", 60)  # another replica's, since
    private_redis.pause()
    try:
        assert store.replace_if_equals("mine", b"replica-a:sending", b"posted", 600) is False
        assert store.replace_if_equals("taken-over", b"replica-a:sending", b"posted", 600) is False
        assert store.redis_state() == "degraded"
    finally:
        private_redis.resume()
    _wait_until_ok(store)
    other = RedisStore(private_redis.url, "t")
    assert other.get("mine") == b"posted"
    assert other.get("taken-over") == b"replica-b:sending"
    remaining = other.ttl_seconds("mine")
    assert remaining is not None and 500 < remaining <= 600


@pytest.mark.slow
def test_an_alert_post_record_taken_back_while_redis_is_away_returns_once_it_is_back(
    private_redis: RedisServerProcess,
) -> None:
    # The firing message is posted; its resolution is claimed, Slack refuses it, and Redis is
    # away when the claim is taken back. The ``posted`` firing record must come back: left as
    # ``sending``, the resolution would count as sent and never be posted.
    store = ResilientStore(RedisStore(private_redis.url, "t"), retry_interval_seconds=0.2)
    records = NotifyRecords(store)
    posted = AlertPost(True, "posted", 1.0e9, "replica-a", ts="1.0001", channel="C0OPS")
    records.mark_alert_post("demo", "few-free", posted)
    before = records.stored_alert_post("demo", "few-free")
    resolving = AlertPost(False, "sending", 1.0e9 + 60, "replica-a")
    assert records.claim_alert_post("demo", "few-free", resolving, before) == "kept"
    private_redis.pause()
    try:
        records.restore_alert_post("demo", "few-free", resolving, before)
        assert store.redis_state() == "degraded"
    finally:
        private_redis.resume()
    _wait_until_ok(store)
    assert (
        NotifyRecords(RedisStore(private_redis.url, "t")).alert_post("demo", "few-free") == posted
    )
