"""Lines over the size limits are left out before parsing, named by line number and series."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.api import summarize_text
from core.errors import InputError
from core.line_limits import (
    _INSPECT_CHARS,
    MAX_LABEL_VALUE_CHARS,
    MAX_LABELS_PER_SERIES,
    MAX_LINE_CHARS,
    _long_line_starts,
    screen_lines,
)
from core.model import SourceInfo
from core.views import render
from core.views.table_spec import NAME_MIN_WIDTH, Table, fixed_width, take_from_widest
from tests.conftest import read_fixture

SOURCE = SourceInfo(kind="paste", label="pasted text")
CORES_LINE = (
    'hami_gpu_core_allocated_ratio{device_index="0",device_type="NVIDIA A100-PCIE-40GB",'
    'device_uuid="GPU-5f3c1a2e-7b4d-4e91-9c0a-1d2e3f405162",node="gpu-node-1",zone="vGPU"} 50'
)
SHOWN_SERIES = 'hami_gpu_core_allocated_ratio{device_index="0",device_type=…'


def fixture_with(line: str) -> str:
    text = read_fixture("scheduler-small.prom")
    assert CORES_LINE in text
    return text.replace(CORES_LINE, line)


def line_no_of_cores_line() -> int:
    return read_fixture("scheduler-small.prom").split("\n").index(CORES_LINE) + 1


def extra_labels(count: int, value: str = "v") -> str:
    return "".join(f',extra{i}="{value}"' for i in range(count))


def with_extra(labels: str) -> str:
    return CORES_LINE.replace('zone="vGPU"}', 'zone="vGPU"' + labels + "}")


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (
            with_extra(extra_labels(MAX_LABELS_PER_SERIES)),
            "it has 205 labels, over the limit of 200 per series",
        ),
        (
            with_extra(',pod="' + "p" * (MAX_LABEL_VALUE_CHARS + 1) + '"'),
            "it has a label value of 1,025 characters, over the limit of 1,024",
        ),
        (
            CORES_LINE[: -len("50")] + "1" * 40_000 + "x",
            "it is 40,170 characters long, over the limit of 16,384",
        ),
    ],
    ids=["labels", "label-value", "line"],
)
def test_a_line_over_a_limit_is_left_out_and_named(line: str, reason: str) -> None:
    summary = summarize_text(fixture_with(line), SOURCE)
    note = (
        "Input problems: 1 line(s) over the size limits were left out: line "
        f"{line_no_of_cores_line()} (`{SHOWN_SERIES}`): {reason}. No exporter writes such "
        "lines; send the /metrics output unchanged."
    )
    assert note in summary.headline
    assert note in summary.notes
    # The series is gone: the GPU has no cores allocated figure left.
    assert summary.cluster.core_allocated == 225
    assert "cores allocated of 1 GPU(s)" in " ".join(summary.headline)


def test_lines_at_the_limits_are_read() -> None:
    line = with_extra(
        extra_labels(MAX_LABELS_PER_SERIES - 6) + ',pod="' + "p" * MAX_LABEL_VALUE_CHARS + '"'
    )
    summary = summarize_text(fixture_with(line), SOURCE)
    assert summary.cluster.core_allocated == 275
    assert not any("size limits" in note for note in summary.notes)


def test_line_numbers_after_a_blanked_line_are_kept() -> None:
    screened = screen_lines("a 1\n" + "b" * (MAX_LINE_CHARS + 1) + "\nc 1\n" + "d" * 20_000)
    assert screened.text == "a 1\n\nc 1\n"
    assert [(line.line_no, line.reason[:20]) for line in screened.over_limit] == [
        (2, "it is 16,385 charact"),
        (4, "it is 20,000 charact"),
    ]


def test_text_within_the_limits_is_returned_as_it_is() -> None:
    text = read_fixture("scheduler-small.prom")
    screened = screen_lines(text)
    assert screened.text is text and screened.over_limit == ()


def test_nothing_left_within_the_limits_is_refused_with_the_lines_named() -> None:
    text = "\n".join(
        line if line.startswith("#") or not line else line + extra_labels(0) + " " + "9" * 20_000
        for line in read_fixture("scheduler-small.prom").split("\n")
    )
    with pytest.raises(InputError) as refused:
        summarize_text(text, SOURCE)
    message = refused.value.message
    assert message.startswith("No usable HAMi sample in that text. 64 line(s) over the size ")
    assert "line 3 (`hami_build_info{build_date=" in message
    assert message.endswith(
        "; and 61 more. No exporter writes such lines; send the /metrics output unchanged."
    )


def test_a_four_megabyte_label_value_from_a_trusted_source_still_renders() -> None:
    """Tables cut a huge cell at the line width without walking its length."""
    table = Table("t", ("a", "b", "c"), (("x" * 4_000_000, "y" * 12, "z" * 4_000_000),))
    lines = fixed_width(table, 100)
    assert max(map(len, lines)) <= 100 and "yyyyyyyyyyyy" in lines[1]
    text = render(summarize_text(read_fixture("scheduler-small.prom"), SOURCE), "text")
    assert "HAMi GPU allocation summary" in text


def reference_take(widths: list[int], columns: list[int], over: int) -> list[int]:
    """The one-character-at-a-time algorithm the view's fitting must agree with."""
    widths = list(widths)
    while over > 0:
        widest = max(columns, key=lambda i: widths[i], default=None)
        if widest is None or widths[widest] <= NAME_MIN_WIDTH:
            break
        widths[widest] -= 1
        over -= 1
    return widths


