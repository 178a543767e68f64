"""Size limits on single lines of metrics text, applied before any parser or pattern sees them.

Every pattern that reads user text is linear, but the work done per line is not always: the
general parser re-slices a label set per label, and tables size themselves to their longest
cell. One line with 160,000 labels or a 4 MB label value then costs a minute. No exporter
writes such a line (Kubernetes caps label values at 63 characters and HAMi's series carry a
handful of labels), so a line over a limit is blanked out before parsing (line numbers stay
as they were) and named in the report.

The screen is cheap on ordinary text: it jumps ahead ``_INSPECT_CHARS`` at a time with
``str.rfind`` and only looks inside lines longer than that.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.errors import shorten_line

MAX_LINE_CHARS = 16_384
MAX_LABELS_PER_SERIES = 200
MAX_LABEL_VALUE_CHARS = 1_024
# The shortest label is 'a="",' (5 characters): a line at most this long can break no limit.
_INSPECT_CHARS = min(MAX_LABEL_VALUE_CHARS, 5 * MAX_LABELS_PER_SERIES)
# A double-quoted string with backslash escapes; possessive, so each character is read once.
_QUOTED = re.compile(r'"(?:[^"\\]++|\\.)*+"?+')
_SHOWN_SERIES_CHARS = 60


@dataclass(frozen=True, slots=True)
class OverLimitLine:
    """A line left out because it breaks a size limit."""

    line_no: int  # 1-based
    series: str  # the start of the line, shortened: enough to recognise the series
    reason: str  # which limit, and by how much
    text_name: str = ""  # which text, when there are several ("vGPU monitor text 2")


@dataclass(frozen=True, slots=True)
class ScreenedText:
    text: str  # the input with every over-limit line made blank (the same object if none)
    over_limit: tuple[OverLimitLine, ...]


def _long_line_starts(text: str) -> list[int]:
    """Offsets of the lines longer than ``_INSPECT_CHARS``, in order."""
    starts: list[int] = []
    length = len(text)
    position = 0
    while position + _INSPECT_CHARS < length:
        # Any newline in the next _INSPECT_CHARS + 1 characters ends every line before it.
        newline = text.rfind("\n", position, position + _INSPECT_CHARS + 1)
        if newline == -1:
            starts.append(position)
            newline = text.find("\n", position + _INSPECT_CHARS)
            if newline == -1:
                break
        position = newline + 1
    return starts


def _limit_broken(line: str) -> str | None:
    """Why one line breaks a limit, or None."""
    if len(line) > MAX_LINE_CHARS:
        return f"it is {len(line):,} characters long, over the limit of {MAX_LINE_CHARS:,}"
    brace = line.find("{")
    if brace == -1 or line.lstrip().startswith("#"):
        return None
    labels = 0
    longest = 0
    for quoted in _QUOTED.finditer(line, brace):
        labels += 1
        longest = max(longest, quoted.end() - quoted.start() - 2)
    if labels > MAX_LABELS_PER_SERIES:
        return f"it has {labels:,} labels, over the limit of {MAX_LABELS_PER_SERIES:,} per series"
    if longest > MAX_LABEL_VALUE_CHARS:
        return (
            f"it has a label value of {longest:,} characters, over the limit of "
            f"{MAX_LABEL_VALUE_CHARS:,}"
        )
    return None


def screen_lines(text: str, text_name: str = "") -> ScreenedText:
    """Blank out every line over a size limit and say which ones, by line number."""
    over_limit: list[OverLimitLine] = []
    blanked: list[tuple[int, int]] = []
    line_no = 1
    counted_to = 0
    for start in _long_line_starts(text):
        end = text.find("\n", start)
        end = len(text) if end == -1 else end
        line = text[start:end]
        reason = _limit_broken(line)
        if reason is None:
            continue
        line_no += text.count("\n", counted_to, start)
        counted_to = start
        series = shorten_line(line[: _SHOWN_SERIES_CHARS + 1].strip(), _SHOWN_SERIES_CHARS)
        over_limit.append(OverLimitLine(line_no, series, reason, text_name))
        blanked.append((start, end))
    if not blanked:
        return ScreenedText(text, ())
    pieces: list[str] = []
    kept_from = 0
    for start, end in blanked:
        pieces.append(text[kept_from:start])
        kept_from = end
    pieces.append(text[kept_from:])
    return ScreenedText("".join(pieces), tuple(over_limit))


def over_limit_note(lines: tuple[OverLimitLine, ...], shown: int = 3) -> str:
    """One sentence naming the lines left out, the first few in full."""
    if not lines:
        return ""
    listed = "; ".join(
        f"line {line.line_no}{f' of {line.text_name}' if line.text_name else ''} "
        f"(`{line.series}`): {line.reason}"
        for line in lines[:shown]
    )
    more = f"; and {len(lines) - shown:,} more" if len(lines) > shown else ""
    return (
        f"Input problems: {len(lines):,} line(s) over the size limits were left out: "
        f"{listed}{more}. No exporter writes such lines; send the /metrics output unchanged."
    )
