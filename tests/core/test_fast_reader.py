"""The bulk reader of Go-client text gives the same readings as the general parser, or declines."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import fast_reader
from core.exposition import parse_exposition
from core.family_rows import rows_from_samples
from core.fast_reader import read_go_exposition
from core.paste import clean_paste
from core.readings import MetricsReadings, read_family_rows
from core.simulate import simulate_exposition
from tests.conftest import read_fixture


def general(text: str) -> MetricsReadings:
    return read_family_rows(rows_from_samples(parse_exposition(text).samples))


def fast(text: str) -> MetricsReadings | None:
    rows = read_go_exposition(text)
    return None if rows is None else read_family_rows(rows)


@pytest.mark.parametrize(
    "name",
    [
        "scheduler-small.prom",
        "scheduler-small-legacy.prom",
        "vgpumonitor-small.prom",
        "scheduler-small-outcomes.prom",
        "vgpumonitor-health.prom",
        "ascend-vnpu-monitor.prom",
    ],
)
def test_fixtures_read_in_bulk_equal_the_general_parser(name: str) -> None:
    text = read_fixture(name)
    readings = fast(text)
    assert readings is not None, "Go-client fixtures must take the bulk route"
    assert readings == general(text)


@pytest.mark.parametrize(
    ("seed", "legacy", "both"), [(1, False, False), (2, True, False), (3, False, True)]
)
def test_simulated_expositions_read_in_bulk_equal_the_general_parser(
    seed: int, legacy: bool, both: bool
) -> None:
    text = simulate_exposition(12, 4, seed=seed, legacy=legacy, both=both)
    readings = fast(text)
    assert readings is not None
    assert readings == general(text)
    assert readings.devices  # not a vacuous comparison


SCHEDULER = read_fixture("scheduler-small.prom")
SAMPLE_LINE = next(line for line in SCHEDULER.splitlines() if line.startswith("hami_gpu_shared"))


@pytest.mark.parametrize(
    ("what", "text"),
    [
        ("CRLF line ends", SCHEDULER.replace("\n", "\r\n")),
        ("an escaped label value", SCHEDULER.replace('pod="notebook-0"', 'pod="note\\"book"')),
        ("a timestamp", SCHEDULER.replace(SAMPLE_LINE, SAMPLE_LINE + " 1700000000000")),
        ("a blank line", SCHEDULER.replace(SAMPLE_LINE, SAMPLE_LINE + "\n")),
        (
            "a counter family",
            SCHEDULER.replace(
                "# TYPE hami_gpu_shared_count gauge", "# TYPE hami_gpu_shared_count counter"
            ),
        ),
        ("an underscore in a value", SCHEDULER.replace(SAMPLE_LINE, SAMPLE_LINE[:-1] + "1_0")),
        ("a plain comment", SCHEDULER.replace(SAMPLE_LINE, "# pasted by someone\n" + SAMPLE_LINE)),
        (
            "no HELP/TYPE lines",
            "\n".join(line for line in SCHEDULER.splitlines() if not line.startswith("#")),
        ),
        (
            "a line with labels in another order",
            SCHEDULER.replace(
                SAMPLE_LINE,
                SAMPLE_LINE.replace('device_index="0",device_type', "device_type").replace(
                    "device_uuid=", 'device_index="0",device_uuid=', 1
                ),
            ),
        ),
        ("a truncated last line", SCHEDULER[: SCHEDULER.rfind('pod="')]),
        (
            "a label value broken across lines",
            SCHEDULER.replace('pod="notebook-0"', 'pod="note\nbook-0"'),
        ),
        (
            "a line cut after its labels",
            SCHEDULER.replace(SAMPLE_LINE, SAMPLE_LINE.rsplit(" ", 1)[0]),
        ),
        ("two lines joined", SCHEDULER.replace(SAMPLE_LINE + "\n", SAMPLE_LINE + " ", 1)),
    ],
)
def test_bulk_route_declines_what_it_cannot_vouch_for(what: str, text: str) -> None:
    assert read_go_exposition(text) is None, what


def test_unrelated_families_are_counted_not_read() -> None:
    text = SCHEDULER + (
        "# HELP go_goroutines Number of goroutines.\n# TYPE go_goroutines gauge\ngo_goroutines 42\n"
    )
    readings = fast(text)
    assert readings is not None
    assert readings == general(text)
    assert readings.ignored_series == 1
    assert readings.foreign_families == ("go_goroutines",)


@settings(max_examples=60, deadline=None)
@given(
    position=st.integers(min_value=0, max_value=len(SCHEDULER) - 1),
    junk=st.text(
        alphabet=st.sampled_from(list('{}",= \t\n#\\abc019.eE+-_')), min_size=1, max_size=6
    ),
)
def test_any_corruption_is_either_declined_or_read_identically(position: int, junk: str) -> None:
    text = SCHEDULER[:position] + junk + SCHEDULER[position:]
    readings = fast(text)
    if readings is not None:
        assert readings == general(text)


@settings(max_examples=60, deadline=None)
@given(
    position=st.integers(min_value=0, max_value=len(SCHEDULER) - 1),
    junk=st.text(
        alphabet=st.sampled_from(list('{}",= \t\n#`>$&abc019.eE+-_')), min_size=1, max_size=6
    ),
)
def test_text_read_in_bulk_would_come_out_of_paste_cleaning_unchanged(
    position: int, junk: str
) -> None:
    # The summary skips paste cleaning for ASCII text without "&" that the bulk reader accepts;
    # that is only right if cleaning would have left such text as it is.
    text = SCHEDULER[:position] + junk + SCHEDULER[position:]
    if text.isascii() and "&" not in text and read_go_exposition(text) is not None:
        cleaned = clean_paste(text)
        assert (cleaned.text, cleaned.notes) == (text, ())


def test_clean_go_output_is_left_alone_by_paste_cleaning() -> None:
    for text in (SCHEDULER, simulate_exposition(5, 2, seed=4, both=True)):
        assert read_go_exposition(text) is not None
        assert clean_paste(text).text == text


def _second_family_line(text: str, family: str, number: int) -> str:
    return [line for line in text.splitlines() if line.startswith(family + "{")][number]


# Families of one kind list the same series: the bulk reader compares their label blocks with
# those of the first one instead of reading the labels again. A line that differs in any way
# must still be read as the general parser reads it, or declined.
SIMULATED = simulate_exposition(6, 4, seed=5)
LIMIT_LINE = _second_family_line(SIMULATED, "hami_gpu_core_limit_ratio", 3)


@pytest.mark.parametrize(
    ("what", "replacement"),
    [
        ("another node on one line", LIMIT_LINE.replace('node="', 'node="x', 1)),
        ("a label value holding a brace", LIMIT_LINE.replace('node="', 'node="}', 1)),
        ("a label dropped on one line", LIMIT_LINE.replace(',zone="vGPU"', "")),
        ("a label added on one line", LIMIT_LINE.replace("{", '{a="1",', 1)),
        ("a line without its value", LIMIT_LINE.rsplit(" ", 1)[0]),
        ("a line without its closing brace", LIMIT_LINE.replace("}", "", 1)),
        ("a label value broken across lines", LIMIT_LINE.replace('node="', 'node="\n', 1)),
        ("two lines joined", LIMIT_LINE + " " + LIMIT_LINE),
    ],
)
def test_a_family_like_one_read_before_is_read_as_the_general_parser_reads_it(
    what: str, replacement: str
) -> None:
    _read_as_the_general_parser_reads_it(LIMIT_LINE, replacement, what)


def _read_as_the_general_parser_reads_it(line: str, replacement: str, what: str) -> None:
    """``SIMULATED`` with ``line`` replaced: the bulk reader declines it or agrees with the
    general parser."""
    text = SIMULATED.replace(line + "\n", replacement + "\n")
    assert text != SIMULATED, what
    readings = fast(text)
    if readings is not None:
        assert readings == general(text), what


# The memory allocation family has the device families' labels after one of its own.
MEMORY_LINE = _second_family_line(SIMULATED, "hami_gpu_memory_allocated_bytes", 2)


@pytest.mark.parametrize(
    ("what", "replacement"),
    [
        ("other device cores on one line", MEMORY_LINE.replace('cores="100"', 'cores="50"')),
        ("empty device cores on one line", MEMORY_LINE.replace('cores="100"', 'cores=""')),
        ("device cores broken across lines", MEMORY_LINE.replace('cores="1', 'cores="\n1')),
        ("device cores dropped on one line", MEMORY_LINE.replace('device_cores="100",', "")),
        (
            "device cores last on one line",
            MEMORY_LINE.replace('device_cores="100",', "").replace("}", ',device_cores="100"}'),
        ),
        ("another node on one line", MEMORY_LINE.replace('node="', 'node="x', 1)),
        ("a line without its value", MEMORY_LINE.rsplit(" ", 1)[0]),
        ("two lines joined", MEMORY_LINE + " " + MEMORY_LINE),
    ],
)
def test_a_family_with_a_label_in_front_of_known_ones_is_read_as_the_general_parser_reads_it(
    what: str, replacement: str
) -> None:
    _read_as_the_general_parser_reads_it(MEMORY_LINE, replacement, what)


def test_labels_in_front_of_known_ones_take_the_bulk_route(monkeypatch: pytest.MonkeyPatch) -> None:
    taken: list[tuple[str, str, bool]] = []
    rows_like = fast_reader._rows_like

    def spy(name: str, text: str, start: int, end: int, lead: str, known: Any) -> Any:
        alike = rows_like(name, text, start, end, lead, known)
        taken.append((name, lead, alike is not None))
        return alike

    monkeypatch.setattr(fast_reader, "_rows_like", spy)
    assert fast(SIMULATED) is not None
    assert ("hami_gpu_memory_allocated_bytes", 'device_cores="100",', True) in taken
    assert all(alike for _, _, alike in taken)


@pytest.mark.parametrize("nodes", [1, 7, 8, 9, 17])
def test_families_like_one_read_before_of_any_length_take_the_bulk_route(
    nodes: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The values are found eight lines a match: a block of any length must come out whole.
    taken: list[bool] = []
    rows_like = fast_reader._rows_like

    def spy(name: str, text: str, start: int, end: int, lead: str, known: Any) -> Any:
        alike = rows_like(name, text, start, end, lead, known)
        taken.append(alike is not None)
        return alike

    monkeypatch.setattr(fast_reader, "_rows_like", spy)
    text = simulate_exposition(nodes, 1, seed=nodes)
    readings = fast(text)
    assert readings is not None
    assert readings == general(text)
    assert taken and all(taken)
    limits = {key: dev.core_limit for key, dev in readings.devices.items()}
    assert len(limits) == nodes and None not in limits.values()


def test_labels_in_front_of_known_ones_are_read_when_fields_come_from_them() -> None:
    # An overview with the core family's labels after its device memory label, which holds a
    # field: the core family's field tuples lack it, so the overview must be read in full.
    lines = SIMULATED.splitlines()
    cores = [line for line in lines if line.startswith("hami_gpu_core_allocated_ratio{")]
    overview = [
        line.replace("hami_gpu_core_allocated_ratio{", "hami_node_gpu_overview{").replace(
            "{", '{device_memory_limit="' + str(1024 * (number + 1)) + '",', 1
        )
        for number, line in enumerate(cores)
    ]
    text = "\n".join(
        [
            "# HELP hami_gpu_core_allocated_ratio x",
            "# TYPE hami_gpu_core_allocated_ratio gauge",
            *cores,
            "# HELP hami_node_gpu_overview x",
            "# TYPE hami_node_gpu_overview gauge",
            *overview,
        ]
    )
    readings = fast(text)
    assert readings is not None
    assert readings == general(text)
    limits = {dev.overview_mem_limit_mib for dev in readings.devices.values()}
    assert len(limits) == len(cores) and None not in limits


def test_a_family_like_one_read_before_takes_the_bulk_route() -> None:
    readings = fast(SIMULATED)
    assert readings is not None
    assert readings == general(SIMULATED)
    limits = {key: dev.core_limit for key, dev in readings.devices.items()}
    assert len(limits) == 24 and None not in limits.values()


def test_label_values_holding_a_brace_and_a_space_are_read_in_full() -> None:
    # Every line then has a "} " before its label block ends: the values found after the first
    # one are wrong, the comparison with the known label blocks fails, and each family is read
    # line by line instead.
    lines = SIMULATED.splitlines()
    firsts = " ".join(lines[i] for i in range(1, len(lines)) if lines[i - 1].startswith("#"))
    node = next(n for n in (f"gpu-node-{i:02d}" for i in range(1, 7)) if f'"{n}"' not in firsts)
    text = SIMULATED.replace(f'node="{node}"', f'node="{node}}} x"')
    assert text.count("} x") > 8
    readings = fast(text)
    assert readings is not None
    assert readings == general(text)
    assert len(readings.devices) == 24


def test_families_met_twice_are_read_as_the_general_parser_reads_them() -> None:
    text = SIMULATED + SIMULATED  # a text pasted twice: every family block comes again
    readings = fast(text)
    assert readings is not None
    assert readings == general(text)
    assert all(p.reason.startswith("a repeat") for p in readings.problems)
    assert len(readings.problems) > len(readings.devices)


@pytest.mark.parametrize(
    "tokens",
    [
        ["0", "100", "0", "0", "100", "-0", "1.5e+10", "0"],  # mostly repeats: converted once
        ["1", "2", "3", "4", "4"],  # mostly distinct: converted one by one
        ["NaN", "0", "NaN", "0", "0", "+Inf", "0", "-Inf"],
    ],
)
def test_values_are_float_of_each_token(tokens: list[str]) -> None:
    values = fast_reader._values(tokens)
    assert values is not None
    assert [repr(value) for value in values] == [repr(float(token)) for token in tokens]
    # No two rows share a NaN object, as with float() per token.
    nans = [value for value in values if value != value]
    assert len({id(value) for value in nans}) == len(nans)


@pytest.mark.parametrize("bad", ["1_0", "1e", "12 34", "x"])
def test_values_decline_a_token_that_is_not_a_plain_number(bad: str) -> None:
    assert fast_reader._values(["0", "0", "0", bad, "0"]) is None
    assert fast_reader._values([bad]) is None