@given(
    st.lists(st.integers(0, 400), min_size=2, max_size=7),
    st.integers(4, 140),
    st.data(),
)
def test_taking_from_the_widest_agrees_with_the_one_at_a_time_algorithm(
    widths: list[int], width: int, data: st.DataObject
) -> None:
    columns = data.draw(st.lists(st.sampled_from(range(len(widths))), unique=True))
    # As when laying out a line: at least how far the columns together run past it.
    over = max(sum(widths) - width, 0) + data.draw(st.integers(0, 2000))
    fast = list(widths)
    take_from_widest(fast, columns, over, width)
    assert fast == reference_take(widths, columns, over)


@given(st.lists(st.sampled_from([0, 1, 999, 1000, 1001, 2500]), max_size=8), st.booleans())
def test_long_lines_are_found_by_jumping_exactly_as_by_splitting(
    lengths: list[int], final_newline: bool
) -> None:
    text = "\n".join("a" * length for length in lengths) + ("\n" if final_newline else "")
    starts, position = [], 0
    for line in text.split("\n"):
        if len(line) > _INSPECT_CHARS:
            starts.append(position)
        position += len(line) + 1
    assert _long_line_starts(text) == starts


def test_a_monitor_text_line_is_named_with_its_text() -> None:
    monitor = read_fixture("vgpumonitor-small.prom")
    long_line = "HostCoreUtilization " + "1" * MAX_LINE_CHARS
    summary = summarize_text(
        read_fixture("scheduler-small.prom"),
        SOURCE,
        monitor_texts=[monitor, monitor + long_line + "\n"],
    )
    line_no = monitor.count("\n") + 1
    assert any(
        f"line {line_no} of vGPU monitor text 2 (`HostCoreUtilization 111" in note
        for note in summary.headline
    )


def test_other_metrics_with_a_long_line_are_named_and_the_line_too() -> None:
    dcgm = (
        "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"
        'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-1",Hostname="n1"} 42\n'
        'DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-2",Hostname="' + "n" * 2_000 + '"} 42\n'
    )
    with pytest.raises(InputError) as refused:
        summarize_text(dcgm, SOURCE)
    message = refused.value.message
    assert message.startswith("No HAMi scheduler or vGPU monitor metrics in that text.")
    assert "DCGM" in message
    assert message.endswith(
        "Input problems: 1 line(s) over the size limits were left out: line 3 "
        '(`DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-2",Hostname="nnnnnnn…`): it has a label '
        "value of 2,000 characters, over the limit of 1,024. No exporter writes such lines; "
        "send the /metrics output unchanged."
    )
