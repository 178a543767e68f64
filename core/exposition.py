"""A fast parser for the Prometheus text exposition format (version 0.0.4).

HAMi's scheduler answers ``/metrics`` with this format (client_golang ``expfmt``, Content-Type
``text/plain; version=0.0.4``). A 1,000-node cluster with 8 GPUs per node yields about 70,000
samples (~15 MB), and the whole summary must take a fraction of the time the reference Python
parser, ``prometheus_client.parser.text_string_to_metric_families``, needs for the text alone.

Compatibility contract: on every input that ``text_string_to_metric_families`` accepts,
``parse_exposition`` returns exactly the samples that parser yields, flattened over its families,
in the same order (name, labels, value, timestamp). That includes its quirks, which are
reproduced on purpose because they decide which samples exist and what they are called:

* a family declared ``# TYPE x counter`` whose name does not end in ``_total`` has ``_total``
  appended to the names of its samples (prometheus_client's OpenMetrics munging);
* ``# TYPE`` / ``# HELP`` lines are recognised by their second whitespace-separated token, so
  ``#foo TYPE x gauge`` is a TYPE line and ``# some comment`` is ignored;
* label values are unescaped for ``\\\\``, ``\\"`` and ``\\n`` only; other backslashes stay;
* an empty label term (``{a=,b="x"}``) is skipped, a trailing comma is allowed;
* after the value, extra tokens are ignored except the last one, which is the timestamp in
  milliseconds (stored in seconds, as prometheus_client does);
* a metric name written before a label set is not checked against the legacy grammar
  (``my metric{} 1`` is metric "my metric"), a name may also be given inside the braces
  (``{"my.metric"}``, ``{__name__="x"}``), and label names starting with ``__`` are refused;
* samples of a family whose HELP/TYPE name is empty are dropped silently.

Deliberate differences, all on values only: prometheus_client returns an ``int`` for integer
literals; here every value is a ``float`` (the same number, since both round correctly; integer
literals beyond the float range become +/-inf instead of a Python int).
prometheus_client validates names with its process-wide setting (UTF-8 names unless the
environment sets ``PROMETHEUS_LEGACY_NAME_VALIDATION``); this parser always follows the default.

On input prometheus_client rejects, the strict mode raises ``ExpositionError`` for the first
bad line, and the lenient mode (the default) keeps going and lists bad lines in ``rejected``.

Speed: a hot loop takes each line that starts with the current family's name and ``{``, cuts it
at its last ``}`` and looks the label text up in a cache of label sets already parsed. HAMi prints
the same device label block in about five families, so one ``dict`` serves them all (**callers
must treat ``Sample.labels`` as read-only**); a new label text whose label names equal those of
the family's previous one only needs its values split out. Values are converted with
``float()`` once per distinct text. Everything the hot loop does not take goes through a
line-by-line port of prometheus_client's own algorithm (``core.exposition_lines``), which also
words the messages.
"""

from __future__ import annotations

import re
from contextlib import suppress
from dataclasses import dataclass

from core.errors import InputError, shorten_line
from core.exposition_lines import (
    METRIC_TYPES,
    NAME,
    LineError,
    is_legacy_name,
    metric_name_problem,
    parse_sample_line,
    split_comment,
    unescape,
    unquote,
    value_and_timestamp,
)

__all__ = [
    "Exposition",
    "ExpositionError",
    "RejectedLine",
    "Sample",
    "parse_exposition",
]


@dataclass(frozen=True, slots=True)
class Sample:
    """One sample. ``labels`` may be shared with other samples: never mutate it."""

    name: str
    labels: dict[str, str]
    value: float
    timestamp: float | None  # seconds since the epoch (the text carries milliseconds)


@dataclass(frozen=True, slots=True)
class RejectedLine:
    line_no: int  # 1-based
    text: str  # the line without surrounding whitespace
    reason: str


@dataclass(frozen=True, slots=True)
class Exposition:
    samples: list[Sample]
    types: dict[str, str]  # metric name of a ``# TYPE`` line -> its type
    rejected: list[RejectedLine]
    # The text does not end with a newline and its last line could not be parsed: it was
    # most likely cut off (a paste or a download that stopped mid-line).
    truncated_last_line: bool


