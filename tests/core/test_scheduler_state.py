"""HAMi after v2.10 (PR #2758) says which scheduler replica answered: ``hami_scheduler_is_leader``
and ``hami_scheduler_cache_synced``, gauges without labels, 1 or 0. The fixtures are the small
scheduler export with both families where the Go client puts them (sorted by name)."""

from __future__ import annotations

import json

import pytest

from core.fast_reader import read_go_exposition
from core.model import SourceInfo
from core.simulate import simulate_exposition
from core.summary.build import summarize_text
from core.views import render
from tests.conftest import read_fixture

SOURCE = SourceInfo(kind="file", label="fixture")


def test_the_leader_with_a_synced_cache_is_named_in_the_source_line() -> None:
    text = read_fixture("scheduler-small-leader.prom")
    assert read_go_exposition(text) is not None  # read in bulk, as a scrape is
    summary = summarize_text(text, SOURCE)
    assert summary.input.scheduler_is_leader is True
    assert summary.input.scheduler_cache_synced is True
    assert not any("Possibly" in line for line in summary.headline)
    report = render(summary, "text")
    assert "scheduler leader, cache synced" in " ".join(report.split())
    source = json.loads(render(summary, "json"))["source"]
    assert (source["scheduler_is_leader"], source["scheduler_cache_synced"]) == (True, True)
    # Its figures are those of the same export without the two families.
    plain = summarize_text(read_fixture("scheduler-small.prom"), SOURCE)
    assert summary.cluster == plain.cluster and summary.gpus == plain.gpus


def test_a_standby_replicas_scrape_is_flagged_as_possibly_stale() -> None:
    summary = summarize_text(read_fixture("scheduler-small-standby.prom"), SOURCE)
    assert summary.input.scheduler_is_leader is False
    assert summary.headline[1].startswith(
        "Possibly stale: this scheduler replica is not the leader (hami_scheduler_is_leader 0)"
    )
    assert "scheduler standby replica, cache synced" in " ".join(render(summary, "text").split())


@pytest.mark.parametrize("route", ["bulk", "pasted"])
def test_an_unsynced_cache_is_flagged_on_either_reading_route(route: str) -> None:
    text = read_fixture("scheduler-small-leader.prom").replace(
        "hami_scheduler_cache_synced 1", "hami_scheduler_cache_synced 0"
    )
    if route == "pasted":
        text = "$ kubectl get --raw /metrics\n" + text
    summary = summarize_text(text, SOURCE)
    assert summary.input.scheduler_cache_synced is False
    assert any(
        line.startswith("Possibly incomplete: the scheduler's cache was not synced")
        for line in summary.headline
    )


def test_an_export_without_them_says_nothing_of_the_replica() -> None:
    summary = summarize_text(read_fixture("scheduler-small.prom"), SOURCE)
    assert summary.input.scheduler_is_leader is None
    assert "scheduler leader" not in render(summary, "text")


def test_a_flag_that_is_not_0_or_1_is_left_out_as_an_input_problem() -> None:
    text = read_fixture("scheduler-small-leader.prom").replace(
        "hami_scheduler_is_leader 1", "hami_scheduler_is_leader 2"
    )
    summary = summarize_text(text, SOURCE)
    assert summary.input.scheduler_is_leader is None
    assert [p.family for p in summary.input.problems] == ["hami_scheduler_is_leader"]


@pytest.mark.parametrize(
    ("replica", "flags"),
    [("leader", (True, True)), ("standby", (False, True)), ("unsynced", (True, False))],
)
def test_the_simulator_writes_each_replica_state(replica: str, flags: tuple[bool, bool]) -> None:
    text = simulate_exposition(2, 2, seed=3, replica=replica)
    assert read_go_exposition(text) is not None
    summary = summarize_text(text, SOURCE)
    assert (summary.input.scheduler_is_leader, summary.input.scheduler_cache_synced) == flags
    assert simulate_exposition(2, 2, seed=3) == "\n".join(
        line for line in text.split("\n") if "hami_scheduler_" not in line
    )
