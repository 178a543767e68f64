"""Alert rules on hand-made snapshots: which subjects are in a bad way, and when a rule fires,
stays quiet and resolves."""

from __future__ import annotations

from dataclasses import replace

from core.history.snapshot import (
    ClusterFigures,
    InconsistentGpu,
    ModelFigures,
    PodFigures,
    QuotaUse,
    Snapshot,
)
from core.model import ContainerRuntime, RuntimeSection
from core.notify.alert_text import firing_text, resolved_text
from core.notify.rule_state import RuleState, advance
from core.notify.rules import AlertRule, Observation, condition

H100 = "NVIDIA H100 80GB HBM3"
A100 = "NVIDIA A100-SXM4-80GB"


def snapshot(
    *,
    free_h100: int = 3,
    free_a100: int = 5,
    cores: float = 400,
    mem_mib: float = 100_000,
    quotas: tuple[QuotaUse, ...] = (),
    inconsistent: tuple[InconsistentGpu, ...] = (),
    pods: tuple[PodFigures, ...] = (),
) -> Snapshot:
    return Snapshot(
        taken_at=1000.0,
        cluster="prod",
        totals=ClusterFigures(4, 16, 1600, cores, 1_000_000, mem_mib, free_h100 + free_a100, 9),
        namespaces=(),
        models=(
            ModelFigures(H100, 8, free_h100, 8 - free_h100, 0, 0, free_h100),
            ModelFigures(A100, 8, free_a100, 8 - free_a100, 0, 0, free_a100),
        ),
        nodes=(),
        pods=pods,
        inconsistent=inconsistent,
        quotas=quotas,
    )


def rule(kind: str, threshold: float = 0.0, **extra: object) -> AlertRule:
    return AlertRule(
        name=kind,
        kind=kind,
        channel="C0OPS",
        threshold=threshold,  # type: ignore[arg-type]
        **extra,
    )  # type: ignore[arg-type]


def seen(
    snap: Snapshot | None,
    runtime: RuntimeSection | None = None,
    failure: str | None = None,
    at: float = 1000.0,
) -> Observation:
    return Observation(at, snap, runtime, failure)


def test_free_whole_gpus_of_a_model() -> None:
    h100 = rule("free_whole_gpus_below", 2, model="h100")
    assert condition(h100, seen(snapshot(free_h100=2))) == {}
    found = condition(h100, seen(snapshot(free_h100=1)))
    assert found == {"model h100": "1 free whole GPU(s) of model h100 left, below 2"}
    anything = rule("free_whole_gpus_below", 9)
    assert condition(anything, seen(snapshot(free_h100=3, free_a100=5))) == {
        "all models": "8 free whole GPU(s) left, below 9"
    }
    missing = rule("free_whole_gpus_below", 1, model="B200")
    assert "no GPU of model B200 is listed" in condition(missing, seen(snapshot()))["model B200"]


def test_namespace_quota_above_a_share_of_its_limit() -> None:
    quotas = (
        QuotaUse("team-a", "nvidia.com/gpucores", 95, 100),
        QuotaUse("team-b", "nvidia.com/gpucores", 50, 100),
        QuotaUse("team-c", "nvidia.com/gpumem", 900_000, None),  # no limit: never over it
    )
    any_namespace = rule("namespace_quota_above", 90)
    assert set(condition(any_namespace, seen(snapshot(quotas=quotas))) or {}) == {
        "team-a nvidia.com/gpucores"
    }
    only_b = rule("namespace_quota_above", 40, namespace="team-b")
    assert set(condition(only_b, seen(snapshot(quotas=quotas))) or {}) == {
        "team-b nvidia.com/gpucores"
    }


def test_cluster_cores_and_memory_allocated() -> None:
    cores = rule("cores_allocated_above", 80)
    assert condition(cores, seen(snapshot(cores=1280))) == {}  # exactly 80 %: not above
    assert condition(cores, seen(snapshot(cores=1300))) == {
        "cores": "81 % of the cluster's GPU cores are allocated"
    }
    memory = rule("memory_allocated_above", 50)
    assert "memory" in (condition(memory, seen(snapshot(mem_mib=600_000))) or {})


def test_inconsistent_gpus_one_subject_each() -> None:
    gpus = (
        InconsistentGpu("node-1", 0, "GPU-a", H100),
        InconsistentGpu("node-2", 3, "GPU-b", A100),
    )
    found = condition(rule("inconsistent_gpus"), seen(snapshot(inconsistent=gpus)))
    assert set(found or {}) == {"node-1/0", "node-2/3"}
    assert condition(rule("inconsistent_gpus"), seen(snapshot())) == {}


