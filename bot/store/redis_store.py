"""``KeyValueStore`` on Redis, shared by every replica of the bot.

Three rules keep Redis from ever costing the bot its Slack deadline or its memory:

* every call has a short socket and connect timeout (200 ms by default) and at most one retry
  (for a pooled connection that went stale when Redis restarted), so a slow or absent Redis costs
  a request well under Slack's 3-second acknowledgement window;
* every key is written with a TTL (``PX``), so nothing the bot stores lives forever;
* every key sits under one prefix, so several installations can share one Redis and an operator
  can find (or flush) the bot's keys with ``SCAN MATCH <prefix>:*``.

Errors surface as ``StoreUnavailableError`` so callers (``bot.store.resilient``) need not know
redis-py's exception tree.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, cast

import redis
from redis.backoff import NoBackoff
from redis.cluster import ClusterNode, RedisCluster
from redis.exceptions import RedisClusterException
from redis.retry import Retry
from redis.sentinel import Sentinel

from bot.redis_url import RedisTarget, parse_redis_url
from bot.store.kv import DurableWrite

DEFAULT_TIMEOUT_SECONDS = 0.2
DEFAULT_PREFIX = "hami-summary"

# Compare-and-delete: release a lock only while it still holds our token, in one atomic step,
# so a holder whose lock already expired never deletes the next holder's lock.
_DELETE_IF_EQUALS = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""

# INCR and set the expiry in one step. The expiry is set whenever the key has none (PTTL -1),
# which covers both a new counter and one that somehow lost its TTL: a counter never outlives
# its window. (PEXPIRE ... NX needs Redis 7; this works on every version.)
_INCR_WITH_TTL = """
local count = redis.call('INCR', KEYS[1])
if redis.call('PTTL', KEYS[1]) < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return count
"""

# Compare-and-extend: renew a lock's expiry only while it still holds our token, so a holder
# never revives a lock that expired and was taken by someone else.
_EXTEND_IF_EQUALS = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""

# Compare-and-set: write the value only while the key holds what the caller read (ARGV[1] '0':
# absent; '1': the value ARGV[2]), so of two replicas that both read an empty digest slot only
# one marks it ``sending``.
_SET_IF_EQUALS = """
local current = redis.call('GET', KEYS[1])
if ARGV[1] == '0' then
  if current then return 0 end
elseif current ~= ARGV[2] then
  return 0
end
redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[4])
return 1
"""


# Operations that change data: an error reply to one of them means Redis refuses writes
# (READONLY replica, MISCONF after a failed save, OOM at maxmemory, NOREPLICAS).
_WRITE_OPERATIONS = frozenset(
    {
        "SET",
        "SET and WAIT",
        "compare-and-set",
        "compare-and-set and WAIT",
        "SET NX",
        "DEL",
        "compare-and-delete",
        "INCR",
        "write probe",
    }
)
# Redis's own words are kept up to this length in a reason (MISCONF's run to 330 characters).
_REASON_CHARS = 160
# The key the write probe sets, and how long it lives (it only has to outlive one probe).
HEALTH_KEY = "health:write-probe"
HEALTH_KEY_TTL_SECONDS = 60.0


class StoreUnavailableError(Exception):
    """Redis did not answer (refused, timed out) or refused the command; ``reason`` says which."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def describe_failure(operation: str, error: BaseException) -> str:
    """One line for logs and ``/readyz``: whether Redis is away or refuses writes, and why.

    Redis's own words are kept (``READONLY ...``, ``MISCONF ...``, ``OOM ...``), cut short;
    they never hold a stored value or the password.
    """
    text = " ".join(str(error).split()) or type(error).__name__
    if len(text) > _REASON_CHARS:
        text = text[:_REASON_CHARS].rsplit(" ", 1)[0] + " ..."
    # redis-py strips the error code of the replies it maps to a class (READONLY, OOM, ...).
    code = getattr(error, "status_code", None)
    if isinstance(code, str) and code and code != "ERR" and not text.startswith(code):
        text = f"{code} {text}"
    text = f"{operation}: {text}"
    if isinstance(error, redis.AuthenticationError):
        return f"Redis refused the credentials of REDIS_URL ({text})"
    if isinstance(error, redis.ConnectionError | redis.TimeoutError | OSError):
        return f"Redis does not answer ({text})"
    if isinstance(error, RedisClusterException):
        # No node answered, or some hash slots have no master (forming, or in a failover).
        return f"Redis Cluster is not usable ({text})"
    if operation in _WRITE_OPERATIONS:
        return f"Redis does not take writes ({text})"
    return f"Redis refused {operation} ({text})"


