"""The input limit: large enough by default for a 10,000-node scheduler, raised or lowered with
``--max-input-mib`` (over ``HAMI_SUMMARY_MAX_INPUT_MIB``, over the settings file), and a
refusal that says what to do."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from bot.cli.main import main
from core.settings import DEFAULT_SETTINGS
from core.simulate import simulate_exposition
from tests.conftest import FIXTURES

SCHEDULER = str(FIXTURES / "scheduler-small.prom")
SCHEDULER_BYTES = (FIXTURES / "scheduler-small.prom").stat().st_size


def _err(capsys: pytest.CaptureFixture[str]) -> str:
    return capsys.readouterr().err


@pytest.mark.slow
def test_the_default_takes_a_10000_node_scheduler_with_room_to_spare() -> None:
    # The page grows with the nodes: a tenth of the cluster, times ten, is the whole page.
    thousand_nodes = len(simulate_exposition(1000, 8, outcomes=True).encode())
    assert thousand_nodes * 10 * 1.5 < DEFAULT_SETTINGS.limits.max_input_bytes


def test_the_flag_lowers_the_limit_and_the_message_says_how_to_raise_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["summarize", SCHEDULER, "--max-input-mib", "0.001"]) == 2
    err = _err(capsys)
    assert err.startswith(
        "hami-summary summarize (" + SCHEDULER + "): the input is over the limit. The input "
        "limit is 1.0 KiB; a 10,000-node scheduler writes about 150 MB. For a larger cluster "
        "raise the limit (--max-input-mib, HAMI_SUMMARY_MAX_INPUT_MIB or max_input_bytes in "
        "the settings file)"
    ), err
    assert "Traceback" not in err


def test_the_flag_wins_over_the_environment_and_the_settings_file(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    settings = tmp_path / "settings.yaml"
    settings.write_text("limits:\n  max_input_bytes: 1024\n")
    monkeypatch.setenv("HAMI_SUMMARY_MAX_INPUT_MIB", "0.001")
    assert main(["summarize", SCHEDULER, "--settings", str(settings)]) == 2
    assert "The input limit is 1.0 KiB" in _err(capsys)
    argv = ["summarize", SCHEDULER, "--settings", str(settings), "--max-input-mib", "1"]
    assert main(argv) == 0
    assert "GPU allocation summary" in capsys.readouterr().out


def test_the_environment_wins_over_the_settings_file(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    settings = tmp_path / "settings.yaml"
    settings.write_text("limits:\n  max_input_bytes: 1024\n")
    monkeypatch.setenv("HAMI_SUMMARY_MAX_INPUT_MIB", "1")
    assert main(["summarize", SCHEDULER, "--settings", str(settings)]) == 0


def test_a_gzipped_file_is_held_to_the_limit_once_inflated(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    packed = tmp_path / "metrics.prom.gz"
    packed.write_bytes(gzip.compress((FIXTURES / "scheduler-small.prom").read_bytes()))
    limit_mib = f"{(SCHEDULER_BYTES - 1) / 1048576:.6f}"
    assert main(["summarize", str(packed), "--max-input-mib", limit_mib]) == 2
    assert "the decompressed input is over the limit. The input limit is" in _err(capsys)
    assert main(["summarize", str(packed), "--max-input-mib", "1"]) == 0


@pytest.mark.parametrize("value", ["0", "-3", "lots", "inf", "nan"])
@pytest.mark.parametrize("command", ["summarize", "why", "fit", "changes"])
def test_a_bad_value_is_refused_by_name(
    capsys: pytest.CaptureFixture[str], value: str, command: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([command, SCHEDULER, "--max-input-mib", value])
    assert exited.value.code == 2
    assert f"argument --max-input-mib: must be a positive number of MiB, got {value!r}" in _err(
        capsys
    )
