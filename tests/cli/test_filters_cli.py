"""``hami-summary summarize --namespace / --node`` on a simulated cluster: the filter's own
rows, its share of each GPU and node, the closest names for a mistyped one, and a filtered
chart in the cluster chart's colours."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from bot.cli.main import main
from core.api import summarize_text
from core.model import SourceInfo
from core.simulate import SimulatedCluster, render_exposition, simulate_cluster
from core.views.palette import assign_colours, namespace_ranking, preferred_colour
from tests.support.png_colours import namespace_colours


@pytest.fixture(scope="module")
def cluster() -> SimulatedCluster:
    return simulate_cluster(20, 8, seed=0)


@pytest.fixture
def export(tmp_path: Path, cluster: SimulatedCluster) -> str:
    path = tmp_path / "f.prom"
    path.write_text(render_exposition(cluster))
    return str(path)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["summarize", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_namespace_report_and_its_json(
    capsys: pytest.CaptureFixture[str], export: str, cluster: SimulatedCluster
) -> None:
    namespace = cluster.allocations[0].namespace
    mine = [a for a in cluster.allocations if a.namespace == namespace]
    code, out, err = run(capsys, export, "--namespace", namespace)
    assert code == 0 and err == ""
    assert out.startswith(f"HAMi GPU allocation summary, namespace {namespace}\n")
    assert f"GPUs namespace {namespace} uses, its share of each" in out
    code, out, _ = run(capsys, export, "--namespace", namespace, "--format", "json")
    focus = json.loads(out)["focus"]
    assert focus["namespace"] == namespace and focus["cores"] == sum(a.cores for a in mine)
    per_gpu: dict[str, int] = defaultdict(int)
    for a in mine:
        per_gpu[a.device_uuid] += a.cores
    assert {g["device_uuid"]: g["cores"] for g in focus["gpus"]} == per_gpu
    assert {p["pod"] for p in focus["pods"]} == {a.pod for a in mine}


def test_a_node_report_lists_its_idle_gpus_too(
    capsys: pytest.CaptureFixture[str], export: str, cluster: SimulatedCluster
) -> None:
    used = {a.device_uuid for a in cluster.allocations}
    idle = next(d for d in cluster.devices if d.uuid not in used)
    code, out, _ = run(capsys, export, "--node", idle.node)
    assert code == 0
    page = out[: out.index("\nDetails\n")]
    every = page[page.index("Every GPU of the node") : page.index("Namespaces on the node")]
    for d in cluster.devices:
        if d.node == idle.node:
            assert f"{d.node}/{d.index} " in every
    assert f"{idle.node}/{idle.index} " in every and " idle" in every


def test_a_mistyped_name_gets_the_closest_three(
    capsys: pytest.CaptureFixture[str], export: str, cluster: SimulatedCluster
) -> None:
    node = cluster.devices[-1].node  # gpu-node-20
    typo = node.replace("-2", "-02")
    code, _, err = run(capsys, export, "--node", typo)
    assert code == 2
    assert f"No node named '{typo}' in these metrics. Did you mean {node}" in err
    nodes = {d.node for d in cluster.devices}
    assert sum(1 for n in nodes if n in err.replace(typo, "")) <= 3


def test_a_namespace_chart_uses_the_cluster_charts_colour(
    capsys: pytest.CaptureFixture[str], export: str, cluster: SimulatedCluster, tmp_path: Path
) -> None:
    whole = summarize_text(render_exposition(cluster), SourceInfo("paste", "x"))
    colours = assign_colours(namespace_ranking(whole))
    namespace = next(ns for ns, colour in colours.items() if colour != preferred_colour(ns))
    chart = tmp_path / "chart.png"
    code, _, _ = run(capsys, export, "--namespace", namespace, "--chart", str(chart))
    assert code == 0
    assert namespace_colours(chart.read_bytes()) == {colours[namespace]}
