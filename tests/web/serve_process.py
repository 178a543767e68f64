"""``hami-summary serve`` (HTTP mode) as a child process, and raw HTTP against it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from tests.slack.conftest import SIGNING_SECRET
from tests.support.redis_server import free_port

REPO = Path(__file__).resolve().parents[2]


class ServeProcess:
    """Started with ``env`` (plus a clean copy of this process's environment); logs (JSON
    lines on stderr) go to ``log_path``."""

    def __init__(
        self,
        env: dict[str, str],
        log_path: Path,
        *,
        args: list[str] | None = None,
        port: int | None = None,
    ) -> None:
        """``args``: extra arguments of ``serve``; ``port``: where ``/healthz`` is (the HTTP
        port by default; the ops port in Socket Mode)."""
        self.port = port or free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "HAMI_"))}
        clean = {k: v for k, v in clean.items() if not k.startswith("REDIS_")}
        clean.update({"PYTHONPATH": str(REPO), "MPLBACKEND": "Agg", **env})
        self._log = log_path.open("wb")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "bot.cli.main",
                "--log-level",
                "INFO",
                "serve",
                *(args or []),
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
            ],
            cwd=REPO,
            env=clean,
            stdout=subprocess.DEVNULL,
            stderr=self._log,
        )

    def get(self, path: str, timeout: float = 5.0) -> tuple[int, dict[str, Any]]:
        try:
            with urllib.request.urlopen(self.base + path, timeout=timeout) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    def wait_for(self, path: str, status: int, timeout_seconds: float = 60.0) -> dict[str, Any]:
        """The body of the first answer of ``path`` with ``status``."""
        deadline = time.monotonic() + timeout_seconds
        while time.monotonic() < deadline:
            assert self.process.poll() is None, f"serve exited: {self.logs()[-3000:]}"
            try:
                got, body = self.get(path)
                if got == status:
                    return body
            except OSError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"{path} never answered {status}: {self.logs()[-3000:]}")

    def proc_status(self, field: str) -> int:
        """A number from /proc/PID/status (``VmRSS`` in kB, ``Threads``)."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
        raise AssertionError(f"no {field} in /proc/{self.process.pid}/status")

    def logs(self) -> str:
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text(errors="replace")

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()
        return self.process.returncode


def http_env(api_url: str, bot_token: str, **extra: str) -> dict[str, str]:
    return {
        "SLACK_BOT_TOKEN": bot_token,
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_API_URL": api_url,
        **extra,
    }


def raw_exchange(port: int, request: bytes, timeout: float = 10.0) -> bytes:
    """Send ``request`` as is and read until the server closes or ``timeout`` passes."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(request)
        return read_until_closed(sock)


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends before it closes the connection; a socket timeout (the
    server kept it open) fails the test."""
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except ConnectionResetError:
        pass
    except TimeoutError:
        raise AssertionError(
            f"the server kept the connection open; got {received[:200]!r}"
        ) from None
    return received


def status_of(response: bytes) -> int:
    assert response.startswith(b"HTTP/1.1 "), response[:200]
    return int(response.split(b" ", 2)[1])
