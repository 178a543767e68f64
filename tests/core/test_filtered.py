"""Filters that filter: a namespace's or node's own rows and shares, checked against the
simulator's allocations, and the closest names for a mistyped one.

Each expected figure is summed here from the simulated cluster's ground truth (its devices
and allocations), not read back from the summary.
"""

from __future__ import annotations

from collections import defaultdict

import pytest

from core.api import cluster_of, filter_summary, summarize_text
from core.errors import InputError
from core.model import SourceInfo, Summary
from core.simulate import SimulatedCluster, render_exposition, simulate_cluster
from core.summary.filtered import closest_names, fit_scope
from core.views import render
from tests.conftest import read_fixture

SOURCE = SourceInfo("paste", "sim")


@pytest.fixture(scope="module")
def cluster() -> SimulatedCluster:
    return simulate_cluster(20, 8, seed=3)


@pytest.fixture(scope="module")
def whole(cluster: SimulatedCluster) -> Summary:
    return summarize_text(render_exposition(cluster), SOURCE)


def _largest_namespace(cluster: SimulatedCluster) -> str:
    cores: dict[str, int] = defaultdict(int)
    for a in cluster.allocations:
        cores[a.namespace] += a.cores
    return max(cores, key=lambda ns: (cores[ns], ns))


def test_a_namespace_filter_has_its_totals_pods_and_share_of_each_gpu_and_node(
    cluster: SimulatedCluster, whole: Summary
) -> None:
    namespace = _largest_namespace(cluster)
    mine = [a for a in cluster.allocations if a.namespace == namespace]
    summary = filter_summary(whole, namespace=namespace, node=None)
    focus = summary.focus
    assert focus is not None and focus.whole is whole and cluster_of(summary) is whole
    assert focus.cores == sum(a.cores for a in mine)
    assert focus.mem_mib == sum(a.mem_mib for a in mine)
    assert {p.pod for p in focus.pods} == {a.pod for a in mine}
    assert [p.cores for p in focus.pods] == sorted((p.cores for p in focus.pods), reverse=True)
    # Its share of every GPU it uses, and only those.
    on_gpu: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for a in mine:
        on_gpu[(a.node, a.device_uuid)][0] += a.cores
        on_gpu[(a.node, a.device_uuid)][1] += a.mem_mib
    assert {(s.gpu.node, s.gpu.device_uuid): [s.cores, s.mem_mib] for s in focus.gpus} == on_gpu
    # Its share of every node it uses, against the node's own capacity.
    on_node: dict[str, int] = defaultdict(int)
    for a in mine:
        on_node[a.node] += a.cores
    assert {s.node.node: s.cores for s in focus.nodes} == on_node
    limits: dict[str, int] = defaultdict(int)
    for d in cluster.devices:
        limits[d.node] += d.core_limit
    assert all(s.node.core_limit == limits[s.node.node] for s in focus.nodes)
    # Its own row (totals and quota), and the cluster's figures stay whole.
    assert focus.namespace_row is not None and focus.namespace_row.namespace == namespace
    assert [ns.namespace for ns in summary.namespaces] == [namespace]
    assert summary.cluster == whole.cluster and summary.models == whole.models


def test_a_node_filter_lists_every_gpu_of_the_node_and_each_namespace_there(
    cluster: SimulatedCluster, whole: Summary
) -> None:
    idle_uuids = {d.uuid for d in cluster.devices} - {a.device_uuid for a in cluster.allocations}
    node = next(d.node for d in cluster.devices if d.uuid in idle_uuids)
    summary = filter_summary(whole, namespace=None, node=node)
    focus = summary.focus
    assert focus is not None and focus.node_row is not None
    devices = sorted((d.index, d.uuid) for d in cluster.devices if d.node == node)
    assert [(s.gpu.device_index, s.gpu.device_uuid) for s in focus.gpus] == devices
    assert any(s.gpu.state == "idle" for s in focus.gpus)
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    pods: dict[str, set[str]] = defaultdict(set)
    for a in cluster.allocations:
        if a.node == node:
            totals[a.namespace][0] += a.cores
            totals[a.namespace][1] += a.mem_mib
            pods[a.namespace].add(a.pod)
    assert {s.namespace: [s.cores, s.mem_mib] for s in focus.namespaces} == totals
    assert {s.namespace: s.pods for s in focus.namespaces} == {k: len(v) for k, v in pods.items()}
    limit = sum(d.core_limit for d in cluster.devices if d.node == node)
    for share in focus.namespaces:
        assert share.core_percent == pytest.approx(totals[share.namespace][0] / limit * 100)
    assert {p.pod for p in focus.pods} == {a.pod for a in cluster.allocations if a.node == node}


