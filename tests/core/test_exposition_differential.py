"""``parse_exposition`` against prometheus_client's parser, on fixtures and generated text.

The contract: on every text ``text_string_to_metric_families`` accepts, the same samples
(name, labels in order, value, timestamp) in the same order; and the strict mode refuses
exactly the texts prometheus_client refuses.
"""

from __future__ import annotations

import math
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families

from core.exposition import ExpositionError, parse_exposition

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

Flat = list[tuple[str, list[tuple[str, str]], Any, Any]]


class _Timeout(Exception):
    pass


@contextmanager
def _time_limit(seconds: int) -> Iterator[None]:
    """prometheus_client could in theory loop on odd label text; never hang the suite."""

    def expire(signum: int, frame: object) -> None:
        raise _Timeout

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _number(value: Any) -> Any:
    """Values compare as floats (prometheus_client returns ints for integer literals); NaN==NaN."""
    if value is None:
        return None
    try:
        number = float(value)
    except OverflowError:
        number = math.inf if value > 0 else -math.inf
    return "NaN" if math.isnan(number) else number


def reference(text: str) -> Flat | None:
    """prometheus_client's samples flattened over families, or None when it refuses the text."""
    try:
        with _time_limit(5):
            families = list(text_string_to_metric_families(text))
    except _Timeout:
        pytest.fail(f"prometheus_client did not finish on {text!r}")
    except Exception:
        return None
    return [
        (s.name, list(s.labels.items()), _number(s.value), _number(s.timestamp))
        for family in families
        for s in family.samples
    ]


def ours(text: str) -> Flat:
    exposition = parse_exposition(text)
    return [
        (s.name, list(s.labels.items()), _number(s.value), _number(s.timestamp))
        for s in exposition.samples
    ]


def assert_same_as_reference(text: str) -> bool:
    """Check one text; returns whether prometheus_client accepted it."""
    expected = reference(text)
    if expected is None:
        with pytest.raises(ExpositionError):
            parse_exposition(text, strict=True)
        return False
    strict = parse_exposition(text, strict=True)
    assert not strict.rejected
    assert ours(text) == expected
    assert parse_exposition(text).rejected == []
    return True


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.prom")), ids=lambda p: p.name)
def test_every_fixture_gives_the_reference_samples(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    expected = reference(text)
    assert expected, "the fixture must parse with prometheus_client"
    assert ours(text) == expected
    exposition = parse_exposition(text, strict=True)
    assert exposition.rejected == []
    assert not exposition.truncated_last_line


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.prom")), ids=lambda p: p.name)
def test_fixture_variants_crlf_blank_lines_and_trailing_blanks(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    assert_same_as_reference("\r\n".join(lines))
    assert_same_as_reference("\n\n".join(lines))
    assert_same_as_reference("\n".join(line + " \t" for line in lines))
    assert_same_as_reference("\n".join("  " + line for line in lines))
    assert_same_as_reference(text.rstrip("\n"))


# --- generated expositions ----------------------------------------------------------------

_NAME_START = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_:"
_NAME_REST = _NAME_START + "0123456789"

metric_names = st.one_of(
    st.sampled_from(
        [
            "hami_gpu_core_allocated_ratio",
            "requests_total",
            "latency",
            "latency_bucket",
            "latency_sum",
            "latency_count",
            "x",
            "_",
            ":a",
        ]
    ),
    st.builds(
        lambda first, rest: first + rest,
        st.sampled_from(_NAME_START),
        st.text(_NAME_REST, max_size=8),
    ),
)
label_names = st.one_of(
    st.sampled_from(["node", "device_uuid", "zone", "le", "a", "b", "__name__", "__x", "a:b"]),
    st.builds(
        lambda first, rest: first + rest,
        st.sampled_from("abcxyzABC_"),
        st.text("abc_019", max_size=5),
    ),
)
# Characters that matter to the grammar, plus some that do not.
_VALUE_CHARS = st.sampled_from(
    [*'ab0 ,={}#"\\', "\n", "\t", "é", "”", "\u00a0", "\r", "}", "\\n", '\\"', "\\\\", "\\t"]
)


def _escape(raw: str) -> str:
    return raw.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


label_values = st.one_of(
    st.lists(_VALUE_CHARS, max_size=6).map(lambda parts: _escape("".join(parts))),
    # Raw text: may hold unescaped quotes or backslashes (usually refused, sometimes not).
    st.lists(_VALUE_CHARS, max_size=4).map(lambda parts: "".join(parts).replace("\n", "")),
    st.sampled_from(["", "vGPU", "gpu-node-1", "GPU-5f3c1a2e", "NVIDIA A100-PCIE-40GB"]),
)
numbers = st.one_of(
    st.integers(-(10**20), 10**20).map(str),
    st.floats(allow_nan=False).map(repr),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda f: f"{f:g}"),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda f: f"{f:e}"),
    st.sampled_from(
        [
            "NaN",
            "nan",
            "+Inf",
            "-Inf",
            "inf",
            "Infinity",
            "-0",
            "+5",
            ".5",
            "5.",
            "1E3",
            "1.9327352832e+10",
            "1e-07",
            "0x10",
            "1_000",
            "abc",
            "",
            "--1",
            "1e",
            "9" * 400,
        ]
    ),
)
timestamps = st.one_of(
    st.none(),
    st.integers(-(10**15), 10**16).map(str),
    st.sampled_from(["1700000000000", "1.5", "-1", "abc", "99999999999999999999999"]),
)
blanks = st.sampled_from(["", " ", "\t", "  ", " \t"])


