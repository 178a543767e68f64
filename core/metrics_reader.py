"""``read_metrics``: the one way from metrics text to the rows of its HAMi families.

Text exactly as the Go client writes it (a scrape, a saved ``/metrics``) is read in bulk by
``core.fast_reader``, which vouches only for text it fully understood; anything else (a paste
with prompts and fences, escapes, timestamps, other exporters' quirks) goes through the general
parser, ``core.exposition``. Both give the same rows for the same samples (tests check it), so
callers never choose a route.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.exposition import RejectedLine, parse_exposition
from core.family_rows import FamilyRows, rows_from_samples
from core.fast_reader import read_go_exposition
from core.paste import clean_paste


@dataclass(frozen=True, slots=True)
class MetricsRead:
    """The family rows of one text, with the lines that could not be read and what cleaning
    a paste needed (both empty for text read in bulk)."""

    rows: FamilyRows
    rejected: list[RejectedLine] = field(default_factory=list)
    paste_notes: tuple[str, ...] = ()


def read_metrics(text: str, *, pasted: bool = False) -> MetricsRead:
    """The rows of the HAMi families in ``text``.

    ``pasted``: the text may be a messy paste (a chat message, a terminal copy); what the bulk
    reader does not take is cleaned first (``core.paste``) and the cleaning is noted.
    """
    # ASCII without "&" rules out smart quotes and Slack's entities, which a paste may carry.
    plain = not pasted or (text.isascii() and "&" not in text)
    bulk = read_go_exposition(text) if plain else None
    if bulk is not None:
        return MetricsRead(bulk)
    notes: tuple[str, ...] = ()
    if pasted:
        cleaned = clean_paste(text)
        text, notes = cleaned.text, cleaned.notes
        bulk = read_go_exposition(text)
        if bulk is not None:
            return MetricsRead(bulk, [], notes)
    exposition = parse_exposition(text)
    return MetricsRead(rows_from_samples(exposition.samples), list(exposition.rejected), notes)
