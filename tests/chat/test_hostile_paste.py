"""``hami-summary chat`` given a paste with values no exporter writes: the warning, no
traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.chat.test_chat import chat
from tests.conftest import read_fixture

A100_0_CORES = (
    'hami_gpu_core_allocated_ratio{device_index="0",device_type="NVIDIA A100-PCIE-40GB",'
    'device_uuid="GPU-5f3c1a2e-7b4d-4e91-9c0a-1d2e3f405162",node="gpu-node-1",zone="vGPU"} 50'
)


@pytest.mark.slow
def test_a_paste_with_nan_is_summarised_with_the_warning(tmp_path: Path) -> None:
    paste = read_fixture("scheduler-small.prom").replace(
        A100_0_CORES, A100_0_CORES[: -len(" 50")] + " NaN"
    )
    result = chat(stdin=paste.rstrip("\n") + "\n\ngpus\n", tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    warning = (
        "Input problems: 1 value(s) that no HAMi exporter writes were left out of every figure: "
        'hami_gpu_core_allocated_ratio{node="gpu-node-1",'
        'device_uuid="GPU-5f3c1a2e-7b4d-4e91-9c0a-1d2e3f405162",device_index="0"} = NaN '
        "(not a number)."
    )
    # The report wraps long lines anywhere, so compare without white space.
    assert "".join(warning.split()) in "".join(result.stdout.split())
    out = " ".join(result.stdout.split())
    # The NaN was left out: that GPU's cores are not known, so neither is the cluster's share.
    assert "cores allocated: not known (1 GPU lacks a limit or allocation series)" in out
    assert "All 6 GPUs" in out  # the follow-up still works on the same metrics


@pytest.mark.slow
def test_a_paste_where_nothing_is_usable_is_explained(tmp_path: Path) -> None:
    lines = [
        line
        if not line or line.startswith(("#", "hami_build_info"))
        else line.rsplit(" ", 1)[0] + " -Inf"
        for line in read_fixture("scheduler-small.prom").rstrip("\n").split("\n")
    ]
    result = chat(stdin="\n".join(lines) + "\n\n", tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert "No usable HAMi sample in that text: all 63 were left out" in result.stdout


@pytest.mark.slow
def test_escape_sequences_in_names_are_shown_never_sent_to_the_terminal(tmp_path: Path) -> None:
    paste = (
        read_fixture("scheduler-small.prom")
        .replace('"gpu-node-2"', '"n\x1b]0;title\x07ode"')
        .replace('"team-a"', '"te\x1b[2Jam"')
    )
    result = chat(stdin=paste.rstrip("\n") + "\n\nfit 1xT4\nworkloads\n", tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr  # chart warnings too
    assert "n\\x1b]0;title\\x07ode           1          1                 2" in result.stdout
    assert "te\\x1b[2Jam" in result.stdout
