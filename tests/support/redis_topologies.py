"""Redis as platform teams run it for failover, from real processes on loopback ports.

* ``SentinelGroup``: a master, one replica of it and three ``redis-sentinel`` processes
  (``redis-server --sentinel``) monitoring it with a quorum of two; a killed master is replaced
  by the replica in about two seconds (``down-after-milliseconds`` 1000).
* ``RedisClusterGroup``: three masters with ``--cluster-enabled yes``, joined by
  ``redis-cli --cluster create`` with the 16,384 slots split between them; with replicas, a
  killed master's replica is promoted within a few node timeouts.

Both give the ``REDIS_URL`` the bot takes for them (``bot.redis_url``), and
``redis_client`` opens the matching redis-py client for a test's own checks.

Fixtures:

* ``redis_url`` (session, three parameters): every test that uses it runs against one Redis,
  a Sentinel group and a Redis Cluster. One Redis is ``$REDIS_URL`` when set, else
  127.0.0.1:6379 when it answers, else a ``redis-server`` started for the session. The groups
  are started for the session (about 5 s and 8 s). ``HAMI_SUMMARY_TEST_REDIS`` narrows the
  set for a quick local run (``single``, ``sentinel``, ``cluster``, comma-separated).
* ``redis_key_prefix`` (function): a key prefix of its own for each test, so tests never see
  each other's keys on a shared server; its keys are removed afterwards.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from redis.cluster import RedisCluster

from bot.redis_url import parse_redis_url
from bot.store.redis_store import client_for
from tests.support.redis_server import (
    SHARED_DEFAULT_URL,
    RedisServerProcess,
    free_port,
    redis_answers,
    redis_server_binary,
    started_redis,
)

MASTER_NAME = "hami-test"


def redis_client(url: str, timeout_seconds: float = 2.0) -> redis.Redis | RedisCluster:
    """A redis-py client for any ``REDIS_URL`` the bot takes, built as the bot builds it."""
    return client_for(
        parse_redis_url(url),
        socket_timeout=timeout_seconds,
        socket_connect_timeout=timeout_seconds,
    )


def delete_keys(url: str, pattern: str) -> None:
    """Delete the keys matching ``pattern`` one by one (a cluster refuses a DEL across slots)."""
    client = redis_client(url)
    try:
        for key in list(client.scan_iter(match=pattern, count=1000)):
            client.delete(key)
    except (redis.RedisError, OSError):
        pass
    finally:
        client.close()


def wait_for(what: str, check: Any, timeout_seconds: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_seconds
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except (redis.RedisError, OSError):
            pass
        time.sleep(0.1)
    raise RuntimeError(f"waited {timeout_seconds} s for {what}")


def _info(port: int, section: str) -> dict[str, Any]:
    client = redis.Redis(port=port, socket_timeout=1)
    try:
        info: dict[str, Any] = client.info(section)
        return info
    finally:
        client.close()


class SentinelProcess(RedisServerProcess):
    """``redis-server sentinel.conf --sentinel`` monitoring ``master_port``."""

    def __init__(self, master_port: int) -> None:
        super().__init__()
        self.master_port = master_port

    def command(self, binary: str) -> list[str]:
        conf = os.path.join(self.directory, "sentinel.conf")
        with open(conf, "w", encoding="utf-8") as handle:
            handle.write(
                f"port {self.port}\n"
                "bind 127.0.0.1\n"
                f"dir {self.directory}\n"
                f"sentinel monitor {MASTER_NAME} 127.0.0.1 {self.master_port} 2\n"
                f"sentinel down-after-milliseconds {MASTER_NAME} 1000\n"
                f"sentinel failover-timeout {MASTER_NAME} 5000\n"
                f"sentinel parallel-syncs {MASTER_NAME} 1\n"
            )
        return [binary, conf, "--sentinel"]


class SentinelGroup:
    """A master, its replica and three sentinels; ``url`` is the bot's ``REDIS_URL``."""

    def __init__(self) -> None:
        self.master = RedisServerProcess()
        self.replica = RedisServerProcess(
            extra_args=("--replicaof", "127.0.0.1", str(self.master.port))
        )
        self.sentinels = [SentinelProcess(self.master.port) for _ in range(3)]
        hosts = ",".join(f"127.0.0.1:{s.port}" for s in self.sentinels)
        self.url = f"redis+sentinel://{hosts}/{MASTER_NAME}/0"

    def start(self) -> SentinelGroup:
        """Start the master, its replica and the sentinels; on any failure, stop those
        already started."""
        try:
            return self._start()
        except BaseException:
            self.close()
            raise

    def _start(self) -> SentinelGroup:
        self.master.start()
        self.replica.start()
        wait_for(
            "the replica to sync",
            lambda: _info(self.replica.port, "replication").get("master_link_status") == "up",
        )
        for sentinel in self.sentinels:
            sentinel.start()
        wait_for("the sentinels to see each other and the replica", self._sentinels_ready)
        return self

    def _sentinels_ready(self) -> bool:
        for sentinel in self.sentinels:
            client = redis.Redis(port=sentinel.port, socket_timeout=1)
            try:
                state = client.sentinel_master(MASTER_NAME)
            finally:
                client.close()
            if int(state["num-other-sentinels"]) < 2 or int(state["num-slaves"]) < 1:
                return False
        return True

    def master_port(self) -> int:
        """The port of the master the sentinels name now."""
        client = redis.Redis(port=self.sentinels[0].port, socket_timeout=1)
        try:
            _, port = client.sentinel_get_master_addr_by_name(MASTER_NAME)
            return int(port)
        finally:
            client.close()

    def kill_master(self, key: str = "") -> int:
        """SIGKILL the master (it holds every ``key``); the sentinels promote the replica.
        The killed port."""
        port = self.master_port()
        killed = self.master if port == self.master.port else self.replica
        killed.kill()
        return port

    def wait_for_failover(self, key: str, old_port: int, timeout_seconds: float = 30.0) -> int:
        """The new master's port once the sentinels name one other than ``old_port`` and it
        takes writes."""
        wait_for(
            "the sentinels to promote the replica",
            lambda: self.master_port() != old_port,
            timeout_seconds,
        )
        port = self.master_port()
        wait_for(
            "the promoted replica to take writes",
            lambda: _info(port, "replication").get("role") == "master",
            timeout_seconds,
        )
        return port

    def close(self) -> None:
        for process in (*self.sentinels, self.replica, self.master):
            process.close()


