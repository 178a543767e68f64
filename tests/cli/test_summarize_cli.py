"""``hami-summary summarize``: formats, stdin, chart, filters and every exit code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli.main import main
from tests.conftest import FIXTURES

SCHEDULER = str(FIXTURES / "scheduler-small.prom")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["summarize", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_text_report(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, SCHEDULER)
    assert code == 0 and err == ""
    assert "Cores allocated 275 / 600 cores (45.8%)" in out
    assert "Source: file scheduler-small.prom; saved" in out


def test_json_and_filters(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, SCHEDULER, "--format", "json", "--namespace", "team-a")
    assert code == 0
    doc = json.loads(out)
    assert [ns["namespace"] for ns in doc["namespaces"]] == ["team-a"]
    assert doc["filters"] == {"namespace": "team-a"}
    assert doc["cluster"]["core_allocated"] == 275


def test_json_is_one_compact_line_unless_pretty(capsys: pytest.CaptureFixture[str]) -> None:
    code, compact, _ = run(capsys, SCHEDULER, "--format", "json")
    assert code == 0
    assert compact.count("\n") == 1 and compact.endswith("}\n")
    assert compact.startswith('{"schema_version":1,"source":{')
    code, pretty, _ = run(capsys, SCHEDULER, "--format", "json", "--pretty")
    assert code == 0
    assert pretty.startswith('{\n  "schema_version": 1,\n  "source": {\n')
    assert json.loads(pretty) == json.loads(compact)


def test_blocks_are_compact_unless_pretty(capsys: pytest.CaptureFixture[str]) -> None:
    code, compact, _ = run(capsys, SCHEDULER, "--format", "blocks")
    assert code == 0 and compact.count("\n") == 1
    code, pretty, _ = run(capsys, SCHEDULER, "--format", "blocks", "--pretty")
    assert code == 0 and pretty.startswith('{\n  "text": "HAMi GPU allocation, ')
    assert json.loads(pretty) == json.loads(compact)
    assert json.loads(compact)["blocks"]


def test_csv_single_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, SCHEDULER, "--format", "csv", "--csv-table", "workloads")
    assert code == 0
    assert out.splitlines()[0].startswith("namespace,pod,container_index")
    assert len(out.splitlines()) == 7


def test_chart_is_written(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    chart = tmp_path / "chart.png"
    code, _, err = run(capsys, SCHEDULER, "--chart", str(chart))
    assert code == 0
    assert chart.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert f"chart written to {chart}" in err


def test_example_needs_no_input(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--example", "--format", "markdown")
    assert code == 0 and "bundled example cluster" in out


def test_missing_file_is_exit_2_with_a_message(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "/nonexistent/metrics.prom")
    assert code == 2 and out == ""
    assert err == (
        "hami-summary summarize (/nonexistent/metrics.prom): cannot read "
        "/nonexistent/metrics.prom: No such file or directory.\n"
    )


def test_unknown_namespace_is_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, SCHEDULER, "--namespace", "ghost")
    assert code == 2
    assert "No namespace named 'ghost' holds GPUs in these metrics" in err
    assert "Traceback" not in err


@pytest.mark.slow
def test_stdin_through_the_installed_command(tmp_path: Path) -> None:
    env = dict(os.environ, MPLCONFIGDIR=str(tmp_path))
    command = [sys.executable, "-m", "bot.cli.main", "summarize", "-", "--format", "json"]
    done = subprocess.run(
        command,
        input=Path(SCHEDULER).read_bytes(),
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["source"]["kind"] == "paste" and doc["cluster"]["gpus"] == 6


@pytest.mark.slow
def test_text_that_is_not_metrics_is_exit_2(tmp_path: Path) -> None:
    env = dict(os.environ, MPLCONFIGDIR=str(tmp_path))
    command = [sys.executable, "-m", "bot.cli.main", "summarize", "-"]
    done = subprocess.run(
        command,
        input=b"hello, can you check the GPUs?\n",
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert b"No metrics found in that text" in done.stderr
    assert b"Traceback" not in done.stderr


def test_a_gzipped_export_is_read(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import gzip

    packed = tmp_path / "metrics.prom.gz"
    packed.write_bytes(gzip.compress(Path(SCHEDULER).read_bytes()))
    code, out, _ = run(capsys, str(packed), "--format", "json")
    assert code == 0 and json.loads(out)["cluster"]["core_allocated"] == 275


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "The text is empty: there is nothing to summarise."),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 20, "That is binary data, not metrics text"),
    ],
)
def test_empty_and_binary_input_say_what_they_are(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "input"
    path.write_bytes(content)
    code, _, err = run(capsys, str(path))
    assert code == 2 and message in err


def test_runtime_csv_table(capsys: pytest.CaptureFixture[str]) -> None:
    monitor = str(FIXTURES / "vgpumonitor-small.prom")
    code, out, _ = run(capsys, monitor, "--format", "csv", "--csv-table", "runtime")
    assert code == 0
    host_table, container_table, _missing = out.split("\n\n")
    assert host_table.splitlines()[0].startswith("node,device_index,device_uuid,device_type")
    assert len(host_table.splitlines()) == 4 and len(container_table.splitlines()) == 4
    assert "team-a,llm-infer-0,server,0,GPU-5f3c1a2e" in container_table
