"""``hami-summary simulate``: written text, the HTTP demo exporter, and every refusal.

The exporter is exercised over real loopback HTTP, both in-process (``start_demo_exporter``)
and as the installed console script serving until it is interrupted.
"""

from __future__ import annotations

import gzip
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from bot.cli.main import main
from bot.demo_exporter import CONTENT_TYPE, start_demo_exporter
from core.simulate import simulate_exposition

# The installed console script next to this interpreter (pip install -e puts it there).
_SCRIPT = Path(sys.executable).with_name("hami-summary")
CLI = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "bot.cli.main"]


def fetch(
    url: str, headers: dict[str, str] | None = None, method: str = "GET"
) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def family_names(text: str) -> set[str]:
    return {f.name for f in text_string_to_metric_families(text)}


# ---------------------------------------------------------------------------- writing


def test_writes_the_exposition_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--nodes", "3", "--gpus-per-node", "4", "--seed", "7"]) == 0
    out = capsys.readouterr().out
    assert out == simulate_exposition(3, 4, seed=7)
    assert "hami_gpu_core_allocated_ratio" in family_names(out)


def test_writes_legacy_both_and_drifted_variants(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["simulate", "--nodes", "2", "--gpus-per-node", "8", "--seed", "1"]
    assert main([*base, "--legacy"]) == 0
    legacy = capsys.readouterr().out
    assert legacy == simulate_exposition(2, 8, seed=1, legacy=True)
    assert "GPUDeviceCoreAllocated" in legacy and "hami_gpu_core_allocated_ratio" not in legacy
    assert main([*base, "--both"]) == 0
    assert capsys.readouterr().out == simulate_exposition(2, 8, seed=1, both=True)
    assert main([*base, "--step", "3"]) == 0
    assert capsys.readouterr().out == simulate_exposition(2, 8, seed=1, t=3)


def test_writes_to_a_file_and_says_how_much(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "sim.prom"
    args = ["simulate", "--nodes", "4", "--gpus-per-node", "2", "--output", str(target)]
    assert main(args) == 0
    text = target.read_text(encoding="utf-8")
    assert text == simulate_exposition(4, 2)
    samples = sum(1 for line in text.splitlines() if line and not line.startswith("#"))
    assert f"wrote {samples} samples to {target}" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--nodes", "0", "--gpus-per-node", "8"], "--nodes must be between 1 and 10000; got 0"),
        (["--nodes", "2", "--gpus-per-node", "65"], "--gpus-per-node must be between 1 and 64"),
        (["--nodes", "2", "--gpus-per-node", "2", "--step", "-1"], "--step must be 0 or more"),
        (
            ["--nodes", "2", "--gpus-per-node", "2", "--drift-seconds", "5"],
            "--drift-seconds only applies with --serve PORT",
        ),
        (
            ["--nodes", "2", "--gpus-per-node", "2", "--serve", "0", "--output", "x.prom"],
            "choose --output FILE or --serve PORT, not both",
        ),
        (
            ["--nodes", "2", "--gpus-per-node", "2", "--serve", "70000"],
            "--serve needs a port from 0 to 65535; got 70000",
        ),
        (
            ["--nodes", "2", "--gpus-per-node", "2", "--serve", "0", "--drift-seconds", "0"],
            "--drift-seconds must be more than 0",
        ),
        (
            ["--nodes", "2", "--gpus-per-node", "2", "--serve", "0", "--step", "2"],
            "--step does not apply with --serve",
        ),
    ],
)
def test_refuses_bad_options_with_the_reason(
    extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["simulate", *extra]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("hami-summary simulate: ")
    assert message in captured.err
    assert "Traceback" not in captured.err


def test_refuses_an_unwritable_output_with_what_to_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "missing-folder" / "sim.prom"
    args = ["simulate", "--nodes", "1", "--gpus-per-node", "1", "--output", str(target)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"cannot write {target}: No such file or directory" in err
    assert "Check that the folder exists" in err


def test_legacy_and_both_together_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["simulate", "--nodes", "1", "--gpus-per-node", "1", "--legacy", "--both"])
    assert exit_info.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


# ---------------------------------------------------------------------------- the exporter


def test_exporter_answers_like_the_scheduler() -> None:
    with start_demo_exporter("127.0.0.1", 0, nodes=3, gpus_per_node=4, seed=2) as exporter:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/metrics", exporter.url)
        status, headers, body = fetch(exporter.url)
        assert status == 200
        assert headers["Content-Type"] == CONTENT_TYPE
        assert "Content-Encoding" not in headers
        assert body.decode() == simulate_exposition(3, 4, seed=2)

        status, headers, zipped = fetch(exporter.url, {"Accept-Encoding": "gzip, deflate"})
        assert status == 200 and headers["Content-Encoding"] == "gzip"
        assert gzip.decompress(zipped) == body
        assert len(zipped) < len(body) / 4

        # q=0 means "not acceptable" (RFC 9110): plain text then.
        _, headers, plain = fetch(exporter.url, {"Accept-Encoding": "gzip;q=0, identity"})
        assert "Content-Encoding" not in headers and plain == body

        status, headers, head_body = fetch(exporter.url, method="HEAD")
        assert status == 200 and head_body == b""
        assert int(headers["Content-Length"]) == len(body)

        status, _, missing = fetch(exporter.url.replace("/metrics", "/"))
        assert (status, missing) == (404, b"404 page not found\n")
        assert fetch(exporter.url + "?x=1")[0] == 200


def test_exporter_serves_the_legacy_surface() -> None:
    with start_demo_exporter(nodes=2, gpus_per_node=2, seed=4, legacy=True) as exporter:
        _, _, body = fetch(exporter.url)
    assert body.decode() == simulate_exposition(2, 2, seed=4, legacy=True)


def test_exporter_drifts_one_step_per_interval() -> None:
    drift_seconds = 0.4
    before = time.monotonic()
    with start_demo_exporter(nodes=6, gpus_per_node=4, seed=3, drift_seconds=drift_seconds) as ex:
        first = fetch(ex.url)[2].decode()
        again = fetch(ex.url)[2].decode()
        within_first_step = time.monotonic() - before < drift_seconds
        time.sleep(drift_seconds * 2.6)
        later = fetch(ex.url)[2].decode()
        elapsed = time.monotonic() - before
    # Every body is exactly that of one whole drift step, never something in between.
    steps = {
        t: simulate_exposition(6, 4, seed=3, t=t) for t in range(int(elapsed / drift_seconds) + 1)
    }
    if within_first_step:
        assert first == again == steps[0]
    assert first in steps.values()
    later_steps = [t for t, text in steps.items() if text == later]
    assert later_steps and later_steps[0] >= 2


def test_exporter_handles_concurrent_scrapes() -> None:
    with start_demo_exporter(nodes=20, gpus_per_node=8, seed=1, drift_seconds=0.05) as exporter:
        bodies: list[bytes] = []
        errors: list[BaseException] = []

        def scrape() -> None:
            try:
                for _ in range(3):
                    bodies.append(
                        gzip.decompress(fetch(exporter.url, {"Accept-Encoding": "gzip"})[2])
                    )
            except BaseException as err:  # reported by the assertion below
                errors.append(err)

        threads = [threading.Thread(target=scrape) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
    assert not errors
    assert len(bodies) == 18
    for body in bodies:
        assert "hami_vgpu_core_allocated_ratio" in family_names(body.decode())


def test_exporter_refuses_bad_sizes() -> None:
    with pytest.raises(ValueError, match="nodes must be between 1 and"):
        start_demo_exporter(nodes=0, gpus_per_node=1)
    with pytest.raises(ValueError, match="drift_seconds must be more than 0"):
        start_demo_exporter(nodes=1, gpus_per_node=1, drift_seconds=-1)


# ---------------------------------------------------------------------------- the real command


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    return env


# Ctrl-C reaches a command in the foreground of a terminal, whose SIGINT is not ignored. A test
# run started in the background (``cmd &`` in a script, nohup, some CI runners) passes on an
# ignored SIGINT, and Python never turns an ignored one into KeyboardInterrupt: the command is
# started the way a terminal starts it, with SIGINT at its default.
WITH_DEFAULT_SIGINT = [
    sys.executable,
    "-c",
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.argv[1], sys.argv[1:])",
]


@pytest.mark.slow
def test_serve_runs_until_interrupted() -> None:
    proc = subprocess.Popen(
        [
            *WITH_DEFAULT_SIGINT,
            *CLI,  # both forms start with an absolute path, as execv needs
            "simulate",
            "--nodes",
            "2",
            "--gpus-per-node",
            "4",
            "--seed",
            "5",
            "--serve",
            "0",
            "--drift-seconds",
            "30",
        ],
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    try:
        assert proc.stderr is not None
        banner = proc.stderr.readline()
        match = re.search(r"at (http://127\.0\.0\.1:\d+/metrics); Ctrl-C stops it", banner)
        assert match, banner
        assert "2 nodes x 4 GPUs, seed 5, one drift step every 30 s" in banner
        status, headers, body = fetch(match.group(1))
        assert status == 200 and headers["Content-Type"] == CONTENT_TYPE
        assert body.decode() == simulate_exposition(2, 4, seed=5)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.slow
def test_serve_on_a_busy_port_says_what_to_do() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run(
            [*CLI, "simulate", "--nodes", "1", "--gpus-per-node", "1", "--serve", str(port)],
            capture_output=True,
            text=True,
            env=_env(),
            timeout=60,
        )
    assert result.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in result.stderr
    assert "Pick another --serve port (0 picks a free one)" in result.stderr
    assert "Traceback" not in result.stderr
