"""Mutated expositions never crash a summary or leave non-strict JSON.

Starting from real fixtures and simulated clusters, each example sets values to NaN, infinities,
negative or huge numbers, repeats and drops lines, puts markup and control characters into label
values, and cuts the text short. Whatever comes in, ``summarize_text`` either returns a summary
or raises the project's ``InputError``, and every JSON rendering is strict JSON (no bare NaN or
Infinity).

The examples are derandomized and no example database is kept, so CI runs the same cases every
time.
"""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from functools import cache
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.cli.main import main
from bot.conversation.replies import SummaryRef, SummaryReply
from bot.slack.messages import slack_message
from core.api import summarize_text
from core.errors import InputError
from core.model import SourceInfo
from core.simulate import simulate_exposition
from core.views import render
from tests.conftest import read_fixture
from tests.support.properties import quick_and_full

SOURCE = SourceInfo(kind="paste", label="pasted text")
FUZZ = settings(  # also used by tests/chat/test_fuzz_messages.py
    max_examples=60,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

HOSTILE_VALUES = (
    "NaN",
    "+Inf",
    "-Inf",
    "Inf",
    "1e308",
    "-1e308",
    "-30",
    "-0",
    "2.5",
    "1e20",
    "4e-320",
    "0x10",
    "nan",
    "infinity",
)
HOSTILE_LABEL_TEXT = (
    "<!channel>",
    "<@U123>",
    '=HYPERLINK("http://x")',
    "+1",
    "-1",
    "@SUM(A1)",
    "\t=1",
    "\r=1",
    "\\n",
    '\\"',
    "&amp;",
    "*bold*",
    "`code`",
    "\u202e",
    "\u2028",
    "\x7f",
    "\x01",
    "a" * 300,
)


@cache
def seeds() -> tuple[str, ...]:
    return (
        read_fixture("scheduler-small.prom"),
        read_fixture("scheduler-small-legacy.prom"),
        read_fixture("vgpumonitor-small.prom"),
        read_fixture("scheduler-small.prom") + read_fixture("vgpumonitor-small.prom"),
        simulate_exposition(3, 4, seed=5),
        simulate_exposition(2, 2, seed=9, both=True),
        # HAMi after v2.10: counters, hardware health; the Ascend monitor (no node, no zone).
        read_fixture("scheduler-small-outcomes.prom") + read_fixture("vgpumonitor-health.prom"),
        read_fixture("ascend-vnpu-monitor.prom"),
    )


def _is_sample(line: str) -> bool:
    return bool(line) and not line.startswith("#")


def _set_value(lines: list[str], at: int, value: str) -> None:
    line = lines[at]
    if _is_sample(line):
        lines[at] = line.rsplit(" ", 1)[0] + " " + value


def _inject_label(lines: list[str], at: int, text: str) -> None:
    line = lines[at]
    quote = line.find('="')
    if _is_sample(line) and quote != -1:
        lines[at] = line[: quote + 2] + text + line[quote + 2 :]


# Stray punctuation a hand edit or a cut paste leaves in a label set: a quote doubled or
# dropped, a brace or comma too many, inside a label set or at its edges.
PUNCTUATION = ('"', '""', "{", "}", ",", ",,", '",', ',"', '"}', "{}", "=", '="')


def _punctuate(lines: list[str], at: int, text: str, where: float) -> None:
    """Insert ``text`` into the label set of a sample line, at the fraction ``where`` of the
    way from its "{" to just past its "}"; a line without labels is left alone."""
    line = lines[at]
    brace, close = line.find("{"), line.rfind("}")
    if _is_sample(line) and 0 <= brace < close:
        offset = brace + round(where * (close + 1 - brace))
        lines[at] = line[:offset] + text + line[offset:]


mutation = st.one_of(
    st.tuples(st.just("value"), st.integers(0, 10_000), st.sampled_from(HOSTILE_VALUES)),
    st.tuples(st.just("repeat"), st.integers(0, 10_000), st.sampled_from(("", "7", "NaN"))),
    st.tuples(st.just("drop"), st.integers(0, 10_000), st.just("")),
    st.tuples(st.just("label"), st.integers(0, 10_000), st.sampled_from(HOSTILE_LABEL_TEXT)),
)


def mutate(text: str, mutations: list[tuple[str, int, str]], cut: float | None) -> str:
    lines = text.split("\n")
    for kind, position, argument in mutations:
        if not lines:
            break
        at = position % len(lines)
        if kind == "value":
            _set_value(lines, at, argument)
        elif kind == "repeat":
            lines.insert(at, lines[at])
            if argument:
                _set_value(lines, at + 1, argument)
        elif kind == "drop":
            del lines[at]
        else:
            _inject_label(lines, at, argument)
    out = "\n".join(lines)
    return out if cut is None else out[: int(len(out) * cut)]


punctuation = st.tuples(st.integers(0, 10_000), st.sampled_from(PUNCTUATION), st.floats(0.0, 1.0))


@quick_and_full(3_000, st.integers(0, 5), st.lists(punctuation, min_size=1, max_size=4))
def _stray_punctuation_is_read_or_refused(
    seed: int, insertions: list[tuple[int, str, float]]
) -> None:
    lines = seeds()[seed].split("\n")
    for position, text, where in insertions:
        _punctuate(lines, position % len(lines), text, where)
    try:
        summary = summarize_text("\n".join(lines), SOURCE)
    except InputError as error:
        assert error.message.strip()
        return
    assert isinstance(strict_json(render(summary, "json")), dict)


(
    test_stray_quotes_braces_and_commas_in_label_sets_are_read_or_refused,
    test_stray_quotes_braces_and_commas_in_label_sets_are_read_or_refused_full,
) = _stray_punctuation_is_read_or_refused


def test_a_doubled_quote_on_a_later_line_of_a_family_is_refused_with_its_line() -> None:
    # The label set of the line before has the same names: the shortcut for such lines must
    # not take the stray quote for one more value.
    lines = read_fixture("scheduler-small.prom").split("\n")
    at = next(  # the second line of a family
        i
        for i in range(1, len(lines))
        if _is_sample(lines[i - 1]) and lines[i].startswith(lines[i - 1].split("{")[0] + "{")
    )
    assert 'zone="vGPU"}' in lines[at]
    lines[at] = lines[at].replace('zone="vGPU"}', 'zone="vGPU""}')
    summary = summarize_text("\n".join(lines), SOURCE)
    assert f"first at line {at + 1}: a label value has no closing double quote" in " ".join(
        summary.headline
    )


def _refuse_constant(name: str) -> object:
    raise ValueError(f"not strict JSON: bare {name}")


def strict_json(text: str) -> object:
    return json.loads(text, parse_constant=_refuse_constant)


@FUZZ
@given(
    seed=st.integers(0, 5),
    mutations=st.lists(mutation, min_size=1, max_size=8),
    cut=st.none() | st.floats(0.05, 1.0),
)
def test_mutated_expositions_summarise_or_raise_input_error(
    seed: int, mutations: list[tuple[str, int, str]], cut: float | None
) -> None:
    text = mutate(seeds()[seed], mutations, cut)
    try:
        summary = summarize_text(text, SOURCE)
    except InputError as error:
        assert error.message.strip()
        return
    document = strict_json(render(summary, "json"))
    assert isinstance(document, dict)
    # Every value left in the report is one the summary could use; null: not known.
    for key in ("core_allocated", "mem_allocated_mib"):
        assert document["cluster"][key] is None or document["cluster"][key] >= 0
    assert all(gpu["core_allocated"] >= 0 for gpu in document["gpus"])
    for fmt in ("text", "markdown", "csv"):
        assert render(summary, fmt)
    # The Slack message of the same summary is strict JSON too.
    message = slack_message(SummaryReply(summary, SummaryRef(), None))
    assert isinstance(strict_json(json.dumps(message.blocks, allow_nan=False)), list)


@settings(FUZZ, max_examples=4)
@given(
    seed=st.integers(0, 5),
    mutations=st.lists(mutation, min_size=1, max_size=8),
    cut=st.none() | st.floats(0.05, 1.0),
)
def test_the_cli_on_mutated_expositions_exits_0_or_2_with_strict_json(
    seed: int, mutations: list[tuple[str, int, str]], cut: float | None
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "metrics.prom"
        path.write_text(mutate(seeds()[seed], mutations, cut), encoding="utf-8")
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["summarize", str(path), "--format", "json"])
    assert code in (0, 2), err.getvalue()
    assert "internal error" not in err.getvalue() and "Traceback" not in err.getvalue()
    if code == 0:
        assert isinstance(strict_json(out.getvalue()), dict)
    else:
        assert out.getvalue() == "" and err.getvalue().startswith("hami-summary summarize (")