def test_both_filters_narrow_to_the_namespace_on_the_node(
    cluster: SimulatedCluster, whole: Summary
) -> None:
    namespace = _largest_namespace(cluster)
    node = next(a.node for a in cluster.allocations if a.namespace == namespace)
    summary = filter_summary(whole, namespace=namespace, node=node)
    mine = [a for a in cluster.allocations if a.namespace == namespace and a.node == node]
    assert summary.focus is not None and summary.focus.cores == sum(a.cores for a in mine)
    assert {g.node for g in summary.gpus} == {node}
    elsewhere = next(
        d.node
        for d in cluster.devices
        if d.node not in {a.node for a in cluster.allocations if a.namespace == namespace}
    )
    with pytest.raises(InputError) as error:
        filter_summary(whole, namespace=namespace, node=elsewhere)
    assert f"Namespace '{namespace}' holds no GPU on node {elsewhere}" in error.value.message


def test_a_mistyped_name_gets_the_three_closest(whole: Summary) -> None:
    node = whole.nodes[5].node  # gpu-node-06
    typo = node.replace("-0", "-", 1)  # gpu-node-6
    with pytest.raises(InputError) as error:
        filter_summary(whole, namespace=None, node=typo)
    message = error.value.message
    assert message.startswith(f"No node named '{typo}' in these metrics. Did you mean {node}, ")
    named = [n.node for n in whole.nodes if n.node in message]
    assert len(named) == 3
    namespace = whole.namespaces[0].namespace
    with pytest.raises(InputError) as error:
        filter_summary(whole, namespace=namespace[:-1] + "x", node=None)
    assert f"Did you mean {namespace}" in error.value.message
    assert sum(ns.namespace in error.value.message for ns in whole.namespaces) <= 3


def test_a_name_like_none_says_how_the_names_run_not_every_name(whole: Summary) -> None:
    with pytest.raises(InputError) as error:
        filter_summary(whole, namespace=None, node="zzzz")
    nodes = sorted(n.node for n in whole.nodes)
    assert error.value.message == (
        "No node named 'zzzz' in these metrics. No node here is named like it; the "
        f"{len(nodes)} nodes run from {nodes[0]} to {nodes[-1]}."
    )


@pytest.mark.parametrize(
    ("asked", "known", "expected"),
    [
        ("gpu-node-51", ["gpu-node-051", "gpu-node-151", "gpu-node-005"], ["gpu-node-051"]),
        ("node-7", [f"gpu-node-{i:03d}" for i in range(1, 30)], ["gpu-node-007"]),
        ("Team-A", ["team-a", "team-b", "research"], ["team-a", "team-b"]),
        ("teamb", ["team-a", "team-b"], ["team-b", "team-a"]),
        ("llm", ["ml-training", "research"], []),
    ],
)
def test_closest_names(asked: str, known: list[str], expected: list[str]) -> None:
    assert closest_names(asked, known)[: len(expected)] == expected
    assert len(closest_names(asked, known)) <= 3


def test_monitor_metrics_only_filter_to_the_namespace_of_their_containers() -> None:
    whole = summarize_text(read_fixture("vgpumonitor-small.prom"), SOURCE)
    summary = filter_summary(whole, namespace="team-a", node=None)
    assert summary.runtime is not None and whole.runtime is not None
    assert {c.namespace for c in summary.runtime.containers} == {"team-a"}
    assert len(summary.runtime.containers) == sum(
        1 for c in whole.runtime.containers if c.namespace == "team-a"
    )
    # The host GPUs its containers run on, no other.
    used = {c.device_uuid for c in summary.runtime.containers}
    assert {h.device_uuid for h in summary.runtime.host_gpus} == used
    on_node = filter_summary(whole, namespace=None, node="gpu-node-1")
    assert on_node.runtime is not None and len(on_node.runtime.host_gpus) == 3
    # The page says what is known of it (its containers), not "none".
    page = render(summary, "text").split("\nDetails\n")[0]
    assert "namespace team-a: not known: no scheduler allocation series for it" in page
    assert "team-a/train-full-0" in page and "team-b/" not in page and "none" not in page


def test_fit_goes_anywhere_for_a_namespace_and_on_the_node_for_a_node(whole: Summary) -> None:
    namespace = whole.namespaces[0].namespace
    gpus, where = fit_scope(filter_summary(whole, namespace=namespace, node=None))
    assert gpus == whole.gpus and "whole cluster" in where
    node = whole.nodes[0].node
    gpus, where = fit_scope(filter_summary(whole, namespace=None, node=node))
    assert {g.node for g in gpus} == {node} and len(gpus) == whole.nodes[0].gpus
    assert where == f"node {node}"
