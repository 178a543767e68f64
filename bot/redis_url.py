"""Which Redis ``REDIS_URL`` names (the client is built by ``bot.store.redis_store``).

Three deployments, one variable:

* ``redis://[[user]:password@]host:port/db``, ``rediss://...`` (TLS), ``unix:///path?db=N``:
  one Redis (redis-py's own URL forms);
* ``redis+sentinel://[[user]:password@]host:port[,host:port...]/MASTER[/db]`` (``rediss+``
  for TLS): the sentinels to ask where the master ``MASTER`` is, as redis-py's ``Sentinel``
  does on every new connection, so a failover moves the bot to the promoted replica.
  ``?sentinel_password=...`` authenticates to sentinels that have one (``requirepass`` in
  sentinel.conf), and the user and password authenticate to the master;
* ``redis+cluster://[[user]:password@]host:port[,host:port...]`` (``rediss+`` for TLS): some
  nodes of a Redis Cluster (or Valkey cluster), from which redis-py's ``RedisCluster`` learns
  the rest and the slot map.

Every operation of the bot touches one key (``bot.store.redis_store``), so no command ever
spans two hash slots and the keys need no hash tags.

Messages never hold the URL: it may carry a password. The settings check (``bot.config``)
reads it too, so this module does not import redis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal
from urllib.parse import parse_qs, unquote, urlsplit

RedisKind = Literal["single", "sentinel", "cluster"]

SINGLE_SCHEMES = ("redis", "rediss", "unix")
SENTINEL_SCHEMES = ("redis+sentinel", "rediss+sentinel")
CLUSTER_SCHEMES = ("redis+cluster", "rediss+cluster")
DEFAULT_SENTINEL_PORT = 26379
DEFAULT_REDIS_PORT = 6379
URL_FORMS = (
    "redis://host:6379/0, rediss://..., unix:///path, "
    "redis+sentinel://host:26379,host2:26379/MASTER_NAME or redis+cluster://host:6379,host2:6379"
)


class RedisUrlError(ValueError):
    """``REDIS_URL`` cannot be used; the message says why without repeating the URL."""


@dataclass(frozen=True, slots=True)
class RedisTarget:
    """What ``REDIS_URL`` names: the URL itself for one Redis, else the parts redis-py's
    Sentinel or Cluster client is built from."""

    kind: RedisKind
    url: str
    hosts: tuple[tuple[str, int], ...] = ()
    master: str = ""
    db: int = 0
    username: str | None = None
    password: str | None = None
    sentinel_password: str | None = None
    tls: bool = False

    @property
    def describe(self) -> str:
        """Where the bot keeps its state, for logs and ``/readyz``: never a password."""
        if self.kind == "single":
            return "one Redis"
        nodes = ", ".join(f"{host}:{port}" for host, port in self.hosts)
        if self.kind == "sentinel":
            return f'Redis master "{self.master}" through the sentinels {nodes}'
        return f"Redis Cluster from {nodes}"


def parse_redis_url(raw: str) -> RedisTarget:
    """The deployment ``raw`` names; raises ``RedisUrlError``."""
    scheme = urlsplit(raw).scheme
    if scheme in SINGLE_SCHEMES:
        return RedisTarget("single", raw)
    if scheme not in SENTINEL_SCHEMES + CLUSTER_SCHEMES:
        raise RedisUrlError(f"REDIS_URL must have one of the forms {URL_FORMS}")
    # The netloc holds several comma-separated hosts, which urlsplit's port parsing rejects.
    rest = raw[len(scheme) + 3 :]
    netloc, _, path_and_query = rest.partition("/")
    path, _, query = path_and_query.partition("?")
    credentials, _, host_list = netloc.rpartition("@")
    username, _, password = credentials.partition(":")
    sentinel = scheme in SENTINEL_SCHEMES
    default_port = DEFAULT_SENTINEL_PORT if sentinel else DEFAULT_REDIS_PORT
    hosts = tuple(_host_and_port(item, default_port) for item in host_list.split(","))
    options = parse_qs(query)
    target = RedisTarget(
        "sentinel" if sentinel else "cluster",
        raw,
        hosts=hosts,
        username=unquote(username) or None,
        password=unquote(password) or None,
        sentinel_password=next(iter(options.get("sentinel_password", ())), None),
        tls=scheme.startswith("rediss"),
    )
    parts = [unquote(part) for part in path.split("/") if part]
    if not sentinel:
        if parts:
            raise RedisUrlError(
                "REDIS_URL: a Redis Cluster has only database 0; give no path after the hosts "
                "(redis+cluster://host:6379,host2:6379)"
            )
        return target
    if not parts or len(parts) > 2:
        raise RedisUrlError(
            "REDIS_URL: name the master the sentinels monitor after the hosts, and optionally "
            "the database (redis+sentinel://host:26379,host2:26379/mymaster/0)"
        )
    db = parts[1] if len(parts) == 2 else "0"
    if not db.isdigit():
        raise RedisUrlError(
            f"REDIS_URL: the database after the master name must be a number, got {db!r}"
        )
    return RedisTarget(
        target.kind,
        raw,
        hosts=hosts,
        master=parts[0],
        db=int(db),
        username=target.username,
        password=target.password,
        sentinel_password=target.sentinel_password,
        tls=target.tls,
    )


def _host_and_port(item: str, default_port: int) -> tuple[str, int]:
    host, colon, port = item.strip().rpartition(":")
    if not colon:
        host, port = item.strip(), str(default_port)
    host = host.strip("[]")  # an IPv6 address in brackets
    if not host:
        raise RedisUrlError("REDIS_URL: a host in the list is empty")
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise RedisUrlError(f"REDIS_URL: the port of {host} must be a number from 1 to 65535")
    return host, int(port)