@st.composite
def label_sets(draw: st.DrawFn) -> str:
    pairs = draw(st.lists(st.tuples(label_names, label_values), max_size=4))
    around = draw(st.sampled_from(["", " "]))
    parts = [
        f'{around}{name}{around}={around}"{value}"{around}' if around else f'{name}="{value}"'
        for name, value in pairs
    ]
    trailing = draw(st.sampled_from(["", ",", "", ""]))
    return "{" + ",".join(parts) + trailing + "}"


@st.composite
def sample_lines(draw: st.DrawFn) -> str:
    name = draw(metric_names)
    labels = draw(st.one_of(st.just(""), st.just("{}"), label_sets()))
    separator = draw(st.sampled_from([" ", " ", " ", "\t", "  ", ""]))
    value = draw(numbers)
    timestamp = draw(timestamps)
    line = f"{name}{labels}{separator}{value}"
    if timestamp is not None:
        line += draw(st.sampled_from([" ", "\t", "  "])) + timestamp
    return draw(blanks) + line + draw(blanks)


@st.composite
def comment_lines(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["HELP", "TYPE", "TYPE", "other", "bare"]))
    name = draw(metric_names)
    if kind == "HELP":
        doc = draw(st.text(st.sampled_from('ab \\n"é{}'), max_size=10))
        return f"# HELP {name} {doc}".rstrip() if doc else f"# HELP {name}"
    if kind == "TYPE":
        metric_type = draw(
            st.sampled_from(
                ["gauge", "counter", "histogram", "summary", "untyped", "unknown", "info", "bogus"]
            )
        )
        return f"# TYPE {name} {metric_type}"
    if kind == "other":
        return "# " + draw(st.text(st.sampled_from('ab HELPTYPE{}"'), max_size=12))
    return "#"


lines = st.one_of(
    sample_lines(),
    sample_lines(),
    sample_lines(),
    comment_lines(),
    st.just(""),
    st.text(st.sampled_from('ab1 {}="#\t,\\'), max_size=12),
)


@st.composite
def expositions(draw: st.DrawFn) -> str:
    body = draw(st.lists(lines, max_size=12))
    newline = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    end = draw(st.sampled_from(["\n", "", "\r\n"]))
    return newline.join(body) + end