def ttl_milliseconds(ttl_seconds: float) -> int:
    """Redis expiries are whole milliseconds and must be positive."""
    return max(1, round(ttl_seconds * 1000))


def client_for(target: RedisTarget, **options: Any) -> redis.Redis | RedisCluster:
    """The redis-py client for ``target``; ``options`` are connection options (timeouts,
    retry) for every connection it opens, to the sentinels too."""
    if target.kind == "single":
        return redis.Redis.from_url(target.url, **options)
    auth: dict[str, Any] = {"username": target.username, "password": target.password}
    if target.tls:
        auth["ssl"] = True
    if target.kind == "cluster":
        nodes = [ClusterNode(host, port) for host, port in target.hosts]  # type: ignore[no-untyped-call]
        # ``retry`` (one immediate retry) is also the cluster client's own retry of a command
        # after a lost node or a moved slot, in place of its default of ten with backoff: a
        # command must fail fast enough for the fallback to answer within Slack's 3 s.
        return RedisCluster(startup_nodes=nodes, **auth, **options)
    sentinel_options = {
        key: value
        for key, value in options.items()
        if key in ("socket_timeout", "socket_connect_timeout")
    }
    if target.sentinel_password:
        sentinel_options["password"] = target.sentinel_password
    if target.tls:
        sentinel_options["ssl"] = True
    sentinels = Sentinel(list(target.hosts), sentinel_kwargs=sentinel_options)
    master: redis.Redis = sentinels.master_for(target.master, db=target.db, **auth, **options)
    return master


