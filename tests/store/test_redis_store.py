"""RedisStore against a real redis-server: the KeyValueStore contract, TTLs, prefix, timeouts."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator

import pytest
import redis
from redis.cluster import RedisCluster

from bot.store.redis_store import RedisStore, StoreUnavailableError
from tests.support.redis_topologies import redis_client


@pytest.fixture
def store(redis_url: str, redis_key_prefix: str) -> Iterator[RedisStore]:
    kv = RedisStore(redis_url, redis_key_prefix)
    yield kv
    kv.close()


@pytest.fixture
def raw(redis_url: str) -> Iterator[redis.Redis | RedisCluster]:
    client = redis_client(redis_url)
    yield client
    client.close()


def test_put_get_and_expiry(store: RedisStore) -> None:
    assert store.get("missing") is None
    # A TTL no stall between the two calls can outlast, then a short one waited out: on a
    # loaded machine a wait can only be longer, never shorter.
    store.put("answer", b"\x00binary\xff", ttl_seconds=30)
    assert store.get("answer") == b"\x00binary\xff"
    store.put("brief", b"gone soon", ttl_seconds=0.05)
    time.sleep(0.3)
    assert store.get("brief") is None
    assert store.get("answer") == b"\x00binary\xff"


def test_every_key_is_under_the_prefix_and_has_a_ttl(
    store: RedisStore, raw: redis.Redis, redis_key_prefix: str
) -> None:
    store.put("a", b"1", 60)
    store.put_if_absent("b", b"1", 60)
    store.incr("c", 60)
    keys = sorted(k.decode() for k in raw.scan_iter(match=f"{redis_key_prefix}:*"))
    assert keys == [f"{redis_key_prefix}:{name}" for name in ("a", "b", "c")]
    for key in keys:
        remaining_ms = raw.pttl(key)
        assert 0 < remaining_ms <= 60_000, key


def test_put_if_absent_is_exclusive(store: RedisStore) -> None:
    assert store.put_if_absent("lock", b"first", 5) is True
    assert store.put_if_absent("lock", b"second", 5) is False
    assert store.get("lock") == b"first"


def test_put_if_absent_has_one_winner_among_threads(store: RedisStore) -> None:
    winners: list[int] = []
    barrier = threading.Barrier(20)

    def contend(n: int) -> None:
        barrier.wait()
        if store.put_if_absent("race", str(n).encode(), 5):
            winners.append(n)

    threads = [threading.Thread(target=contend, args=(n,)) for n in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(winners) == 1
    assert store.get("race") == str(winners[0]).encode()


def test_replace_durably_has_one_winner_among_threads_that_read_the_same(
    store: RedisStore,
) -> None:
    # Two replicas that both read an empty digest slot: one marks it, whatever the topology.
    winners: list[int] = []
    barrier = threading.Barrier(10)

    def contend(n: int) -> None:
        barrier.wait()
        if store.replace_durably("slot", None, str(n).encode(), 5) != "changed":
            winners.append(n)

    threads = [threading.Thread(target=contend, args=(n,)) for n in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(winners) == 1
    assert store.get("slot") == str(winners[0]).encode()
    ttl = store.ttl_seconds("slot")
    assert ttl is not None and 0 < ttl <= 5


def test_replace_if_equals_only_writes_over_the_value_named(store: RedisStore) -> None:
    # Putting back an alert's post record: only over one's own ``sending``, with a new TTL.
    store.put("post", b"replica-b:sending", 5)
    assert store.replace_if_equals("post", b"replica-a:sending", b"posted", 60) is False
    assert store.get("post") == b"replica-b:sending"
    assert store.replace_if_equals("post", b"replica-b:sending", b"posted", 60) is True
    assert store.get("post") == b"posted"
    ttl = store.ttl_seconds("post")
    assert ttl is not None and 5 < ttl <= 60
    assert store.replace_if_equals("absent", b"replica-a:sending", b"posted", 60) is False
    assert store.get("absent") is None


def test_delete_if_equals_only_removes_own_value(store: RedisStore) -> None:
    store.put("lock", b"token-a", 5)
    assert store.delete_if_equals("lock", b"token-b") is False
    assert store.get("lock") == b"token-a"
    assert store.delete_if_equals("lock", b"token-a") is True
    assert store.get("lock") is None
    assert store.delete_if_equals("lock", b"token-a") is False


def test_extend_if_equals_only_renews_own_value(store: RedisStore) -> None:
    store.put("lock", b"token-a", 1)
    assert store.extend_if_equals("lock", b"token-b", 30) is False
    remaining = store.ttl_seconds("lock")
    assert remaining is not None and remaining <= 1
    assert store.extend_if_equals("lock", b"token-a", 30) is True
    remaining = store.ttl_seconds("lock")
    assert remaining is not None and 29 < remaining <= 30
    assert store.get("lock") == b"token-a"
    store.delete("lock")
    assert store.extend_if_equals("lock", b"token-a", 30) is False
    assert store.get("lock") is None  # an expired lock is not revived


def test_delete(store: RedisStore) -> None:
    store.put("k", b"v", 5)
    store.delete("k")
    store.delete("never-there")
    assert store.get("k") is None


def test_incr_counts_and_keeps_the_first_expiry(store: RedisStore) -> None:
    assert store.incr("counter", 30) == 1
    first_ttl = store.ttl_seconds("counter")
    assert first_ttl is not None and 0 < first_ttl <= 30
    time.sleep(0.05)
    # A later INCR must not push the window's end out.
    assert store.incr("counter", 30) == 2
    later_ttl = store.ttl_seconds("counter")
    assert later_ttl is not None and later_ttl < first_ttl
    # When the window's time is up the count starts again (a short window, waited out).
    assert store.incr("brief", 0.05) == 1
    time.sleep(0.3)
    assert store.incr("brief", 0.05) == 1


def test_incr_restores_a_lost_expiry(store: RedisStore, raw: redis.Redis) -> None:
    raw.set(store.key("orphan"), b"7")  # a counter without TTL, e.g. written by hand
    assert store.incr("orphan", 10) == 8
    assert store.ttl_seconds("orphan") is not None


def test_incr_is_atomic_under_concurrency(store: RedisStore) -> None:
    def bump() -> None:
        for _ in range(50):
            store.incr("hits", 10)

    threads = [threading.Thread(target=bump) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.get("hits") == b"400"


def test_ping(store: RedisStore) -> None:
    assert store.ping() is True


def test_refused_connection_fails_with_store_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # Nothing listens on ``port`` now.
    kv = RedisStore(f"redis://127.0.0.1:{port}/0", "t")
    with pytest.raises(StoreUnavailableError, match="GET"):
        kv.get("k")
    assert kv.ping() is False


def test_a_server_that_never_answers_costs_one_try_and_one_retry() -> None:
    # A socket that accepts connections but never replies: Redis hung, or a black-holed route.
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    port = listener.getsockname()[1]
    accepted: list[socket.socket] = []

    def accept_all() -> None:
        with contextlib.suppress(OSError):  # the listener is closed at the end
            while True:
                accepted.append(listener.accept()[0])

    threading.Thread(target=accept_all, daemon=True).start()
    try:
        kv = RedisStore(f"redis://127.0.0.1:{port}/0", "t", timeout_seconds=0.2)
        started = time.monotonic()
        with pytest.raises(StoreUnavailableError):
            kv.put("k", b"v", 5)
        # It waited out its timeout, then gave up after one retry on a new connection: a
        # bounded cost (two timeouts), far inside Slack's 3 s, whatever the machine's load.
        assert time.monotonic() - started >= 0.2
        settle = time.monotonic() + 10  # the accepting thread may run late on a busy machine
        while len(accepted) < 2 and time.monotonic() < settle:
            time.sleep(0.01)
        assert len(accepted) == 2
        kv.close()
    finally:
        listener.close()
        for connection in accepted:
            connection.close()


def test_prefix_is_validated() -> None:
    with pytest.raises(ValueError, match="prefix"):
        RedisStore("redis://127.0.0.1:6379/0", "")
    with pytest.raises(ValueError, match="prefix"):
        RedisStore("redis://127.0.0.1:6379/0", "bad:")
