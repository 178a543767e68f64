"""``hami-summary chat`` fed more than the input limit through a pipe: refused after reading
at most the limit, with a message naming it, and memory that does not follow the input."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.chat.test_chat import chat
from tests.conftest import read_fixture

MIB = 1024 * 1024
LINE = b'hami_vgpu_device_allocated_ratio{node="gpu-node-1",device_uuid="GPU-0"} 0.5\n'


def _feed(stream: object, total_bytes: int) -> None:
    block = LINE * (MIB // len(LINE))
    sent = 0
    try:
        while sent < total_bytes:
            stream.write(block)  # type: ignore[attr-defined]
            sent += len(block)
        stream.close()  # type: ignore[attr-defined]
    except (BrokenPipeError, ValueError):
        pass  # the chat stopped reading at its limit, as it should


def _chat_peak_memory(tmp_path: Path, piped_bytes: int) -> tuple[int, str, int]:
    """(exit code, stderr, peak resident memory in KiB) of a chat fed ``piped_bytes``."""
    env = {**os.environ, "MPLBACKEND": "Agg", "HAMI_SUMMARY_MAX_FILE_BYTES": str(MIB)}
    env.pop("HAMI_CLUSTERS_FILE", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "bot.cli.main", "chat", "--out-dir", str(tmp_path / "out")],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    feeder = threading.Thread(target=_feed, args=(process.stdin, piped_bytes), daemon=True)
    feeder.start()
    assert process.stderr is not None
    stderr = process.stderr.read().decode("utf-8", "replace")
    # wait4 rather than wait(): it also gives the child's own peak memory (ru_maxrss, KiB).
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    feeder.join(timeout=60)
    return process.returncode, stderr, usage.ru_maxrss


@pytest.mark.slow
def test_a_paste_over_the_limit_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    _, _, small_peak = _chat_peak_memory(tmp_path, 0)
    code, stderr, big_peak = _chat_peak_memory(tmp_path, 200 * MIB)
    assert code == 2
    assert stderr.strip() == (
        "hami-summary chat: standard input is over the chat's 1.0 MiB limit, the largest file "
        "the bot takes from Slack (HAMI_SUMMARY_MAX_FILE_BYTES); nothing was summarised. Send "
        "the scheduler's /metrics alone, or summarise a larger file with hami-summary "
        "summarize."
    )
    # 200 MiB went into the pipe; the chat held at most its 1 MiB limit of it (and a few
    # copies while decoding), not the 600 MiB the whole paste would cost.
    assert big_peak - small_peak < 32 * 1024, (small_peak, big_peak)


@pytest.mark.slow
def test_a_file_over_the_limit_is_refused(tmp_path: Path) -> None:
    big = tmp_path / "big.prom"
    big.write_bytes(LINE * (2 * MIB // len(LINE)))
    result = chat(
        str(big), stdin="", tmp_path=tmp_path, env={"HAMI_SUMMARY_MAX_FILE_BYTES": str(MIB)}
    )
    assert result.returncode == 2
    assert f"hami-summary chat: {big} is over the chat's 1.0 MiB limit" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_a_utf16_paste_is_read_as_text(tmp_path: Path) -> None:
    paste = read_fixture("scheduler-small.prom").rstrip("\n") + "\n\ngpus\n"
    env = {**os.environ, "MPLBACKEND": "Agg"}
    env.pop("HAMI_CLUSTERS_FILE", None)
    result = subprocess.run(
        [sys.executable, "-m", "bot.cli.main", "chat", "--out-dir", str(tmp_path / "out")],
        input=paste.encode("utf-16"),  # with a byte-order mark, as PowerShell writes it
        capture_output=True,
        timeout=120,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    out = " ".join(result.stdout.decode().split())
    assert "cores 45.8% allocated (275 / 600 cores)" in out
    assert "All 6 GPUs" in out