def test_failed_collections_tell_only_the_scrape_rule() -> None:
    failing = seen(None, failure="connection refused")
    assert condition(rule("scrape_failing"), failing) == {
        "scrape": "collecting the metrics failed: connection refused"
    }
    assert condition(rule("scrape_failing"), seen(snapshot())) == {}
    for kind in ("free_whole_gpus_below", "inconsistent_gpus", "low_utilisation"):
        assert condition(rule(kind, 1), failing) is None  # cannot tell: keep the state


def container(ns: str, pod: str, utilisation: float | None) -> ContainerRuntime:
    return ContainerRuntime(ns, pod, "main", "0", "GPU-x", 100.0, 1000.0, 10.0, utilisation, 5.0)


def test_pods_at_low_utilisation_from_the_monitors() -> None:
    pods = (
        PodFigures("ml", "train-1", "node-1", 2, 200, 1000),
        PodFigures("ml", "serve-1", "node-1", 1, 50, 1000),
        PodFigures("ml", "quiet-1", "node-2", 1, 100, 1000),
    )
    runtime = RuntimeSection(
        (),
        (
            container("ml", "train-1", 3),
            container("ml", "train-1", 80),
            container("ml", "serve-1", 4),
            container("ml", "quiet-1", None),
        ),
    )
    low = rule("low_utilisation", 10)
    # train-1 is busy on one of its GPUs; quiet-1 has no reading: neither is counted.
    assert condition(low, seen(snapshot(pods=pods), runtime)) == {
        "ml/serve-1": "pod ml/serve-1 holds 1 GPU(s) at 4 % utilisation"
    }
    assert condition(low, seen(snapshot(pods=pods), None)) is None
    assert condition(low, seen(snapshot(pods=pods), RuntimeSection((), ()))) is None


def test_a_rule_fires_after_its_duration_stays_firing_and_resolves() -> None:
    subject = {"model h100": "1 free"}
    state = RuleState()
    state = advance(state, subject, 100.0, for_seconds=600)
    assert not state.firing and state.pending == {"model h100": 100.0}
    state = advance(state, None, 400.0, for_seconds=600)  # a failed collection changes nothing
    assert state.pending == {"model h100": 100.0}
    state = advance(state, subject, 700.0, for_seconds=600)
    assert state.firing and state.firing_since == 700.0 and state.details == ("1 free",)
    state = advance(state, {"model h100": "0 free"}, 900.0, for_seconds=600)
    assert state.firing_since == 700.0 and state.details == ("0 free",)
    state = advance(state, {}, 1000.0, for_seconds=600)
    assert state == RuleState(False, None, {}, ())
    # A subject that goes away restarts its wait.
    state = advance(state, subject, 1100.0, for_seconds=600)
    assert state.pending == {"model h100": 1100.0}


def test_states_survive_json_and_texts_name_rule_and_subjects() -> None:
    state = RuleState(True, 700.0, {"a": 1.0}, tuple(f"subject {n}" for n in range(12)))
    assert RuleState.from_json(state.to_json()) == state
    h100 = replace(
        rule("free_whole_gpus_below", 2, model="H100"), name="h100-free", for_seconds=600
    )
    text = firing_text("prod", h100, state)
    assert text.title == "Alert firing: prod / h100-free"
    assert "Rule: fewer than 2 free whole GPUs of model H100 for 10 min." in text.body
    assert "subject 9" in text.body and "subject 10" not in text.body and "and 2 more" in text.body
    done = resolved_text("prod", h100, 700.0, 700.0 + 1500)
    assert done.title == "Resolved: prod / h100-free"
    assert "no longer the case after 25 min" in done.body


def test_the_simulated_scheduler_drifts_enough_to_fire_and_resolve() -> None:
    """What the demo of docs/slack.md ("Digests and alerts") promises of ``simulate --nodes 20
    --gpus-per-node 4`` (seed 0)."""
    from core.simulate import drift_cluster, simulate_cluster
    from tests.core.history_support import snapshot_at

    quota = AlertRule(
        "quota", "namespace_quota_above", "C0OPS", threshold=80, namespace="llm-serving"
    )
    h100 = AlertRule("h100", "free_whole_gpus_below", "C0OPS", threshold=5, model="H100")
    cluster = simulate_cluster(20, 4, seed=0)
    states = {"quota": RuleState(), "h100": RuleState()}
    changes: dict[str, list[tuple[int, bool]]] = {"quota": [], "h100": []}
    for step in range(43):
        if step:
            cluster = drift_cluster(cluster)
        snap = snapshot_at(cluster, float(step))
        for check in (quota, h100):
            before = states[check.name].firing
            states[check.name] = advance(
                states[check.name], condition(check, seen(snap)), float(step), 0.0
            )
            if states[check.name].firing != before:
                changes[check.name].append((step, states[check.name].firing))
    # llm-serving (the largest core quota) grows for 30 steps, then lets go of its pods.
    assert changes == {
        "quota": [(7, True), (42, False)],
        "h100": [(8, True), (31, False), (38, True), (41, False)],
    }
