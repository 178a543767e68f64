"""One line of the text exposition format, read as prometheus_client reads it, with reasons.

The general parser (``core.exposition``) hands every line its fast path does not take to
``parse_sample_line`` or, for comments, to ``split_comment`` and ``unquote``: a line-by-line
port of ``prometheus_client.parser``'s own algorithm, which decides the same samples and names
and words the reason (``LineError``) when a line cannot be read. ``line_problem`` judges one line
on its own, for the paste cleaner.
"""

from __future__ import annotations

import re
from functools import lru_cache

# Legacy metric name grammar (prometheus_client validation.METRIC_NAME_RE); also what the
# reference parser checks unquoted label names against, so ':' is allowed there too.
NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*+"


class LineError(Exception):
    """A line that cannot be read, with the reason; the parser makes it a RejectedLine."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# prometheus_client's label-value unescaping: only these three sequences are replaced.
_ESCAPES = {"\\\\": "\\", "\\n": "\n", '\\"': '"'}
_ESCAPE_RE = re.compile(r'\\[\\n"]')
# prometheus_client matches with '^...$', and '$' also matches before a final newline, which an
# unescaped name ("foo\\n" in a TYPE line) can end with.
_LEGACY_NAME_RE = re.compile(rf"{NAME}\n?\Z")
# string.whitespace: what prometheus_client splits comment lines on.
_ASCII_BLANKS_RE = re.compile(r"[ \t\n\r\x0b\x0c]++")

METRIC_TYPES = frozenset(
    {"counter", "gauge", "summary", "histogram", "gaugehistogram", "unknown", "info", "stateset"}
)


def unescape(text: str) -> str:
    return _ESCAPE_RE.sub(lambda m: _ESCAPES[m.group(0)], text)


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


def split_comment(line: str) -> list[str]:
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


def unquote(text: str, what: str) -> tuple[str, bool]:
    """Strip quotes and unescape; returns the text and whether it was quoted."""
    if not text:
        return text, False
    quoted = False
    text = text.strip()
    if not text:  # prometheus_client fails here with an IndexError: refused all the same
        raise LineError(f"{what} is missing")
    if text[0] == '"':
        if len(text) == 1 or text[-1] != '"':
            raise LineError(f"{what} {text} has no closing double quote")
        text = text[1:-1]
        quoted = True
    if "\\" in text:
        text = unescape(text)
    return text, quoted


def is_legacy_name(name: str) -> bool:
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
            raise LineError("the label set has two commas in a row")
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
            raise LineError("the label set cannot be read")
        rest = remaining
        if not value_term:
            continue  # prometheus_client skips empty terms such as {a=,b="x"}
        name, quoted_name = unquote(name_term, "the label name")
        if not quoted_name and not is_legacy_name(name):
            shown = name or "(empty)"
            raise LineError(
                f"label name {shown!r} is not valid (use letters, digits and '_', "
                "not starting with a digit)"
            )
        if value_term[0] != '"':
            if value_term[0] in "“”„‘’":
                raise LineError(
                    f"the value of label {name!r} is in typographic quotes (“ ”); "
                    'use straight double quotes (")'
                )
            raise LineError(f"the value of label {name!r} is not in double quotes")
        end = 1
        while end < len(value_term):
            end = value_term.find('"', end)
            if end == -1:
                raise LineError(f"the value of label {name!r} has no closing double quote")
            if not _is_escaped(value_term, end):
                break
            end += 1
        if end + 1 != len(value_term):
            raise LineError(
                f"the value of label {name!r} is followed by unexpected text "
                f"({value_term[end + 1 :][:40]!r}); separate labels with commas"
            )
        value, _ = unquote(value_term, f"the value of label {name!r}")
        if name != "__name__":
            if not _is_utf8(name):
                raise LineError(f"label name {name!r} is not valid UTF-8")
            if name.startswith("__"):
                raise LineError(f"label name {name!r} is reserved (names starting with '__')")
        if name in labels:
            raise LineError(f"label {name!r} appears twice")
        labels[name] = value
    return labels


def value_and_timestamp(text: str, after: str) -> tuple[float, float | None]:
    """Value and optional timestamp after the name or label set, as prometheus_client reads them.

    Only the first token (value) and the last (timestamp, ms) count; tokens between are ignored.
    """
    text = text.lstrip()
    separator = " " if " " in text else "\t"
    tokens = [token.strip() for token in text.split(separator) if token.strip()]
    if not tokens:
        raise LineError(f"there is no value after {after}")
    try:
        value = float(_integer_or_float(tokens[0]))
    except ValueError:
        raise LineError(
            f"the value {tokens[0][:40]!r} is not a number (expected e.g. 1, 2.5e+09, NaN, +Inf)"
        ) from None
    except OverflowError:
        value = float("inf") if tokens[0].lstrip()[0] != "-" else float("-inf")
    if len(tokens) == 1:
        return value, None
    try:
        return value, _timestamp_seconds(tokens[-1])
    except (ValueError, OverflowError):
        raise LineError(
            f"the timestamp {tokens[-1][:40]!r} is not a number of milliseconds"
        ) from None


def parse_sample_line(line: str) -> tuple[str, dict[str, str], float, float | None]:
    """One stripped sample line, exactly as prometheus_client's ``_parse_sample`` reads it."""
    label_start = _next_unquoted(line, "{")
    if label_start == -1 or " # " in line[:label_start]:
        name_end = _next_unquoted(line, " \t")
        if name_end == -1:
            # The reference parser takes line[:-1] as the name and the whole line as the value
            # (so a line reading "inf" is metric "in" with value +Inf); keep that, word it well.
            name = line[:-1].strip()
            if not is_legacy_name(name):
                if is_legacy_name(line):
                    raise LineError("the line has no value after the metric name")
                raise LineError("this is not a sample line (expected: name{labels} value)")
            try:
                value, timestamp = value_and_timestamp(line, "the metric name")
            except LineError:
                raise LineError("the line has no value after the metric name") from None
            return name, {}, value, timestamp
        name = line[:name_end].strip()
        if not is_legacy_name(name):
            raise LineError(
                f"{name[:60]!r} is not a valid metric name (use letters, digits, '_' and ':', "
                "not starting with a digit)"
            )
        value, timestamp = value_and_timestamp(line[name_end + 1 :], f"the name {name!r}")
        return name, {}, value, timestamp
    name = line[:label_start].strip()
    label_end = _next_unquoted(line, "}", label_start)
    if label_end == -1:
        if "}" in line[label_start:]:
            raise LineError(
                "a label value has no closing double quote, so the label set never ends"
            )
        raise LineError("the label set is not closed: no '}' after '{'")
    labels = _parse_labels(line[label_start + 1 : label_end])
    if not name:
        if "__name__" not in labels:
            raise LineError("the line has labels but no metric name")
        name = labels.pop("__name__")
    elif "__name__" in labels:
        raise LineError("the metric name is given twice (before '{' and as __name__)")
    value, timestamp = value_and_timestamp(line[label_end + 1 :], "the label set")
    return name, labels, value, timestamp


def metric_name_problem(name: str) -> str | None:
    """prometheus_client's check when it builds a family (``Metric.__init__``)."""
    if not name:
        return "the metric name is empty"
    if not _is_utf8(name):
        return f"the metric name {name!r} is not valid UTF-8"
    return None


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
            parts = split_comment(stripped)
            if len(parts) > 2 and parts[1] in ("TYPE", "HELP"):
                name, quoted = unquote(parts[2], f"the metric name in the {parts[1]} line")
                if not quoted and not is_legacy_name(name):
                    return f"the metric name {name[:60]!r} in the {parts[1]} line is not valid"
            if len(parts) > 1 and parts[1] == "TYPE":
                if len(parts) < 4:
                    return "a TYPE line needs a metric name and a type"
                if parts[3] != "untyped" and parts[3] not in METRIC_TYPES:
                    return f"unknown metric type {parts[3][:40]!r}"
            return None
        name = parse_sample_line(stripped)[0]
    except LineError as error:
        return error.reason
    return metric_name_problem(name)
