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
line-by-line port of prometheus_client's own algorithm, which also words the messages.
"""

from __future__ import annotations

import re
from contextlib import suppress
from dataclasses import dataclass
from functools import lru_cache

from core.errors import InputError, shorten_line

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


class _LineError(Exception):
    """Raised inside the parser with the reason a line is bad; becomes a RejectedLine."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# --- the fast path ------------------------------------------------------------------------

# Legacy metric name grammar (prometheus_client validation.METRIC_NAME_RE); also what the
# reference parser checks unquoted label names against, so ':' is allowed there too.
_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*+"
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
# prometheus_client's label-value unescaping: only these three sequences are replaced.
_ESCAPES = {"\\\\": "\\", "\\n": "\n", '\\"': '"'}
_ESCAPE_RE = re.compile(r'\\[\\n"]')
# prometheus_client matches with '^...$', and '$' also matches before a final newline, which an
# unescaped name ("foo\\n" in a TYPE line) can end with.
_LEGACY_NAME_RE = re.compile(rf"{_NAME}\n?\Z")
# string.whitespace: what prometheus_client splits comment lines on.
_ASCII_BLANKS_RE = re.compile(r"[ \t\n\r\x0b\x0c]++")

_METRIC_TYPES = frozenset(
    {"counter", "gauge", "summary", "histogram", "gaugehistogram", "unknown", "info", "stateset"}
)
_TYPE_SUFFIXES: dict[str, tuple[str, ...]] = {
    "summary": ("_count", "_sum", ""),
    "histogram": ("_count", "_sum", "_bucket"),
}
_NO_LABELS: dict[str, str] = {}


def _unescape(text: str) -> str:
    return _ESCAPE_RE.sub(lambda m: _ESCAPES[m.group(0)], text)


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
        labels = {name: (_unescape(value) if "\\" in value else value) for name, value in pairs}
        if len(labels) != len(pairs) or any(name.startswith("__") for name in labels):
            return None
        return labels


def _integer_or_float(token: str) -> float:
    """prometheus_client's ``_parse_value``: ``int()`` first, then ``float()``; no '_'."""
    if "_" in token:
        raise ValueError(token)
    try:
        return int(token)
    except ValueError:
        return float(token)


def _timestamp_seconds(token: str) -> float:
    # The integer division keeps prometheus_client's rounding for millisecond counts > 2**53.
    return _integer_or_float(token) / 1000


# --- the slow path: prometheus_client's algorithm, with reasons -----------------------------


def _is_escaped(text: str, pos: int) -> bool:
    """True when the character at ``pos`` follows an odd number of backslashes."""
    count = 0
    while pos > count and text[pos - 1 - count] == "\\":
        count += 1
    return count % 2 == 1


@lru_cache(maxsize=16)
def _unquoted_run(chars: str) -> re.Pattern[str]:
    """Text up to the next character of ``chars`` that is outside double quotes.

    prometheus_client lets a quote after an odd number of backslashes neither open nor close a
    value; reading backslashes in pairs from the left decides the same. Possessive throughout,
    so a line is read once, at the regex engine's speed rather than a character per loop.
    """
    stops = re.escape(chars)
    return re.compile(rf'(?:[^"\\{stops}]++|\\[\\"]|\\|"(?:[^"\\]++|\\[\\"]|\\)*+")*+')


def _next_unquoted(text: str, chars: str, start: int = 0) -> int:
    """Position of the next character of ``chars`` outside double quotes, or -1.

    ``chars`` never holds a quote; an unclosed quote hides everything after it.
    """
    run = _unquoted_run(chars).match(text, start)
    end = start if run is None else run.end()  # the run may be empty: it always matches
    return end if end < len(text) and text[end] in chars else -1


def _split_comment(line: str) -> list[str]:
    """Split a comment line into at most 4 tokens on unquoted ASCII whitespace."""
    if '"' not in line:
        return _ASCII_BLANKS_RE.split(line, 3)
    blanks = " \t\n\r\x0b\x0c"
    tokens = [""]
    pos = 0
    while pos < len(line):
        split_at = _next_unquoted(line, blanks, pos)
        if split_at == -1:
            tokens[-1] = line[pos:]
            break
        if split_at == pos:  # a run of blanks
            pos += 1
            continue
        if len(tokens) > 3:
            tokens[-1] = line[pos:]
            break
        tokens[-1] = line[pos:split_at]
        pos = split_at + 1
        tokens.append("")
    return tokens