class ExpositionError(InputError):
    """A line of metrics text that cannot be parsed, with where it is and what is wrong."""

    def __init__(self, line_no: int, text: str, reason: str) -> None:
        self.line_no = line_no
        self.text = text
        self.reason = reason
        super().__init__(
            f"Line {line_no} of the metrics text is not valid Prometheus text format: {reason}. "
            f"The line reads: `{shorten_line(text)}`. Fix or remove that line, or paste the "
            "/metrics output unchanged."
        )


# --- the fast path ------------------------------------------------------------------------

_NAME = NAME
# A double-quoted label value: any character but '"' and '\', or a backslash pair. This agrees
# with prometheus_client, which ends a value at the first quote after an even number of '\'.
_QUOTED = r'"[^"\\]*+(?:\\.[^"\\]*+)*+"'
_PAIR = rf"{_NAME}={_QUOTED}"
# The inside of a well-formed label set: name="value" pairs joined by commas, optionally one
# trailing comma, or nothing. No blanks, no unquoted braces.
_BLOCK_RE = re.compile(rf"(?:{_PAIR}(?:,{_PAIR})*+,?+)?+")
_NAME_RE = re.compile(_NAME)
_NAME_PART_RE = re.compile(rf",({_NAME})=")
# The lookbehind keeps a search from starting again inside a name it has already read.
_PAIR_PARTS = re.compile(rf'(?<![a-zA-Z0-9_:])({_NAME})="([^"\\]*+(?:\\.[^"\\]*+)*+)"')
_TYPE_SUFFIXES: dict[str, tuple[str, ...]] = {
    "summary": ("_count", "_sum", ""),
    "histogram": ("_count", "_sum", "_bucket"),
}
_NO_LABELS: dict[str, str] = {}


class _LabelSets:
    """Parsed label sets by their text between ``{`` and ``}``, each parsed once.

    ``parse`` returns None for anything but the well-formed grammar, for duplicate names and for
    names starting with ``__`` (reserved, or ``__name__``, which must not appear when the name
    precedes the braces): the slow path judges and words those.
    """

    def __init__(self) -> None:
        self.by_text: dict[str, dict[str, str]] = {}
        # ',name=' -> 'name' for every label name already checked.
        self.name_of_part: dict[str, str] = {}
        # The name parts of the last plain label set parsed, and its names: the label sets of
        # one family share them, so the hot loop only compares lists to trust a new label set.
        self.layout: list[str] = []
        self.layout_names: list[str] = []

    def parse(self, block: str) -> dict[str, str] | None:
        if "\\" in block:
            labels = self._parse_escaped(block)
            if labels is not None:
                self.by_text[block] = labels
            return labels
        # Without backslashes every '"' delimits a value: ',a="x",b="y"' splits into
        # [',a=', 'x', ',b=', 'y', ''], names at even places, then '' or ',' at the end.
        parts = ("," + block).split('"')
        count = len(parts)
        if not count % 2 or (parts[-1] != "" and parts[-1] != ","):
            return None
        name_parts = parts[0:-1:2]
        if not self._learn_names(name_parts):
            return None
        names = [self.name_of_part[part] for part in name_parts]
        if len(set(names)) != len(names):
            return None  # a duplicate name
        labels = dict(zip(names, parts[1::2], strict=True))
        self.by_text[block] = labels
        self.layout = parts[0::2]
        self.layout_names = names
        return labels

    def _learn_names(self, name_parts: list[str]) -> bool:
        """Check new ',name=' parts against the grammar."""
        for part in name_parts:
            if part not in self.name_of_part:
                match = _NAME_PART_RE.fullmatch(part)
                if match is None or match.group(1).startswith("__"):
                    return False
                self.name_of_part[part] = match.group(1)
        return True

    @staticmethod
    def _parse_escaped(block: str) -> dict[str, str] | None:
        if _BLOCK_RE.fullmatch(block) is None:
            return None
        pairs = _PAIR_PARTS.findall(block)
        labels = {name: (unescape(value) if "\\" in value else value) for name, value in pairs}
        if len(labels) != len(pairs) or any(name.startswith("__") for name in labels):
            return None
        return labels


# --- the parser -------------------------------------------------------------------------------