class RedisStore:
    """The ``KeyValueStore`` protocol on one Redis database, keys under ``<prefix>:``: one
    Redis, a master found through Sentinel, or a Redis Cluster (``bot.redis_url``)."""

    def __init__(
        self,
        url: str,
        prefix: str = DEFAULT_PREFIX,
        *,
        timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
        connect_timeout_seconds: float | None = None,
    ) -> None:
        if not prefix or prefix.endswith(":"):
            raise ValueError(
                f"Redis key prefix must be non-empty without a trailing ':', got {prefix!r}"
            )
        self.prefix = prefix
        self._wait_milliseconds = max(1, int(timeout_seconds * 250))
        self.target = parse_redis_url(url)
        self._options: dict[str, Any] = {
            "socket_timeout": timeout_seconds,
            "socket_connect_timeout": (
                timeout_seconds if connect_timeout_seconds is None else connect_timeout_seconds
            ),
            # One immediate retry: after a Redis restart the first command on each pooled
            # connection fails with "connection closed"; a fresh connection then succeeds.
            "retry": Retry(NoBackoff(), retries=1),
            "health_check_interval": 0,
        }
        self._connected: redis.Redis | RedisCluster | None = None
        self._connecting = threading.Lock()

    @property
    def _client(self) -> redis.Redis | RedisCluster:
        """The redis-py client, made at the first call that needs it.

        A Redis Cluster client reads the cluster's slots when it is made, and refuses to be
        made while no node answers or some slots have no master (a cluster still forming, or
        in a failover): the bot then starts on process memory like in any outage, and the
        next call tries again. Clients of one Redis and of Sentinel connect lazily anyway.
        """
        client = self._connected
        if client is None:
            with self._connecting:
                if self._connected is None:
                    self._connected = self._call(
                        "connect", client_for, self.target, **self._options
                    )
                client = self._connected
        return client

    def key(self, key: str) -> str:
        """The Redis key for one of the bot's keys."""
        return f"{self.prefix}:{key}"

    def _call(self, operation: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (redis.RedisError, RedisClusterException, OSError) as error:
            # The message names the operation, never the value (values may hold pasted metrics).
            # (A cluster's "slots not covered" is no RedisError.)
            raise StoreUnavailableError(describe_failure(operation, error)) from error

    def get(self, key: str) -> bytes | None:
        value = self._call("GET", self._client.get, self.key(key))
        return cast("bytes | None", value)

    def put(self, key: str, value: bytes, ttl_seconds: float) -> None:
        self._call("SET", self._client.set, self.key(key), value, px=ttl_milliseconds(ttl_seconds))

    def put_durably(self, key: str, value: bytes, ttl_seconds: float) -> bool:
        full_key = self.key(key)
        px = ttl_milliseconds(ttl_seconds)
        _, acknowledged = self._write_durably(
            full_key, "SET", lambda client: client.set(full_key, value, px=px)
        )
        return acknowledged

    def replace_durably(
        self, key: str, expected: bytes | None, value: bytes, ttl_seconds: float
    ) -> DurableWrite:
        full_key = self.key(key)
        arguments = (
            b"0" if expected is None else b"1",
            expected or b"",
            value,
            ttl_milliseconds(ttl_seconds),
        )
        written, acknowledged = self._write_durably(
            full_key,
            "compare-and-set",
            lambda client: client.eval(_SET_IF_EQUALS, 1, full_key, *arguments),
        )
        if not written:
            return "changed"
        return "kept" if acknowledged else "unreplicated"

    def replace_if_equals(
        self, key: str, expected: bytes, value: bytes, ttl_seconds: float
    ) -> bool:
        written = self._call(
            "compare-and-set",
            self._client.register_script(_SET_IF_EQUALS),
            keys=[self.key(key)],
            args=[b"1", expected, value, ttl_milliseconds(ttl_seconds)],
        )
        return bool(written)

    def _write_durably(
        self, full_key: str, operation: str, write: Callable[[Any], Any]
    ) -> tuple[Any, bool]:
        """``write`` on the master holding ``full_key``, then WAIT for one of its replicas:
        (the write's reply, whether no failover can lose it).

        A master without replicas has nothing a failover could lose, and WAIT there would block
        for its whole timeout, so the replication state is read first. With replicas, the write
        and WAIT go in one pipeline on one connection (WAIT counts the acknowledgements of its
        own connection's writes). WAIT waits a quarter of the socket timeout: a replica on the
        same network acknowledges in a millisecond or two, and the rest of the timeout is left
        for the round trip on a loaded machine.
        """
        client = self._client_holding(full_key)
        replication = self._call("INFO replication", client.info, "replication")
        if int(replication.get("connected_slaves", 0)) == 0:
            return self._call(operation, write, client), True
        pipe = client.pipeline(transaction=False)
        write(pipe)
        pipe.execute_command("WAIT", 1, self._wait_milliseconds)  # type: ignore[no-untyped-call]
        reply, acknowledged = self._call(f"{operation} and WAIT", pipe.execute)
        return reply, int(acknowledged) >= 1

    def _client_holding(self, full_key: str) -> redis.Redis:
        """The client of the master holding ``full_key``: in a cluster, that node's."""
        if isinstance(self._client, RedisCluster):
            node = self._client.get_node_from_key(full_key)  # type: ignore[no-untyped-call]
            node_client: redis.Redis = self._client.get_redis_connection(node)
            return node_client
        return self._client

    def put_if_absent(self, key: str, value: bytes, ttl_seconds: float) -> bool:
        stored = self._call(
            "SET NX",
            self._client.set,
            self.key(key),
            value,
            px=ttl_milliseconds(ttl_seconds),
            nx=True,
        )
        return bool(stored)

    def delete(self, key: str) -> None:
        self._call("DEL", self._client.delete, self.key(key))

    def delete_if_equals(self, key: str, value: bytes) -> bool:
        deleted = self._call(
            "compare-and-delete",
            self._client.register_script(_DELETE_IF_EQUALS),
            keys=[self.key(key)],
            args=[value],
        )
        return bool(deleted)

    def incr(self, key: str, ttl_seconds: float) -> int:
        count = self._call(
            "INCR",
            self._client.register_script(_INCR_WITH_TTL),
            keys=[self.key(key)],
            args=[ttl_milliseconds(ttl_seconds)],
        )
        return int(count)

    def ping(self) -> bool:
        try:
            return bool(self._client.ping())
        except (redis.RedisError, RedisClusterException, OSError, StoreUnavailableError):
            return False

    def probe_writes(self) -> None:
        """Set the health key (with a TTL): ``StoreUnavailableError`` unless Redis takes writes.

        A PING is answered by a Redis that refuses every write (read-only replica, failed
        save, full memory, too few replicas); only a write tells the bot it can keep its state
        there. Bounded by the store's socket timeout like every call.
        """
        self._call(
            "write probe",
            self._client.set,
            self.key(HEALTH_KEY),
            b"1",
            px=ttl_milliseconds(HEALTH_KEY_TTL_SECONDS),
        )

    def ttl_seconds(self, key: str) -> float | None:
        """Remaining lifetime of a key (None when absent or without expiry); for tests and ops."""
        remaining_ms = int(self._call("PTTL", self._client.pttl, self.key(key)))
        return remaining_ms / 1000 if remaining_ms >= 0 else None

    def close(self) -> None:
        if self._connected is not None:
            self._connected.close()

    def extend_if_equals(self, key: str, value: bytes, ttl_seconds: float) -> bool:
        extended = self._call(
            "compare-and-extend",
            self._client.register_script(_EXTEND_IF_EQUALS),
            keys=[self.key(key)],
            args=[value, ttl_milliseconds(ttl_seconds)],
        )
        return bool(extended)