def _unquote(text: str, what: str) -> tuple[str, bool]:
    """Strip quotes and unescape; returns the text and whether it was quoted."""
    if not text:
        return text, False
    quoted = False
    text = text.strip()
    if not text:  # prometheus_client fails here with an IndexError: refused all the same
        raise _LineError(f"{what} is missing")
    if text[0] == '"':
        if len(text) == 1 or text[-1] != '"':
            raise _LineError(f"{what} {text} has no closing double quote")
        text = text[1:-1]
        quoted = True
    if "\\" in text:
        text = _unescape(text)
    return text, quoted


def _is_legacy_name(name: str) -> bool:
    return _LEGACY_NAME_RE.match(name) is not None


def _is_utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _next_label_term(text: str) -> tuple[str, str, str]:
    """The next ``name=value`` term of a label set: (name, value, rest), as prometheus_client."""
    if text[0] == ",":
        text = text[1:]
        if not text:
            return "", "", ""
        if text[0] == ",":
            raise _LineError("the label set has two commas in a row")
    split_at = _next_unquoted(text, "=,}")
    if split_at >= 0 and text[split_at] == "=":
        label_name = text[:split_at]
        text = text[split_at + 1 :]
        split_at = _next_unquoted(text, ",}")
    else:
        label_name = "__name__"
    if split_at == -1:
        split_at = len(text)
    return label_name, text[:split_at].strip(), text[split_at:].strip()


def _parse_labels(block: str) -> dict[str, str]:
    labels: dict[str, str] = {}
    rest = block.strip()
    while rest:
        name_term, value_term, remaining = _next_label_term(rest)
        if remaining == rest:  # no progress: the reference parser would loop forever
            raise _LineError("the label set cannot be read")
        rest = remaining
        if not value_term:
            continue  # prometheus_client skips empty terms such as {a=,b="x"}
        name, quoted_name = _unquote(name_term, "the label name")
        if not quoted_name and not _is_legacy_name(name):
            shown = name or "(empty)"
            raise _LineError(
                f"label name {shown!r} is not valid (use letters, digits and '_', "
                "not starting with a digit)"
            )
        if value_term[0] != '"':
            if value_term[0] in "“”„‘’":
                raise _LineError(
                    f"the value of label {name!r} is in typographic quotes (“ ”); "
                    'use straight double quotes (")'
                )
            raise _LineError(f"the value of label {name!r} is not in double quotes")
        end = 1
        while end < len(value_term):
            end = value_term.find('"', end)
            if end == -1:
                raise _LineError(f"the value of label {name!r} has no closing double quote")
            if not _is_escaped(value_term, end):
                break
            end += 1
        if end + 1 != len(value_term):
            raise _LineError(
                f"the value of label {name!r} is followed by unexpected text "
                f"({value_term[end + 1 :][:40]!r}); separate labels with commas"
            )
        value, _ = _unquote(value_term, f"the value of label {name!r}")
        if name != "__name__":
            if not _is_utf8(name):
                raise _LineError(f"label name {name!r} is not valid UTF-8")
            if name.startswith("__"):
                raise _LineError(f"label name {name!r} is reserved (names starting with '__')")
        if name in labels:
            raise _LineError(f"label {name!r} appears twice")
        labels[name] = value
    return labels


def _value_and_timestamp(text: str, after: str) -> tuple[float, float | None]:
    """Value and optional timestamp after the name or label set, as prometheus_client reads them.

    Only the first token (value) and the last (timestamp, ms) count; tokens between are ignored.
    """
    text = text.lstrip()
    separator = " " if " " in text else "\t"
    tokens = [token.strip() for token in text.split(separator) if token.strip()]
    if not tokens:
        raise _LineError(f"there is no value after {after}")
    try:
        value = float(_integer_or_float(tokens[0]))
    except ValueError:
        raise _LineError(
            f"the value {tokens[0][:40]!r} is not a number (expected e.g. 1, 2.5e+09, NaN, +Inf)"
        ) from None
    except OverflowError:
        value = float("inf") if tokens[0].lstrip()[0] != "-" else float("-inf")
    if len(tokens) == 1:
        return value, None
    try:
        return value, _timestamp_seconds(tokens[-1])
    except (ValueError, OverflowError):
        raise _LineError(
            f"the timestamp {tokens[-1][:40]!r} is not a number of milliseconds"
        ) from None


