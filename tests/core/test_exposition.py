"""The exposition parser's own behaviour: results, messages for bad lines, and its speed."""

from __future__ import annotations

import math

import pytest
from prometheus_client.parser import text_string_to_metric_families

from core.errors import InputError
from core.exposition import (
    ExpositionError,
    RejectedLine,
    Sample,
    parse_exposition,
)
from core.exposition_lines import line_problem
from tests.conftest import read_fixture


def only_rejection(text: str) -> RejectedLine:
    exposition = parse_exposition(text)
    assert len(exposition.rejected) == 1, exposition.rejected
    return exposition.rejected[0]


# --- results --------------------------------------------------------------------------------


def test_samples_carry_name_labels_float_value_and_timestamp_in_seconds() -> None:
    text = (
        "# HELP hami_gpu_shared_count Number of containers sharing this GPU\n"
        "# TYPE hami_gpu_shared_count gauge\n"
        'hami_gpu_shared_count{device_uuid="GPU-1",node="gpu-node-1"} 2\n'
        "hami_gpu_shared_count 3 1700000000123\n"
    )
    exposition = parse_exposition(text)
    assert exposition.samples == [
        Sample("hami_gpu_shared_count", {"device_uuid": "GPU-1", "node": "gpu-node-1"}, 2.0, None),
        Sample("hami_gpu_shared_count", {}, 3.0, 1700000000.123),
    ]
    assert all(isinstance(s.value, float) for s in exposition.samples)
    assert exposition.types == {"hami_gpu_shared_count": "gauge"}
    assert exposition.rejected == []
    assert exposition.truncated_last_line is False


def test_special_values_and_exponents() -> None:
    text = "a NaN\nb +Inf\nc -Inf\nd 1.9327352832e+10\ne 1e-07\nf -0\n"
    values = [s.value for s in parse_exposition(text).samples]
    assert math.isnan(values[0])
    assert values[1:] == [math.inf, -math.inf, 19327352832.0, 1e-07, 0.0]


def test_label_escapes_are_decoded_like_prometheus_client() -> None:
    text = 'm{path="C:\\\\dir",quote="say \\"hi\\"",lines="a\\nb",other="\\t"} 1\n'
    (sample,) = parse_exposition(text).samples
    assert sample.labels == {
        "path": "C:\\dir",
        "quote": 'say "hi"',
        "lines": "a\nb",
        "other": "\\t",  # not an escape the format knows: kept as written
    }


def test_repeated_label_text_shares_one_dict() -> None:
    """HAMi prints a device's label block in several families: parsed once, shared."""
    text = read_fixture("scheduler-small.prom")
    samples = parse_exposition(text).samples
    by_uuid: dict[tuple[tuple[str, str], ...], set[int]] = {}
    for sample in samples:
        if sample.name in ("hami_gpu_core_limit_ratio", "hami_gpu_memory_limit_bytes"):
            by_uuid.setdefault(tuple(sample.labels.items()), set()).add(id(sample.labels))
    assert len(by_uuid) == 6
    assert all(len(ids) == 1 for ids in by_uuid.values())


def test_counter_without_total_suffix_gets_it_as_in_prometheus_client() -> None:
    exposition = parse_exposition("# TYPE requests counter\nrequests 5\n")
    assert [s.name for s in exposition.samples] == ["requests_total"]
    assert exposition.types == {"requests": "counter"}


def test_crlf_blank_lines_and_trailing_blanks_are_ignored() -> None:
    text = '# TYPE a gauge\r\n\r\na{x="1"} 1 \t\r\n  a 2\r\n'
    exposition = parse_exposition(text, strict=True)
    assert [(s.name, s.value) for s in exposition.samples] == [("a", 1.0), ("a", 2.0)]


def test_all_fixtures_parse_strictly() -> None:
    for name in ("scheduler-small.prom", "scheduler-small-legacy.prom", "vgpumonitor-small.prom"):
        exposition = parse_exposition(read_fixture(name), strict=True)
        assert exposition.samples and not exposition.rejected


# --- bad lines: what the person reading the message is told -------------------------------