class _Parser:
    """prometheus_client's family state machine, kept to decide names and dropped samples.

    The samples of the current family are always ``samples[family_start:]``.
    """

    def __init__(self, lines: list[str], strict: bool) -> None:
        self.lines = lines
        self.strict = strict
        self.samples: list[Sample] = []
        self.types: dict[str, str] = {}
        self.rejected: list[RejectedLine] = []
        self.family_name = ""
        self.family_line = 0
        self.family_type = "untyped"
        self.family_type_line = 0
        self.family_start = 0
        self.allowed: tuple[str, ...] = ()
        self.hot_name = ""
        self.hot_prefix = "\n"
        self.label_sets = _LabelSets()

    def reject(self, line_no: int, reason: str) -> None:
        text = self.lines[line_no - 1].strip()
        if self.strict:
            raise ExpositionError(line_no, text, reason)
        self.rejected.append(RejectedLine(line_no, text, reason))

    def close_family(self) -> None:
        samples = self.samples
        start = self.family_start
        name = self.family_name
        if name == "":
            # prometheus_client never builds a family without a name: its samples vanish.
            del samples[start:]
            return
        family_type = self.family_type
        if family_type == "counter":
            if name.endswith("_total"):
                name = name[:-6]
            else:
                samples[start:] = [
                    Sample(s.name + "_total", s.labels, s.value, s.timestamp)
                    for s in samples[start:]
                ]
        problem = metric_name_problem(name)
        if problem is not None:
            self.reject(self.family_line, problem)
        elif family_type != "untyped" and family_type not in METRIC_TYPES:
            self.reject(
                self.family_type_line,
                f"unknown metric type {family_type[:40]!r} (expected one of counter, gauge, "
                "histogram, summary, untyped)",
            )

    def start_family(self, name: str, line_no: int) -> None:
        self.close_family()
        self.family_name = name
        self.family_line = line_no
        self.family_start = len(self.samples)

    def add_sample(self, line_no: int, sample: Sample) -> None:
        if sample.name in self.allowed:
            self.samples.append(sample)
            return
        problem = metric_name_problem(sample.name)
        if problem is not None:
            self.reject(line_no, problem)
            return
        # Not part of the current family: prometheus_client ends that family and yields this
        # sample as an untyped family of its own.
        self.close_family()
        self.samples.append(sample)
        self.family_name = ""
        self.family_type = "untyped"
        self.set_allowed(())
        self.family_start = len(self.samples)

    def comment(self, line_no: int, line: str) -> None:
        parts = split_comment(line)
        if len(parts) < 2:
            return
        keyword = parts[1]
        if keyword != "TYPE" and keyword != "HELP":
            return  # an ordinary comment (any '# a b', or '# x' with one token)
        name = ""
        if len(parts) > 2:
            name, quoted = unquote(parts[2], f"the metric name in the {keyword} line")
            if not quoted and not is_legacy_name(name):
                raise LineError(f"the metric name {name[:60]!r} in the {keyword} line is not valid")
        if keyword == "HELP":
            if name != self.family_name:
                self.start_family(name, line_no)
                self.family_type = "untyped"
                self.set_allowed((name,))
            return
        if len(parts) < 4:
            raise LineError("a TYPE line needs a metric name and a type")
        if name != self.family_name:
            self.start_family(name, line_no)
        family_type = parts[3]
        self.family_type = family_type
        self.family_type_line = line_no
        self.set_allowed(tuple(name + suffix for suffix in _TYPE_SUFFIXES.get(family_type, ("",))))
        if family_type in METRIC_TYPES or family_type == "untyped":
            self.types[name] = family_type

    def slow_line(self, line_no: int, raw: str) -> None:
        line = raw.strip()
        try:
            if line.startswith("#"):
                self.comment(line_no, line)
            elif line:
                self.add_sample(line_no, Sample(*parse_sample_line(line)))
        except LineError as error:
            self.reject(line_no, error.reason)

    def set_allowed(self, names: tuple[str, ...]) -> None:
        """The sample names that belong to the current family (prometheus_client's rule)."""
        self.allowed = names
        # The hot loop takes lines starting with '<name>{' for the family's single plain name
        # (a gauge, counter or untyped family; histogram and summary lines go the other way).
        if len(names) == 1 and _NAME_RE.fullmatch(names[0]):
            self.hot_name = names[0]
            self.hot_prefix = names[0] + "{"
        else:
            self.hot_name = ""
            self.hot_prefix = "\n"  # no line starts with it: lines are split on newlines

    def run(self) -> None:
        """Read every line; the usual sample line costs a few string operations.

        The hot loop takes a line that starts with the current family's name and '{', cuts it
        at its last '}', looks the label text up in a cache of already validated label sets,
        and converts the rest with ``float()``. prometheus_client reads such a line the same way
        whenever the label text is well formed (its first unquoted '}' is then the last '}'),
        and ``float()`` accepts the rest exactly when prometheus_client would read it as a lone
        value (blanks around it included), except for '_', which is checked first. Other lines
        go to ``other_line``, and anything unusual from there to ``slow_line``.
        """
        label_sets = self.label_sets
        label_cache = label_sets.by_text
        layout = label_sets.layout
        layout_names = label_sets.layout_names
        value_cache: dict[str, float] = {}
        append = self.samples.append
        name = self.hot_name
        prefix = self.hot_prefix
        start = len(prefix)
        for line_no, raw in enumerate(self.lines, 1):
            if raw.startswith(prefix):
                close = raw.rfind("}")
                if close >= start:
                    block = raw[start:close]
                    labels = label_cache.get(block)
                    if labels is None:
                        # First sight of this label text. Within a family the label names
                        # repeat, so when the names (and the final '' or ',') equal those of
                        # the last label set parse() vouched for, only the values are new.
                        # An odd count: every '"' opens or closes a value (a stray one
                        # would add a part and still show the same names).
                        parts = ("," + block).split('"')
                        if len(parts) % 2 and parts[0::2] == layout and "\\" not in block:
                            labels = dict(zip(layout_names, parts[1::2], strict=True))
                            label_cache[block] = labels
                        else:
                            labels = label_sets.parse(block)
                            layout = label_sets.layout
                            layout_names = label_sets.layout_names
                    if labels is not None:
                        # Values repeat (0, 100, whole-GPU memory sizes): each text once.
                        rest = raw[close + 1 :]
                        value = value_cache.get(rest)
                        if value is None and "_" not in rest:
                            with suppress(ValueError):  # not a plain value: other_line says why
                                value = value_cache[rest] = float(rest)
                        if value is not None:
                            append(Sample(name, labels, value, None))
                            continue
            self.other_line(line_no, raw)
            name = self.hot_name
            prefix = self.hot_prefix
            start = len(prefix)
        self.close_family()

    def other_line(self, line_no: int, raw: str) -> None:
        """A line the hot loop did not take: still fast when it is a well-formed sample."""
        brace = raw.find("{")
        labels: dict[str, str] | None = None
        if brace > 0:
            close = raw.rfind("}")
            if close > brace:
                labels = self.label_sets.parse(raw[brace + 1 : close])
                name = raw[:brace]
                rest = raw[close + 1 :]
        elif brace < 0:
            space = raw.find(" ")
            if space > 0:
                labels = _NO_LABELS
                name = raw[:space]
                rest = raw[space + 1 :]
        if labels is not None and _NAME_RE.fullmatch(name) and "_" not in rest:
            try:
                value, timestamp = value_and_timestamp(rest, "the label set")
            except LineError:
                pass  # the slow path words the message
            else:
                self.add_sample(line_no, Sample(name, labels, value, timestamp))
                return
        self.slow_line(line_no, raw)


def parse_exposition(text: str, *, strict: bool = False) -> Exposition:
    """Parse Prometheus text format 0.0.4 into samples, in the order of the text.

    ``strict``: raise ``ExpositionError`` at the first line prometheus_client would refuse.
    Otherwise such lines are listed in ``Exposition.rejected`` (sorted by line) and skipped.
    Lines are split on ``\\n`` only, like prometheus_client; blanks around a line are ignored.
    The returned label dicts are shared between samples and must not be modified.
    """
    lines = text.split("\n")
    parser = _Parser(lines, strict)
    try:
        parser.run()
    except ExpositionError as error:
        if error.line_no == len(lines) and not text.endswith("\n"):
            raise ExpositionError(
                error.line_no,
                error.text,
                error.reason + " (this is the last line and the text ends without a newline, "
                "so it looks cut off)",
            ) from None
        raise
    rejected = sorted(parser.rejected, key=lambda r: r.line_no)
    truncated = bool(rejected) and rejected[-1].line_no == len(lines) and lines[-1].strip() != ""
    return Exposition(parser.samples, parser.types, rejected, truncated)