def _parse_sample_line(line: str) -> tuple[str, dict[str, str], float, float | None]:
    """One stripped sample line, exactly as prometheus_client's ``_parse_sample`` reads it."""
    label_start = _next_unquoted(line, "{")
    if label_start == -1 or " # " in line[:label_start]:
        name_end = _next_unquoted(line, " \t")
        if name_end == -1:
            # The reference parser takes line[:-1] as the name and the whole line as the value
            # (so a line reading "inf" is metric "in" with value +Inf); keep that, word it well.
            name = line[:-1].strip()
            if not _is_legacy_name(name):
                if _is_legacy_name(line):
                    raise _LineError("the line has no value after the metric name")
                raise _LineError("this is not a sample line (expected: name{labels} value)")
            try:
                value, timestamp = _value_and_timestamp(line, "the metric name")
            except _LineError:
                raise _LineError("the line has no value after the metric name") from None
            return name, {}, value, timestamp
        name = line[:name_end].strip()
        if not _is_legacy_name(name):
            raise _LineError(
                f"{name[:60]!r} is not a valid metric name (use letters, digits, '_' and ':', "
                "not starting with a digit)"
            )
        value, timestamp = _value_and_timestamp(line[name_end + 1 :], f"the name {name!r}")
        return name, {}, value, timestamp
    name = line[:label_start].strip()
    label_end = _next_unquoted(line, "}", label_start)
    if label_end == -1:
        if "}" in line[label_start:]:
            raise _LineError(
                "a label value has no closing double quote, so the label set never ends"
            )
        raise _LineError("the label set is not closed: no '}' after '{'")
    labels = _parse_labels(line[label_start + 1 : label_end])
    if not name:
        if "__name__" not in labels:
            raise _LineError("the line has labels but no metric name")
        name = labels.pop("__name__")
    elif "__name__" in labels:
        raise _LineError("the metric name is given twice (before '{' and as __name__)")
    value, timestamp = _value_and_timestamp(line[label_end + 1 :], "the label set")
    return name, labels, value, timestamp


def _metric_name_problem(name: str) -> str | None:
    """prometheus_client's check when it builds a family (``Metric.__init__``)."""
    if not name:
        return "the metric name is empty"
    if not _is_utf8(name):
        return f"the metric name {name!r} is not valid UTF-8"
    return None


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
        problem = _metric_name_problem(name)
        if problem is not None:
            self.reject(self.family_line, problem)
        elif family_type != "untyped" and family_type not in _METRIC_TYPES:
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
        problem = _metric_name_problem(sample.name)
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
        parts = _split_comment(line)
        if len(parts) < 2:
            return
        keyword = parts[1]
        if keyword != "TYPE" and keyword != "HELP":
            return  # an ordinary comment (any '# a b', or '# x' with one token)
        name = ""
        if len(parts) > 2:
            name, quoted = _unquote(parts[2], f"the metric name in the {keyword} line")
            if not quoted and not _is_legacy_name(name):
                raise _LineError(
                    f"the metric name {name[:60]!r} in the {keyword} line is not valid"
                )
        if keyword == "HELP":
            if name != self.family_name:
                self.start_family(name, line_no)
                self.family_type = "untyped"
                self.set_allowed((name,))
            return
        if len(parts) < 4:
            raise _LineError("a TYPE line needs a metric name and a type")
        if name != self.family_name:
            self.start_family(name, line_no)
        family_type = parts[3]
        self.family_type = family_type
        self.family_type_line = line_no
        self.set_allowed(tuple(name + suffix for suffix in _TYPE_SUFFIXES.get(family_type, ("",))))
        if family_type in _METRIC_TYPES or family_type == "untyped":
            self.types[name] = family_type

    def slow_line(self, line_no: int, raw: str) -> None:
        line = raw.strip()
        try:
            if line.startswith("#"):
                self.comment(line_no, line)
            elif line:
                self.add_sample(line_no, Sample(*_parse_sample_line(line)))
        except _LineError as error:
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
                        parts = ("," + block).split('"')
                        if parts[0::2] == layout and "\\" not in block:
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
                value, timestamp = _value_and_timestamp(rest, "the label set")
            except _LineError:
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


def line_problem(line: str) -> str | None:
    """Why one line on its own is not valid exposition text, or None when it is.

    A sample line, a comment (HELP/TYPE lines with their names checked) or a blank line is
    valid. What depends on other lines (a TYPE's family closing, counter renaming) is not
    judged here. Used to decide which lines of a messy paste are already metrics.
    """
    stripped = line.strip()
    if not stripped:
        return None
    try:
        if stripped.startswith("#"):
            parts = _split_comment(stripped)
            if len(parts) > 2 and parts[1] in ("TYPE", "HELP"):
                name, quoted = _unquote(parts[2], f"the metric name in the {parts[1]} line")
                if not quoted and not _is_legacy_name(name):
                    return f"the metric name {name[:60]!r} in the {parts[1]} line is not valid"
            if len(parts) > 1 and parts[1] == "TYPE":
                if len(parts) < 4:
                    return "a TYPE line needs a metric name and a type"
                if parts[3] != "untyped" and parts[3] not in _METRIC_TYPES:
                    return f"unknown metric type {parts[3][:40]!r}"
            return None
        name = _parse_sample_line(stripped)[0]
    except _LineError as error:
        return error.reason
    return _metric_name_problem(name)