def redis_cli_binary() -> str:
    """``redis-cli`` beside the ``redis-server`` the tests use (PATH, or the bundled one)."""
    server = redis_server_binary()
    beside = os.path.join(os.path.dirname(server), "redis-cli") if server else ""
    found = beside if beside and os.access(beside, os.X_OK) else shutil.which("redis-cli")
    if not found:
        raise RuntimeError("redis-cli is not installed beside redis-server; the cluster needs it")
    return found


def cluster_port() -> int:
    """A free port whose cluster bus port (10,000 higher, below 65,536) is free too."""
    while True:
        port = free_port()
        if port > 55535:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as bus:
            try:
                bus.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        return port


class RedisClusterGroup:
    """Three cluster-enabled masters joined into one Redis Cluster, each with
    ``replicas_per_master`` replicas; ``url`` is the bot's ``REDIS_URL`` (the masters)."""

    def __init__(self, replicas_per_master: int = 0, node_timeout_ms: int = 2000) -> None:
        self.replicas_per_master = replicas_per_master
        self.nodes = [
            RedisServerProcess(
                cluster_port(),
                extra_args=(
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    "nodes.conf",
                    "--cluster-node-timeout",
                    str(node_timeout_ms),
                ),
            )
            for _ in range(3 * (1 + replicas_per_master))
        ]
        # ``--cluster create`` makes the first three nodes the masters.
        self.url = "redis+cluster://" + ",".join(f"127.0.0.1:{n.port}" for n in self.nodes[:3])

    def start(self) -> RedisClusterGroup:
        """Start and join the nodes; on any failure, stop those already started."""
        try:
            return self._start()
        except BaseException:
            self.close()
            raise

    def _start(self) -> RedisClusterGroup:
        for node in self.nodes:
            node.start()
        done = subprocess.run(
            [
                redis_cli_binary(),
                "--cluster",
                "create",
                *(f"127.0.0.1:{node.port}" for node in self.nodes),
                "--cluster-replicas",
                str(self.replicas_per_master),
                "--cluster-yes",
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"redis-cli --cluster create failed: {done.stdout}{done.stderr}")
        wait_for(
            "every node to report cluster_state:ok and to know every replica",
            lambda: (
                all(self._state_ok(node.port) for node in self.nodes) and self._replicas_known()
            ),
        )
        return self

    def _alive(self) -> list[RedisServerProcess]:
        return [node for node in self.nodes if node.running]

    @staticmethod
    def _state_ok(port: int) -> bool:
        client = redis.Redis(port=port, socket_timeout=1)
        try:
            info: dict[str, str] = client.execute_command("CLUSTER INFO")
            return info.get("cluster_state") == "ok"
        finally:
            client.close()

    def _replicas_known(self) -> bool:
        return all(
            len(nodes) == 1 + self.replicas_per_master for _, _, *nodes in self._slot_ranges()
        )

    def _slot_ranges(self) -> list[list[Any]]:
        """``CLUSTER SLOTS`` as a surviving node tells it: per range, [start, end, master,
        replicas...], each node as [host, port, id]."""
        client = redis.Redis(port=self._alive()[0].port, socket_timeout=1)
        try:
            ranges: list[list[Any]] = client.execute_command("CLUSTER SLOTS")
            return ranges
        finally:
            client.close()

    def master_port(self, key: str) -> int:
        """The port of the master serving ``key``'s slot now."""
        client = redis.Redis(port=self._alive()[0].port, socket_timeout=1)
        try:
            slot = int(client.execute_command("CLUSTER KEYSLOT", key))
        finally:
            client.close()
        for start, end, master, *_ in self._slot_ranges():
            if int(start) <= slot <= int(end):
                return int(master[1])
        raise RuntimeError(f"no master serves slot {slot}")

    def kill_master(self, key: str) -> int:
        """SIGKILL the master serving ``key``; its replica is promoted. The killed port."""
        port = self.master_port(key)
        next(node for node in self.nodes if node.port == port).kill()
        return port

    def wait_for_failover(self, key: str, old_port: int, timeout_seconds: float = 30.0) -> int:
        """The port of the new master of ``key``'s slot once the cluster is whole again."""
        wait_for(
            "the cluster to promote a replica",
            lambda: (
                self.master_port(key) != old_port
                and all(self._state_ok(node.port) for node in self._alive())
            ),
            timeout_seconds,
        )
        return self.master_port(key)

    def close(self) -> None:
        for node in self.nodes:
            node.close()


TOPOLOGIES = ("single", "sentinel", "cluster")


def _topologies() -> list[str]:
    chosen = os.environ.get("HAMI_SUMMARY_TEST_REDIS", "").strip()
    if not chosen:
        return list(TOPOLOGIES)
    names = [name.strip() for name in chosen.split(",") if name.strip()]
    unknown = sorted(set(names) - set(TOPOLOGIES))
    if unknown:
        raise pytest.UsageError(
            f"HAMI_SUMMARY_TEST_REDIS names {', '.join(unknown)}; use {', '.join(TOPOLOGIES)}"
        )
    return names


@pytest.fixture(scope="session", params=_topologies())
def redis_url(request: pytest.FixtureRequest) -> Iterator[str]:
    if request.param == "sentinel":
        sentinel = SentinelGroup().start()
        try:
            yield sentinel.url
        finally:
            sentinel.close()
        return
    if request.param == "cluster":
        cluster = RedisClusterGroup().start()
        try:
            yield cluster.url
        finally:
            cluster.close()
        return
    given = os.environ.get("REDIS_URL", "").strip()
    if given:
        yield given
        return
    if redis_answers(SHARED_DEFAULT_URL):
        yield SHARED_DEFAULT_URL
        return
    server = started_redis()
    try:
        yield server.url
    finally:
        server.close()


@pytest.fixture
def redis_key_prefix(redis_url: str) -> Iterator[str]:
    prefix = f"hami-summary-test-{uuid.uuid4().hex[:12]}"
    yield prefix
    delete_keys(redis_url, f"{prefix}:*")
