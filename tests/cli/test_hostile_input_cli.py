"""``hami-summary summarize`` on values no exporter writes, repeated series and UTF-16 files:
exit codes, the exact warning on stderr, and strict JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli.main import main
from tests.conftest import read_fixture

A100_0_CORES = (
    'hami_gpu_core_allocated_ratio{device_index="0",device_type="NVIDIA A100-PCIE-40GB",'
    'device_uuid="GPU-5f3c1a2e-7b4d-4e91-9c0a-1d2e3f405162",node="gpu-node-1",zone="vGPU"} 50'
)
NAMED = (
    'hami_gpu_core_allocated_ratio{node="gpu-node-1",'
    'device_uuid="GPU-5f3c1a2e-7b4d-4e91-9c0a-1d2e3f405162",device_index="0"}'
)


def write(tmp_path: Path, text: str, name: str = "metrics.prom") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def with_a100_cores(value: str) -> str:
    text = read_fixture("scheduler-small.prom")
    assert A100_0_CORES in text
    return text.replace(A100_0_CORES, A100_0_CORES[: -len(" 50")] + " " + value)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["summarize", *args])
    out, err = capsys.readouterr()
    return code, out, err


def refuse(name: str) -> object:
    raise AssertionError(f"bare {name} in JSON")


@pytest.mark.parametrize(
    ("value", "shown", "reason"),
    [
        ("NaN", "NaN", "not a number"),
        ("+Inf", "+Inf", "infinite"),
        ("-Inf", "-Inf", "infinite"),
        ("1e308", "1e+308", "above 2,147,483,647, the most HAMi's 32-bit core count holds"),
        ("-30", "-30", "negative"),
    ],
)
def test_json_is_strict_and_the_warning_is_exact(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, value: str, shown: str, reason: str
) -> None:
    path = write(tmp_path, with_a100_cores(value))
    code, out, err = run(capsys, str(path), "--format", "json")
    warning = (
        "Input problems: 1 value(s) that no HAMi exporter writes were left out of every figure: "
        f"{NAMED} = {shown} ({reason})."
    )
    assert code == 0
    assert err == f"hami-summary summarize ({path}): warning: {warning}\n"
    document = json.loads(out, parse_constant=refuse)
    assert document["cluster"]["core_allocated"] == 225
    assert warning in document["notes"]


A100_0_LIMIT = A100_0_CORES.replace("core_allocated_ratio", "core_limit_ratio")[: -len(" 50")]


@pytest.mark.parametrize("value", ["4e-320", "1e-300", "0.5", "99.5"])
def test_a_fractional_limit_is_left_out_so_no_share_of_it_is_infinite(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, value: str
) -> None:
    # 50 cores of a limit of 4e-320 would be a share of +Inf, which strict JSON cannot hold.
    text = read_fixture("scheduler-small.prom").replace(
        A100_0_LIMIT + " 100", A100_0_LIMIT + " " + value
    )
    path = write(tmp_path, text)
    for fmt in ("json", "text", "markdown", "csv", "blocks"):
        code, out, err = run(capsys, str(path), "--format", fmt)
        assert code == 0, err
        assert err == (
            f"hami-summary summarize ({path}): warning: Input problems: 1 value(s) that no HAMi "
            "exporter writes were left out of every figure: "
            f"{NAMED.replace('core_allocated', 'core_limit')} = {value} (not a whole number).\n"
        )
        assert "inf%" not in out and "Infinity" not in out
    code, out, _ = run(capsys, str(path), "--format", "json")
    gpu = json.loads(out, parse_constant=refuse)["gpus"][0]
    assert (gpu["node"], gpu["device_index"], gpu["core_limit"]) == ("gpu-node-1", 0, 0)


def test_text_report_shows_the_warning_under_its_header(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, _ = run(capsys, str(write(tmp_path, with_a100_cores("NaN"))))
    assert code == 0
    head = " ".join(out.split("\n\nCluster overview")[0].split())
    assert "Input problems: 1 value(s) that no HAMi exporter writes were left out" in head
    assert "Cores allocated 225 / 600 cores (37.5%)" in out
    assert "Traceback" not in out


def test_nothing_usable_is_exit_2_naming_the_values(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    lines = [
        line
        if not line or line.startswith(("#", "hami_build_info"))
        else line.rsplit(" ", 1)[0] + " +Inf"
        for line in read_fixture("scheduler-small.prom").split("\n")
    ]
    path = write(tmp_path, "\n".join(lines))
    code, out, err = run(capsys, str(path), "--format", "json")
    assert code == 2 and out == ""
    assert err.startswith(
        f"hami-summary summarize ({path}): No usable HAMi sample in that text: all 63 were left "
        f"out because no HAMi exporter writes such values ({NAMED} = +Inf (infinite); "
    )
    assert err.endswith("Send the /metrics output as the exporter wrote it, without edits.\n")


def test_a_conflicting_repeat_keeps_the_first_value(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text = read_fixture("scheduler-small.prom")
    text = text.replace(A100_0_CORES, A100_0_CORES + "\n" + A100_0_CORES[: -len(" 50")] + " 99")
    code, out, err = run(capsys, str(write(tmp_path, text)), "--format", "json")
    assert code == 0
    assert json.loads(out)["cluster"]["core_allocated"] == 275
    assert err.endswith(
        f"{NAMED} = 99 (a second sample of a series already read; the first, 50, is kept).\n"
    )


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_a_utf16_file_is_read(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, encoding: str
) -> None:
    path = tmp_path / "metrics.prom"
    path.write_bytes(read_fixture("scheduler-small.prom").encode(encoding))
    code, out, err = run(capsys, str(path))
    assert (code, err) == (0, "")
    assert "Cores allocated 275 / 600 cores (45.8%)" in out


@pytest.mark.slow
def test_the_installed_command_on_hostile_values_gives_strict_json(tmp_path: Path) -> None:
    text = with_a100_cores("NaN").replace('pod="notebook-0"', 'pod="=HYPERLINK(\\"http://x\\")"')
    text += text.split("# HELP hami_vgpu_core_allocated_ratio")[1].split("\n", 2)[2]
    env = dict(os.environ, MPLCONFIGDIR=str(tmp_path))
    for fmt in ("json", "csv"):
        done = subprocess.run(
            [sys.executable, "-m", "bot.cli.main", "summarize", "-", "--format", fmt],
            input=text.encode("utf-16"),
            capture_output=True,
            env=env,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert b"Traceback" not in done.stderr
        assert done.stderr.startswith(b"hami-summary summarize: warning: Input problems: ")
        if fmt == "json":
            json.loads(done.stdout, parse_constant=refuse)
        else:
            assert b"'=HYPERLINK" in done.stdout


@pytest.mark.parametrize("fmt", ["json", "csv", "text"])
def test_lines_that_cannot_be_read_are_warned_of_on_stderr(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, fmt: str
) -> None:
    # A stray quote in a node name: every line of gpu-node-1 is unreadable, its GPUs are gone.
    text = read_fixture("scheduler-small.prom").replace("gpu-node-1", '<b>gpu-node-1</b>&"x')
    path = write(tmp_path, text)
    code, out, err = run(capsys, str(path), "--format", fmt)
    assert code == 0
    assert err == (
        f"hami-summary summarize ({path}): warning: Input problems: 27 line(s) could not be read "
        "as metrics and are in no figure (first at line 6: a label value has no closing double "
        "quote, so the label set never ends). Send the /metrics output as the exporter wrote "
        "it, without edits.\n"
    )
    if fmt == "json":
        assert json.loads(out)["cluster"]["gpus"] == 3
