"""Two real bot processes (``hami-summary serve``, HTTP mode) sharing one Redis.

Each replica is its own OS process on its own loopback port, talking to one local Slack Web
API (``tests.support.slack_api``) and one counting HAMi exporter (the registry's ``demo``
cluster is a ``metrics_url``), as two pods behind a Service would.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.slack.conftest import SIGNING_SECRET, SlackSender
from tests.store.collected import CountingExporter
from tests.support.redis_server import free_port
from tests.support.slack_api import SlackWebApi, running_slack_api

REPO = Path(__file__).resolve().parents[2]
CHANNELS = [f"C0REPL{n:03d}" for n in range(5)]


def write_registry(directory: Path, metrics_url: str) -> Path:
    registry = directory / "clusters.yaml"
    registry.write_text(
        "clusters:\n"
        "  - name: demo\n"
        "    display_name: Demo cluster\n"
        f"    metrics_url: {metrics_url}\n"
        '    allowed_users: ["*"]\n'
        "    cache_ttl_seconds: 120\n"
    )
    return registry


class BotProcess:
    """``hami-summary serve`` in a child process; stderr (JSON logs) kept in a file."""

    def __init__(self, name: str, env: dict[str, str], log_dir: Path) -> None:
        self.name = name
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.sender = SlackSender(f"{self.base}/slack/events")
        self.log_path = log_dir / f"{name}.log"
        self._log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "bot.cli.main",
                "--log-level",
                "INFO",
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
            ],
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=self._log,
        )

    def readyz(self) -> tuple[int, dict[str, Any]]:
        try:
            with urllib.request.urlopen(f"{self.base}/readyz", timeout=5) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    def wait_until_serving(self, timeout_seconds: float = 60.0) -> None:
        deadline = time.monotonic() + timeout_seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"{self.name} exited: {self.logs()[-2000:]}")
            try:
                status, _ = self.readyz()
                if status == 200:
                    return
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            time.sleep(0.1)
        raise AssertionError(f"{self.name} did not become ready: {self.logs()[-2000:]}")

    def metric(self, name: str, labels: dict[str, str]) -> float:
        from prometheus_client.parser import text_string_to_metric_families

        with urllib.request.urlopen(f"{self.base}/metrics", timeout=5) as response:
            text = response.read().decode()
        total = 0.0
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name == name and all(
                    sample.labels.get(k) == v for k, v in labels.items()
                ):
                    total += sample.value
        return total

    def logs(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self._log.close()


@dataclass
class Replicas:
    api: SlackWebApi
    exporter: CountingExporter
    a: BotProcess
    b: BotProcess

    @property
    def both(self) -> tuple[BotProcess, BotProcess]:
        return self.a, self.b


def bot_env(api: SlackWebApi, registry: Path, redis_url: str, prefix: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "REDIS_"))}
    env.update(
        {
            "PYTHONPATH": str(REPO),
            "SLACK_BOT_TOKEN": api.bot_token,
            "SLACK_SIGNING_SECRET": SIGNING_SECRET,
            "SLACK_API_URL": api.base_url,
            "HAMI_CLUSTERS_FILE": str(registry),
            "REDIS_URL": redis_url,
            "REDIS_KEY_PREFIX": prefix,
            "REDIS_RETRY_INTERVAL_S": "1",
            # Every request in these tests is a different user: only the shared cache and
            # single-flight are under test, not the per-user limit.
            "HAMI_SUMMARY_LIVE_PER_MINUTE": "100",
        }
    )
    return env


def start_replicas(
    api: SlackWebApi, exporter: CountingExporter, redis_url: str, prefix: str, tmp_path: Path
) -> Replicas:
    registry = write_registry(tmp_path, exporter.url)
    env = bot_env(api, registry, redis_url, prefix)
    a = BotProcess("replica-a", env, tmp_path)
    b = BotProcess("replica-b", env, tmp_path)
    for replica in (a, b):
        replica.wait_until_serving()
    return Replicas(api, exporter, a, b)


@pytest.fixture
def slack_api() -> Iterator[SlackWebApi]:
    yield from running_slack_api()


@pytest.fixture
def exporter() -> Iterator[CountingExporter]:
    running = CountingExporter(delay_seconds=0.5)
    running.start()
    yield running
    running.stop()
