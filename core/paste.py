"""Clean metrics text that was pasted into Slack (or a terminal) before parsing it.

A paste is rarely the exposition as served. Slack escapes ``&``, ``<`` and ``>`` in message
text as ``&amp;``, ``&lt;``, ``&gt;`` and wraps URLs as ``<http://x|x>`` (Slack API docs,
"Formatting text for app surfaces"); people wrap the text in code fences or ``>`` quotes, keep
the ``$ curl ...`` line they ran, write a sentence around it, and Slack or a word processor may
turn straight quotes into typographic ones and spaces into non-breaking spaces. A paste that hit
the message size limit ends in the middle of a line.

``clean_paste`` undoes that and says what it did, one note per kind with counts. Its rules:

* a line that is already valid exposition text is kept byte for byte (entity decoding aside,
  when the whole text is Slack-escaped), so clean input comes back unchanged, and fast;
* removed lines become empty lines, so line numbers in later messages still match the paste;
* a line that looks like a metric but is broken stays, so the parser can say what is wrong
  with it, unless it is the last one, cut off: that one is dropped and noted.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from core.errors import shorten_line
from core.exposition_lines import line_problem

__all__ = ["CleanedPaste", "clean_paste"]


@dataclass(frozen=True, slots=True)
class CleanedPaste:
    text: str
    notes: tuple[str, ...]  # one human sentence per kind of thing removed or repaired


# A line that may need cleaning: it starts with something no sample or comment starts with,
# or with a word that is not followed by labels or a number (chat text, commands, prompts).
# The leading "\n" lets the regex engine skip from line to line with a fast literal search.
_NUMBER_START = r"[-+]?(?:[0-9.]|[nN][aA][nN]|[iI][nN][fF])"
_SUSPECT_LINE = re.compile(
    r"\n(?:[^#a-zA-Z_:\n]"
    rf"|[a-zA-Z_:][a-zA-Z0-9_:]*+(?:[^{{ \t]|\Z|[ \t]++(?!{_NUMBER_START})))"
)
_ASCII_MARKERS = ("&", "`", "<", ">")
_UNICODE_MARKERS = ("“", "”", "„", "‟", "‘", "’", "\u00a0", "\u202f", "\u2007")
_SLACK_ENTITY = re.compile(r"&(amp|lt|gt);")
_ENTITY_CHARS = {"amp": "&", "lt": "<", "gt": ">"}
# Slack never leaves a bare '&' in message text: one means the text was not Slack-escaped.
_BARE_AMPERSAND = re.compile(r"&(?!amp;|lt;|gt;)")
_QUOTE_MARKER = re.compile(r"[ \t]*+(?:>>>|>)[ \t]?+")
_FENCE_LINE = re.compile(r"```[\w.+-]*+")
# <http://x|label>, <mailto:a@b|a@b>, <http://x>: Slack's link markup.
_SLACK_LINK = re.compile(r"<((?:https?|mailto|ftp):[^<>|\s]*+)(?:\|([^<>]*+))?+>")
_NON_BREAKING_SPACES = str.maketrans({"\u00a0": " ", "\u202f": " ", "\u2007": " "})
_TYPOGRAPHIC_QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "‟": '"', "‘": '"', "’": '"'})
_PROMPT = re.compile(
    r"[ \t]*+(?:"
    r"[$%❯➜]\s"  # $ cmd, % cmd (zsh), ❯ / ➜ (themed prompts)
    r"|[\w.-]++@[\w.-]++(?::[^\s$#%]*+)?+\s*+[$#%]"  # user@host:~$ cmd
    r"|\[[^\]]*+\]\s*+[$#]"  # [root@host ~]# cmd
    r"|PS [^>]*+>"  # PowerShell
    r")"
)
_COMMAND = re.compile(
    r"[ \t]*+(?:sudo\s++)?(?:curl|wget|kubectl|oc|k|http|https|xh|helm|watch|cat|less|head|tail"
    r"|grep|jq|nc|python3?)(?:\s|$)"
)
# What a sample line starts like: a name, then labels or a number.
_METRIC_LIKE = re.compile(rf"[ \t]*+[a-zA-Z_:][a-zA-Z0-9_:]*+(?:\{{|[ \t]++{_NUMBER_START})")

_EXAMPLE_CHARS = 60


def _needs_cleaning(text: str) -> bool:
    """Cheap checks over the whole text; False means every line can be kept as it is."""
    if any(marker in text for marker in _ASCII_MARKERS):
        return True
    if not text.isascii() and any(marker in text for marker in _UNICODE_MARKERS):
        return True
    first_line_end = text.find("\n")
    first_line = text if first_line_end < 0 else text[:first_line_end]
    return (
        _SUSPECT_LINE.match("\n" + first_line) is not None or _SUSPECT_LINE.search(text) is not None
    )


def _plural(count: int, word: str, plural: str | None = None) -> str:
    return f"{count} {word if count == 1 else (plural or word + 's')}"


class _Cleaner:
    def __init__(self, slack_escaped: bool) -> None:
        self.slack_escaped = slack_escaped
        self.counts: Counter[str] = Counter()
        self.examples: dict[str, str] = {}

    def note_example(self, kind: str, line: str) -> None:
        self.counts[kind] += 1
        self.examples.setdefault(kind, shorten_line(line.strip(), _EXAMPLE_CHARS))

    def clean_line(self, line: str) -> str:
        """The line repaired, kept, or '' when it is not part of the metrics."""
        if self.slack_escaped and "&" in line:
            decoded = _SLACK_ENTITY.sub(lambda m: _ENTITY_CHARS[m.group(1)], line)
            if decoded != line:
                self.counts["entities"] += 1
                line = decoded
        marker = _QUOTE_MARKER.match(line)
        if marker is not None:
            self.counts["quote"] += 1
            line = line[marker.end() :]
        if "`" in line:
            unmarked = self._without_code_markers(line)
            if unmarked is None:
                return ""
            line = unmarked
        if "<" in line:
            unwrapped, links = _SLACK_LINK.subn(lambda m: m.group(2) or m.group(1), line)
            if links:
                self.counts["links"] += links
                line = unwrapped
        if line_problem(line) is None:
            return line
        repaired = line.translate(_NON_BREAKING_SPACES)
        spaces_fixed = repaired != line
        requoted = repaired.translate(_TYPOGRAPHIC_QUOTES)
        quotes_fixed = requoted != repaired
        if (spaces_fixed or quotes_fixed) and (
            line_problem(requoted) is None or _METRIC_LIKE.match(requoted)
        ):
            self.counts["spaces"] += spaces_fixed
            self.counts["quotes"] += quotes_fixed
            return requoted
        if _PROMPT.match(line) or _COMMAND.match(line):
            self.note_example("command", line)
            return ""
        if _METRIC_LIKE.match(line):
            return line  # broken metric: the parser will say what is wrong with it
        self.note_example("other", line)
        return ""

    def _without_code_markers(self, line: str) -> str | None:
        """The line without ``` fences or `inline code` marks; None for a fence-only line."""
        stripped = line.strip()
        if _FENCE_LINE.fullmatch(stripped):
            self.counts["fence"] += 1
            return None
        if stripped.startswith("```"):
            self.counts["fence"] += 1
            stripped = stripped[3:]
        if stripped.endswith("```"):
            self.counts["fence"] += 1
            stripped = stripped[:-3]
        if len(stripped) > 1 and stripped.startswith("`") and stripped.endswith("`"):
            self.counts["fence"] += 1
            stripped = stripped[1:-1]
        return stripped if stripped != line.strip() else line

    def drop_truncated_last(self, lines: list[str], text_ends_with_newline: bool) -> None:
        """Blank the last content line when it is a metric line cut off in the middle."""
        last = len(lines) - 1
        while last >= 0 and not lines[last].strip():
            last -= 1
        if last < 0:
            return
        line = lines[last]
        problem = line_problem(line)
        if problem is None or not _METRIC_LIKE.match(line):
            return
        brace = line.find("{")
        where = "mid-label" if brace >= 0 and "}" not in line[brace:] else "mid-value"
        ending = "" if text_ends_with_newline else " (the text ends without a newline)"
        # Show where it stops: the end of the line, not its start.
        shown = line.strip()
        if len(shown) > _EXAMPLE_CHARS:
            shown = "…" + shown[-(_EXAMPLE_CHARS - 1) :]
        self.examples["truncated"] = (
            f"dropped the last line, which is cut off {where}{ending}: `{shown}`"
        )
        lines[last] = ""

    def notes(self) -> tuple[str, ...]:
        counts = self.counts
        notes: list[str] = []
        if counts["entities"]:
            notes.append(
                "decoded Slack's HTML escapes (&amp; &lt; &gt;) on "
                + _plural(counts["entities"], "line")
            )
        if counts["fence"]:
            notes.append(f"removed {_plural(counts['fence'], 'code-fence marker')} (```)")
        if counts["quote"]:
            notes.append(f"removed {_plural(counts['quote'], 'quote marker')} (>)")
        if counts["links"]:
            notes.append(f"unwrapped {_plural(counts['links'], 'Slack link')} (<url|text>)")
        if counts["spaces"]:
            notes.append(f"replaced non-breaking spaces on {_plural(counts['spaces'], 'line')}")
        if counts["quotes"]:
            notes.append(
                "replaced typographic quotes (“ ” ‘ ’) with straight quotes on "
                + _plural(counts["quotes"], "line")
            )
        if counts["command"]:
            notes.append(
                f"removed {_plural(counts['command'], 'shell prompt or command line')} "
                f"(first: `{self.examples['command']}`)"
            )
        if counts["other"]:
            notes.append(
                f"removed {_plural(counts['other'], 'line')} of other text, not metrics "
                f"(first: `{self.examples['other']}`)"
            )
        if "truncated" in self.examples:
            notes.append(self.examples["truncated"])
        return tuple(notes)


def clean_paste(text: str) -> CleanedPaste:
    """Undo what pasting did to metrics text; returns the text and notes on what changed.

    Clean exposition text comes back as the same string with no notes, after a few scans.
    """
    cleaner = _Cleaner(slack_escaped=False)
    ends_with_newline = text.endswith("\n")
    if not _needs_cleaning(text):
        # Only the last line can still be wrong: a paste or download cut off mid-line.
        body = text.rstrip()
        start = body.rfind("\n") + 1
        lines = [body[start:]]
        cleaner.drop_truncated_last(lines, ends_with_newline)
        if lines[0]:
            return CleanedPaste(text, ())
        return CleanedPaste(text[:start] + text[len(body) :], cleaner.notes())
    cleaner.slack_escaped = (
        _SLACK_ENTITY.search(text) is not None and _BARE_AMPERSAND.search(text) is None
    )
    lines = [cleaner.clean_line(line) for line in text.split("\n")]
    cleaner.drop_truncated_last(lines, ends_with_newline)
    return CleanedPaste("\n".join(lines), cleaner.notes())
