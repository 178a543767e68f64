"""Snapshots of simulated clusters hold exactly the ground truth, and survive serialisation."""

from __future__ import annotations

import dataclasses
import json
import zlib

import pytest

from core.api import summarize_text
from core.history.snapshot import (
    SNAPSHOT_VERSION,
    Snapshot,
    SnapshotFormatError,
    decode_snapshot,
    encode_snapshot,
    snapshot_of,
    snapshot_to_json,
)
from core.model import SourceInfo
from core.simulate import SimulatedAllocation, SimulatedCluster, render_exposition, simulate_cluster
from tests.core.history_support import (
    free_whole_per_model,
    inconsistent_uuids,
    pods_of,
    snapshot_at,
)


@pytest.mark.parametrize("seed", [1, 7])
def test_snapshot_holds_the_simulated_truth(seed: int) -> None:
    cluster = simulate_cluster(30, 4, seed=seed, t=3)
    snap = snapshot_at(cluster, 1_700_000_000.0)
    assert snap.taken_at == 1_700_000_000.0
    assert snap.cluster == "sim"
    assert {(p.namespace, p.pod): (p.gpus, p.cores, p.mem_mib) for p in snap.pods} == pods_of(
        cluster
    )
    nodes_of = {(a.namespace, a.pod): a.node for a in cluster.allocations}
    assert {(p.namespace, p.pod): p.node for p in snap.pods} == nodes_of
    assert {m.model: m.free_whole for m in snap.models} == free_whole_per_model(cluster)
    assert {m.model: m.gpus for m in snap.models} == {
        t: sum(1 for d in cluster.devices if d.device_type == t)
        for t in {d.device_type for d in cluster.devices}
    }
    namespaces = {n.namespace: (n.cores, n.mem_mib) for n in snap.namespaces if n.pods}
    assert namespaces == cluster.namespace_totals()
    assert {g.device_uuid for g in snap.inconsistent} == inconsistent_uuids(cluster)
    assert [n.node for n in snap.nodes] == list(cluster.nodes)
    quotas = {(q.namespace, q.resource): (q.used, q.limit) for q in snap.quotas}
    assert quotas == {(q.namespace, q.resource): (q.used, q.limit) for q in cluster.quotas()}


def test_holdings_are_each_namespaces_figures_per_gpu_model() -> None:
    cluster = simulate_cluster(30, 4, seed=5, t=2)
    snap = snapshot_at(cluster, 1_700_000_000.0)
    model_of = {d.uuid: d.device_type for d in cluster.devices}
    expected: dict[tuple[str, str], list[int]] = {}
    for a in cluster.allocations:
        sums = expected.setdefault((a.namespace, model_of[a.device_uuid]), [0, 0])
        sums[0] += a.cores
        sums[1] += a.mem_mib
    assert {(h.namespace, h.model): [h.cores, h.mem_mib] for h in snap.holdings} == expected


def test_pod_holdings_are_each_pods_figures_per_gpu_model_and_survive_encoding() -> None:
    cluster = simulate_cluster(30, 4, seed=5, t=2)
    # One pod also on a second GPU of another model: its holdings are split by model.
    first = cluster.allocations[0]
    other = next(d for d in cluster.devices if d.device_type != _model(cluster, first))
    cluster = dataclasses.replace(
        cluster,
        allocations=(
            *cluster.allocations,
            dataclasses.replace(first, device_uuid=other.uuid, node=other.node, cores=10),
        ),
    )
    snap = snapshot_at(cluster, 1_700_000_000.0)
    expected: dict[tuple[str, str, str], list[int]] = {}
    for a in cluster.allocations:
        sums = expected.setdefault((a.namespace, a.pod, _model(cluster, a)), [0, 0])
        sums[0] += a.cores
        sums[1] += a.mem_mib
    got = {
        (snap.pods[h.pod].namespace, snap.pods[h.pod].pod, h.model): [h.cores, h.mem_mib]
        for h in snap.pod_holdings
    }
    assert got == expected
    assert sum(1 for h in snap.pod_holdings if h.pod == _place(snap, first)) == 2
    assert decode_snapshot(encode_snapshot(snap)) == snap
    payload = snapshot_to_json(snap)
    assert len(payload["pm"]["split"]) == 2  # only the pod on two models is written in rows


def _model(cluster: SimulatedCluster, allocation: SimulatedAllocation) -> str:
    return next(d.device_type for d in cluster.devices if d.uuid == allocation.device_uuid)


def _place(snap: Snapshot, allocation: SimulatedAllocation) -> int:
    return next(
        n
        for n, p in enumerate(snap.pods)
        if (p.namespace, p.pod) == (allocation.namespace, allocation.pod)
    )


def test_a_snapshot_written_before_holdings_reads_with_none() -> None:
    snap = snapshot_at(simulate_cluster(5, 2, seed=2), 1_700_000_000.0)
    payload = snapshot_to_json(snap)
    del payload["held"]
    assert decode_snapshot(_packed(payload)).holdings == ()


def test_round_trip_is_exact_and_compact() -> None:
    snap = snapshot_at(simulate_cluster(40, 8, seed=3), 1_700_000_123.5)
    data = encode_snapshot(snap)
    assert decode_snapshot(data) == snap
    plain = json.dumps(snapshot_to_json(snap), separators=(",", ":")).encode()
    assert len(data) * 4 < len(plain)


def test_a_filtered_summary_is_refused() -> None:
    text = render_exposition(simulate_cluster(3, 2, seed=1))
    summary = summarize_text(text, SourceInfo(kind="paste", label="x"), node="gpu-node-01")
    with pytest.raises(ValueError, match="whole cluster"):
        snapshot_of(summary, 0.0)


def _packed(payload: object) -> bytes:
    return zlib.compress(json.dumps(payload).encode())


def _valid_payload() -> dict[str, object]:
    return snapshot_to_json(snapshot_at(simulate_cluster(3, 2, seed=2), 5.0))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"plain text", "not a compressed snapshot"),
        (zlib.compress(b"\xff\xfe"), "not JSON"),
        (_packed([1, 2]), "a snapshot is a JSON object"),
        (_packed({**_valid_payload(), "v": SNAPSHOT_VERSION + 1}), "this release reads version"),
        (_packed({**_valid_payload(), "t": "yesterday"}), "no time it was taken"),
        (_packed({**_valid_payload(), "pods": None}), "'pods' is missing"),
        (_packed({**_valid_payload(), "nodes": [["n1", 1]]}), "'nodes' has a row of the wrong"),
        (_packed({**_valid_payload(), "ns": [["a", "b", 1, 1, 1]]}), "'ns' has a value of the"),
        (zlib.compress(b'{"v": 1, "t": NaN}'), "no time it was taken"),
        (_packed({**_valid_payload(), "pm": {"names": ["x"], "of": [5]}}), "'pm' has the wrong"),
        (_packed({**_valid_payload(), "pm": {"names": ["x"], "of": []}}), "'pm' has the wrong"),
    ],
)
def test_anything_else_is_refused_by_name(data: bytes, message: str) -> None:
    with pytest.raises(SnapshotFormatError, match=message):
        decode_snapshot(data)