BAD_LINES = [
    ('foo{a="b"}', "there is no value after the label set"),
    ("foo 12abc", "the value '12abc' is not a number (expected e.g. 1, 2.5e+09, NaN, +Inf)"),
    ("foo 1_000", "the value '1_000' is not a number"),
    ('foo 1 "x"', "the timestamp '\"x\"' is not a number of milliseconds"),
    ("foo{a=b} 1", "the value of label 'a' is not in double quotes"),
    ("foo{a=“b”} 1", "the value of label 'a' is in typographic quotes (“ ”); use straight"),
    ('foo{a="b",c="d', "the label set is not closed: no '}' after '{'"),
    ('foo{a="1",a="2"} 1', "label 'a' appears twice"),
    ('foo{__secret="1"} 1', "label name '__secret' is reserved (names starting with '__')"),
    ('foo{a-b="1"} 1', "label name 'a-b' is not valid (use letters, digits and '_'"),
    ('foo{a="1" b="2"} 1', "the value of label 'a' is followed by unexpected text (' b=\"2\"')"),
    ('foo{a="1",,b="2"} 1', "the label set has two commas in a row"),
    ('foo{a="1} 1', "a label value has no closing double quote, so the label set never ends"),
    ('foo{a="1\\"} 1', "a label value has no closing double quote"),
    ("1foo 1", "'1foo' is not a valid metric name (use letters, digits, '_' and ':'"),
    ('foo{__name__="bar"} 1', "the metric name is given twice (before '{' and as __name__)"),
    ('{a="b"} 1', "the line has labels but no metric name"),
    ("foo", "the line has no value after the metric name"),
    ("12", "this is not a sample line (expected: name{labels} value)"),
    ("# TYPE foo", "a TYPE line needs a metric name and a type"),
    ("# TYPE 1foo gauge", "the metric name '1foo' in the TYPE line is not valid"),
    ('# HELP "foo bar', 'the metric name in the HELP line "foo bar has no closing double quote'),
]


@pytest.mark.parametrize(("line", "reason"), BAD_LINES, ids=[line for line, _ in BAD_LINES])
def test_bad_line_is_rejected_with_a_specific_reason(line: str, reason: str) -> None:
    text = f"# TYPE ok gauge\nok 1\n{line}\nok 2\n"
    rejected = only_rejection(text)
    assert rejected.line_no == 3
    assert rejected.text == line
    assert rejected.reason.startswith(reason), rejected.reason
    # The good lines around it are kept.
    assert [s.value for s in parse_exposition(text).samples] == [1.0, 2.0]
    # prometheus_client refuses the same text.
    with pytest.raises(Exception):  # noqa: B017 - prometheus_client raises plain ValueErrors
        list(text_string_to_metric_families(text))


def test_unknown_type_is_blamed_on_the_type_line() -> None:
    rejected = only_rejection("# HELP foo x\n# TYPE foo blah\nfoo 1\n")
    assert rejected == RejectedLine(
        2,
        "# TYPE foo blah",
        "unknown metric type 'blah' (expected one of counter, gauge, histogram, summary, untyped)",
    )


def test_strict_mode_raises_a_message_with_line_number_line_and_reason() -> None:
    text = "ok 1\nok 2\nfoo{a=b} 1\nok 3\n"
    with pytest.raises(ExpositionError) as raised:
        parse_exposition(text, strict=True)
    error = raised.value
    assert isinstance(error, InputError)
    assert (error.line_no, error.text) == (3, "foo{a=b} 1")
    assert error.message == (
        "Line 3 of the metrics text is not valid Prometheus text format: the value of label "
        "'a' is not in double quotes. The line reads: `foo{a=b} 1`. Fix or remove that line, "
        "or paste the /metrics output unchanged."
    )


def test_strict_message_cuts_long_lines_to_120_characters() -> None:
    line = "foo{" + ",".join(f'label{i}="{"v" * 10}"' for i in range(20)) + "} x"
    with pytest.raises(ExpositionError) as raised:
        parse_exposition(line + "\n", strict=True)
    shown = raised.value.message.split("The line reads: `")[1].split("`")[0]
    assert len(shown) == 120
    assert shown.endswith("…")
    assert line.startswith(shown[:-1])


def test_a_bad_last_line_without_newline_is_reported_as_cut_off() -> None:
    text = 'ok 1\nfoo{device_uuid="GPU-12'
    exposition = parse_exposition(text)
    assert exposition.truncated_last_line is True
    assert [s.name for s in exposition.samples] == ["ok"]
    with pytest.raises(ExpositionError) as raised:
        parse_exposition(text, strict=True)
    assert "this is the last line and the text ends without a newline, so it looks cut off" in (
        raised.value.message
    )


def test_a_bad_last_line_with_newline_or_a_good_last_line_is_not_cut_off() -> None:
    assert parse_exposition('ok 1\nfoo{device_uuid="GPU-12\n').truncated_last_line is False
    assert parse_exposition("ok 1\nok 2").truncated_last_line is False


def test_rejected_lines_are_listed_in_line_order_and_line_numbers_count_crlf_lines() -> None:
    text = "# TYPE a bogus\r\na 1\r\nb x\r\nc{ 1\r\n"
    exposition = parse_exposition(text)
    assert [(r.line_no, r.text) for r in exposition.rejected] == [
        (1, "# TYPE a bogus"),
        (3, "b x"),
        (4, "c{ 1"),
    ]


def test_line_problem_judges_one_line() -> None:
    assert line_problem('hami_gpu_shared_count{node="n"} 2') is None
    assert line_problem("# HELP anything at all") is None
    assert line_problem("   ") is None
    assert line_problem("# TYPE x gauge") is None
    assert line_problem("# TYPE x nonsense") == "unknown metric type 'nonsense'"
    assert line_problem("here are my metrics") == (
        "the value 'are' is not a number (expected e.g. 1, 2.5e+09, NaN, +Inf)"
    )
    assert line_problem('x{a="1"') == "the label set is not closed: no '}' after '{'"
