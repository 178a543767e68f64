"""Label values that are terminal escapes, line breaks or chart formulas, through the CLI.

A pod named ``te\\x1b[2Jam`` must not clear the screen of whoever runs ``hami-summary fit`` or
``changes``, a node name with a newline must not split a table row, and a name such as
``gpu$\\frac{$x`` must not be read as a matplotlib formula (a malformed one made
``summarize --chart`` exit 1). Each is shown as written, control characters as their escapes.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from bot.cli.main import main
from tests.conftest import read_fixture

# Exposition escapes: "\\n" in a label value is a real newline once read.
NODE_1 = "ev\x1b[31mil\\nx"
NODE_2 = "n\x1b]0;title\x07ode"
NAMESPACE = "te\x1b[2Jam"


def hostile(text: str) -> str:
    return (
        text.replace('"gpu-node-1"', f'"{NODE_1}"')
        .replace('"gpu-node-2"', f'"{NODE_2}"')
        .replace('"team-a"', f'"{NAMESPACE}"')
    )


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_no_control_characters(text: str) -> None:
    assert not [c for c in text if not c.isprintable() and c != "\n"], repr(text)


def test_fit_shows_node_names_escaped_one_row_each(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "metrics.prom"
    path.write_text(hostile(read_fixture("scheduler-small.prom")), encoding="utf-8")
    code, out, err = run(capsys, "fit", "1", str(path))
    assert (code, err) == (0, "")
    assert_no_control_characters(out)
    rows = [line.split() for line in out.splitlines() if line.startswith("  ")]
    assert rows[1] == ["ev\\x1b[31mil\\nx", "1", "1", "1", "2"]
    assert rows[2] == ["n\\x1b]0;title\\x07ode", "1", "1", "2", "0"]


def test_changes_shows_names_escaped_one_row_each(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    before, after = tmp_path / "before.prom", tmp_path / "after.prom"
    before.write_text(read_fixture("scheduler-small.prom"), encoding="utf-8")
    after.write_text(hostile(read_fixture("scheduler-small.prom")), encoding="utf-8")
    hour_ago = time.time() - 3600
    os.utime(before, (hour_ago, hour_ago))
    code, out, err = run(capsys, "changes", str(before), str(after))
    assert (code, err) == (0, "")
    assert_no_control_characters(out)
    assert "  te\\x1b[2Jam   0 -> 130 (+130)" in out
    assert "  te\\x1b[2Jam/train-full-0  ev\\x1b[31mil\\nx  1 GPU  100 cores  40.0 GiB" in out
    assert "Nodes: 2 appeared (ev\\x1b[31mil\\nx, n\\x1b]0;title\\x07ode); 2 disappeared" in out


@pytest.mark.parametrize("name", ["gpu$\\\\frac{$x", "$x^2$", "a$b"])
def test_a_chart_draws_names_that_look_like_formulas_as_written(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str
) -> None:
    path = tmp_path / "metrics.prom"
    path.write_text(
        read_fixture("scheduler-small.prom").replace('"gpu-node-1"', f'"{name}"'),
        encoding="utf-8",
    )
    chart = tmp_path / "chart.png"
    code, _, err = run(capsys, "summarize", str(path), "--chart", str(chart))
    assert code == 0, err
    assert err == f"chart written to {chart}\n"
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_summarize_keeps_each_table_row_on_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, fmt: str
) -> None:
    path = tmp_path / "metrics.prom"
    path.write_text(hostile(read_fixture("scheduler-small.prom")), encoding="utf-8")
    code, out, err = run(capsys, "summarize", str(path), "--format", fmt)
    assert (code, err) == (0, "")
    assert_no_control_characters(out)
    name = "ev\\x1b[31mil\\nx"
    if fmt == "markdown":  # its escapes escaped: rendered, the name reads as above
        name = "ev\\\\x1b\\[31mil\\\\nx"
    sep = "|" if fmt == "markdown" else "  "
    firsts = [line.strip("| ").split(sep)[0].strip() for line in out.splitlines()]
    assert firsts.count(name) == 1  # the Nodes row, whole, with the name in its first cell
    # GPU rows, whole: in the first page's every-GPU table and in the GPUs table.
    assert firsts.count(name + "/0") == 2 and firsts.count(name + "/1") == 2


def test_clusters_prints_kubeconfig_names_escaped(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    context, cluster = "c\x1b]0;retitled\x07", "k\x1b[2J"
    (tmp_path / "lab.yaml").write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": context,
                "clusters": [{"name": cluster, "cluster": {"server": "https://127.0.0.1:9"}}],
                "users": [{"name": "u", "user": {"token": "t0k3n-value"}}],
                "contexts": [{"name": context, "context": {"cluster": cluster, "user": "u"}}],
            }
        )
    )
    code, out, err = run(capsys, "clusters", "--kubeconfig-dir", str(tmp_path))
    assert (code, err) == (0, "")
    assert_no_control_characters(out)
    assert "  lab.yaml (current context: c\\x1b]0;retitled\\x07)" in out
    assert "c\\x1b]0;retitled\\x07: cluster k\\x1b[2J (https://127.0.0.1:9), user u (token)" in out
