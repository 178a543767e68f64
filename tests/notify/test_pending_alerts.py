"""The long-pending alert on real Redis, the local Slack Web API and the local Kubernetes API
server: quiet while pods wait less than T, firing with the pods grouped by HAMi's reason once
one waits longer, resolving in the thread when it is placed, per namespace when declared, and
neither firing nor resolving while the pods cannot be read (RBAC)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.clusters.registry import load_registry
from bot.config import NotifySettings, load_config
from bot.notify.loop import NotifyLoop, build_notify_loop
from bot.store.redis_store import RedisStore
from tests.kube.fake_apiserver import FakeApiServer, FakeCluster, FakeEvent, hami_cluster
from tests.notify.conftest import OPS, Clock
from tests.slack.conftest import SIGNING_SECRET
from tests.slack.test_http_e2e import blocks_text
from tests.slack.test_pending_e2e import pending_pod
from tests.support.slack_api import SlackWebApi

INTERVAL = 60.0
SETTINGS = NotifySettings(alert_interval_seconds=INTERVAL, lease_seconds=5, tick_seconds=1)
REGISTRY = """\
clusters:
  - name: lab
    kubeconfig: lab.kubeconfig
    context: lab
    alerts:
      - name: waiting
        channel: {ops}
        pods_pending_longer_than: 30m
      - name: waiting-team-x
        channel: {ops}
        pods_pending_longer_than: 30m
        namespace: team-x
"""


def stamp(seconds_ago: float) -> str:
    moment = datetime.fromtimestamp(time.time() - seconds_ago, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Watched:
    api: SlackWebApi
    cluster: FakeCluster
    clock: Clock
    loop: NotifyLoop

    def evaluate(self) -> None:
        self.clock.now += INTERVAL
        self.loop.alerts.tick()

    def posts(self, thread_ts: str | None = None) -> list[str]:
        return [
            blocks_text(call.json_param("blocks"))
            for call in self.api.calls_to("chat.postMessage")
            if call.params.get("channel") == OPS and call.params.get("thread_ts") == thread_ts
        ]


@pytest.fixture
def watched(
    slack_api: SlackWebApi, redis_url: str, redis_key_prefix: str, tmp_path: Path
) -> Iterator[Watched]:
    cluster = hami_cluster()
    with FakeApiServer(cluster) as kube:
        kube.write_kubeconfig(tmp_path / "lab.kubeconfig", context="lab")
        path = tmp_path / "clusters.yaml"
        path.write_text(REGISTRY.format(ops=OPS))
        config = load_config(
            {
                "SLACK_BOT_TOKEN": slack_api.bot_token,
                "SLACK_SIGNING_SECRET": SIGNING_SECRET,
                "SLACK_API_URL": slack_api.base_url,
            }
        )
        clock = Clock(time.time())
        store = RedisStore(redis_url, redis_key_prefix)
        loop = build_notify_loop(
            config, store, load_registry(path), slack_api.bot_token, SETTINGS, clock=clock
        )
        yield Watched(slack_api, cluster, clock, loop)


def _add_trainer(cluster: FakeCluster, waited_seconds: float) -> None:
    cluster.pods.append(
        pending_pod(
            "trainer-0",
            {"nvidia.com/gpu": "2", "nvidia.com/gpumem": "30000"},
            stamp(waited_seconds),
        )
    )
    cluster.events.append(
        FakeEvent(
            "ml",
            "trainer-0",
            "FilteringFailed",
            "2 nodes CardInsufficientMemory(gpu-node-1,gpu-node-2)",
        )
    )


def test_fires_past_the_wait_with_reasons_and_resolves_when_placed(watched: Watched) -> None:
    _add_trainer(watched.cluster, waited_seconds=600)
    watched.evaluate()
    assert watched.posts() == []  # ten minutes is under the rule's 30
    watched.cluster.pods = [p for p in watched.cluster.pods if p.name != "trainer-0"]
    _add_trainer(watched.cluster, waited_seconds=2 * 3600)
    watched.evaluate()
    [firing] = watched.posts()
    assert "Alert firing: lab / waiting" in firing
    assert "Rule: pods pending on HAMi's resources for over 30 min." in firing
    assert (
        "1 pod(s) pending for over 30 min, CardInsufficientMemory (not enough free GPU memory "
        "on the GPU for the memory asked per GPU): ml/trainer-0" in firing
    )
    # The namespace rule watches team-x only: nothing of ml's pod.
    assert "waiting-team-x" not in firing
    [ts] = [ts for (channel, ts), m in watched.api.messages.items() if m.thread_ts is None]
    watched.evaluate()
    assert len(watched.posts()) == 1  # still firing: nothing more

    # The pods cannot be read: the rule cannot tell, so it neither resolves nor fires again.
    watched.cluster.pods = [p for p in watched.cluster.pods if p.name != "trainer-0"]
    watched.cluster.forbid("list", "pods")
    watched.evaluate()
    assert watched.posts(thread_ts=ts) == []
    watched.cluster.forbidden.clear()
    watched.evaluate()
    [resolved] = watched.posts(thread_ts=ts)
    assert "Resolved: lab / waiting" in resolved


def test_a_namespace_rule_fires_for_its_namespace_only(watched: Watched) -> None:
    watched.cluster.pods.append(
        pending_pod("solver", {"nvidia.com/gpu": "1"}, stamp(3600), namespace="team-x")
    )
    watched.evaluate()
    posts = watched.posts()
    assert len(posts) == 2
    (team,) = [post for post in posts if "lab / waiting-team-x" in post]
    assert "pods pending on HAMi's resources for over 30 min in namespace team-x" in team
    # No FilteringFailed event: the pod never reached HAMi, and the alert says so.
    assert "did not reach HAMi (no FilteringFailed event" in team and "team-x/solver" in team
