"""Operators change thresholds and limits in a settings file or the environment."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli.main import main
from bot.settings_file import load_settings
from core.settings import SettingsError
from tests.conftest import FIXTURES

SCHEDULER = str(FIXTURES / "scheduler-small.prom")


def test_a_settings_file_changes_the_verdicts(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    settings = tmp_path / "settings.yaml"
    # With "dominant" at 45 %, team-a (47 % of cores, 65 % of memory) becomes a dominant tenant.
    settings.write_text("thresholds:\n  dominant_percent: 45\n")
    code = main(["summarize", SCHEDULER, "--format", "json", "--settings", str(settings)])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    team_a = next(ns for ns in doc["namespaces"] if ns["namespace"] == "team-a")
    assert team_a["class"] == "dominant tenant, mixed"
    assert doc["cluster"]["distribution"] == "concentrated"


def test_the_input_limit_comes_from_the_environment(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HAMI_SUMMARY_MAX_INPUT_MIB", "0.001")
    assert main(["summarize", SCHEDULER]) == 2
    assert "the input is over the limit. The input limit is 1.0 KiB" in capsys.readouterr().err


def test_top_rows_sets_the_table_length(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    settings = tmp_path / "settings.yaml"
    settings.write_text("limits:\n  top_rows: 2\n")
    assert main(["summarize", SCHEDULER, "--settings", str(settings)]) == 0
    assert "GPUs (2 of 6: inconsistent, full and shared first)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("thresholds:\n  saturation: 95\n", "unknown field 'saturation'; known fields:"),
        ("thresholds:\n  dominant_percent: 150\n", "dominant_percent must be between 0 and 100"),
        ("limits:\n  top_rows: 2.5\n", "limits.top_rows must be a whole number, got 2.5"),
        ("colours: {}\n", "unknown section(s) colours; expected thresholds, limits"),
        ("- a list\n", "must hold a mapping with thresholds/limits"),
        ("thresholds: [\n", "is not valid YAML"),
        ("prices:\n  per_gpu_hour: {L4: 1}\n", "prices.currency must name the currency"),
        ("prices:\n  currency: EUR\n  per_gpu_hour: {L4: -1}\n", "['L4'] must be a number of 0"),
        ("prices:\n  currency: EUR\n  per_gpu_hour: {L4: .nan}\n", "must be a number of 0 or"),
        ("prices:\n  currency: EUR\n  per_gpu_hour: [1]\n", "must map GPU models to prices"),
        ("prices:\n  per_hour: {L4: 1}\n", "unknown field(s) per_hour; known fields: currency"),
    ],
)
def test_bad_settings_are_named(tmp_path: Path, content: str, message: str) -> None:
    settings = tmp_path / "settings.yaml"
    settings.write_text(content)
    with pytest.raises(SettingsError) as error:
        load_settings({}, str(settings))
    assert message in str(error.value)
    assert str(settings) in str(error.value)


def test_a_bad_settings_file_is_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["summarize", SCHEDULER, "--settings", str(tmp_path / "missing.yaml")]) == 2
    err = capsys.readouterr().err
    assert "cannot read the settings file" in err and "Traceback" not in err


def test_prices_come_from_the_settings_file(tmp_path: Path) -> None:
    settings = tmp_path / "settings.yaml"
    settings.write_text(
        "prices:\n  currency: EUR\n  per_gpu_hour:\n    NVIDIA H100 80GB HBM3: 3.2\n    '*': 0.5\n"
    )
    prices = load_settings({}, str(settings)).prices
    assert prices.currency == "EUR"
    assert prices.of("nvidia h100 80gb hbm3") == 3.2  # names compared without case
    assert prices.of("NVIDIA L4") == 0.5
    assert load_settings({}, None).prices.of("NVIDIA L4") is None