@st.composite
def families(draw: st.DrawFn) -> str:
    """Well-formed families as an exporter writes them (HELP, TYPE, samples of that name)."""
    out = []
    for _ in range(draw(st.integers(1, 4))):
        name = draw(metric_names)
        metric_type = draw(st.sampled_from(["gauge", "counter", "untyped", "histogram"]))
        out.append(f"# HELP {name} Some help.")
        out.append(f"# TYPE {name} {metric_type}")
        suffixes = ["_bucket", "_sum", "_count", ""] if metric_type == "histogram" else [""]
        for _ in range(draw(st.integers(0, 4))):
            suffix = draw(st.sampled_from(suffixes))
            labels = draw(st.one_of(st.just(""), label_sets()))
            value = draw(numbers)
            out.append(f"{name}{suffix}{labels} {value}")
    return "\n".join(out) + "\n"


_SETTINGS = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
# Each property runs twice: a short run in the fast set for the edit-test loop, and the full
# count among the slow tests, so the whole suite generates more examples than either alone.
_DAMAGE = ['"', "{", "}", ",", "=", " ", "\\", "\n", "#", "_", ""]
QUICK_EXAMPLES = 50
FULL_EXAMPLES = 400


def _generated_expositions(count: int) -> Any:
    @settings(_SETTINGS, max_examples=count)
    @given(expositions())
    @example("inf\n")  # prometheus_client reads metric "in" with value +Inf
    @example('# TYPE foo counter\nfoo 1\nfoo{a="b"} 2\n')  # counters gain _total
    @example("# TYPE foo blah\n# TYPE foo gauge\nfoo 1\n")  # only the last TYPE counts
    @example('# HELP foo x\n# HELP\n{__name__=""} 2\nbar 1\n')  # nameless family: dropped
    @example('foo{a=,b="x"} 1\n')  # an empty label term is skipped
    @example('foo{a="b"}1\n')  # no blank needed after the label set
    @example("foo 1 2 3\n")  # middle tokens ignored, the last one is the timestamp
    @example('foo{a="\\t"} 1\n')  # unknown escapes stay as they are
    @example('{"my.metric",a="b"} 1\n')  # a quoted name inside the braces
    @example('m{a="1",\t="2"} 1\n')  # prometheus_client fails with an IndexError: refused
    def test(text: str) -> None:
        event("accepted" if assert_same_as_reference(text) else "refused")

    return test


def _exporter_shaped_families(count: int) -> Any:
    @settings(_SETTINGS, max_examples=count)
    @given(families())
    def test(text: str) -> None:
        event("accepted" if assert_same_as_reference(text) else "refused")

    return test


def _damaged_expositions(count: int) -> Any:
    @settings(_SETTINGS, max_examples=count)
    @given(families(), st.data())
    def test(text: str, data: st.DataObject) -> None:
        """Random single-character damage must not make the two parsers disagree."""
        position = data.draw(st.integers(0, len(text)))
        damage = data.draw(st.sampled_from(_DAMAGE))
        cut = data.draw(st.booleans())
        damaged = text[:position] + damage + text[position + (1 if cut else 0) :]
        event("accepted" if assert_same_as_reference(damaged) else "refused")

    return test


test_generated_expositions_match_prometheus_client = _generated_expositions(QUICK_EXAMPLES)
test_exporter_shaped_families_match_prometheus_client = _exporter_shaped_families(QUICK_EXAMPLES)
test_damaged_expositions_are_refused_exactly_when_the_reference_refuses = _damaged_expositions(
    QUICK_EXAMPLES
)
test_generated_expositions_match_prometheus_client_in_full = pytest.mark.slow(
    _generated_expositions(FULL_EXAMPLES)
)
test_exporter_shaped_families_match_prometheus_client_in_full = pytest.mark.slow(
    _exporter_shaped_families(FULL_EXAMPLES)
)
test_damaged_expositions_are_refused_exactly_when_the_reference_refuses_in_full = pytest.mark.slow(
    _damaged_expositions(FULL_EXAMPLES)
)
