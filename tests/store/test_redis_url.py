"""``REDIS_URL`` names one Redis, a Sentinel-monitored master or a Redis Cluster."""

from __future__ import annotations

from bot.redis_url import RedisTarget, parse_redis_url


def test_one_redis_is_left_to_redis_py() -> None:
    for url in ("redis://:pw@h:6379/2", "rediss://h:6380/0", "unix:///run/redis.sock?db=1"):
        assert parse_redis_url(url) == RedisTarget("single", url)


def test_sentinels_the_master_and_the_database() -> None:
    url = "redis+sentinel://bot:p%40ss@s1:26379,s2,[::1]:26380/mymaster/3?sentinel_password=sp"
    target = parse_redis_url(url)
    assert target.kind == "sentinel"
    assert target.hosts == (("s1", 26379), ("s2", 26379), ("::1", 26380))
    assert (target.master, target.db) == ("mymaster", 3)
    assert (target.username, target.password) == ("bot", "p@ss")
    assert target.sentinel_password == "sp"
    assert not target.tls
    assert (
        target.describe
        == 'Redis master "mymaster" through the sentinels s1:26379, s2:26379, ::1:26380'
    )
    assert "p@ss" not in target.describe


def test_cluster_nodes_and_tls() -> None:
    target = parse_redis_url("rediss+cluster://:secret@n1:7000,n2:7001")
    assert target.kind == "cluster" and target.tls
    assert target.hosts == (("n1", 7000), ("n2", 7001))
    assert target.password == "secret" and target.username is None
    assert parse_redis_url("redis+cluster://n1").hosts == (("n1", 6379),)
    assert parse_redis_url("redis+cluster://n1/").hosts == (("n1", 6379),)
