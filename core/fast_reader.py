"""A bulk reader for expositions exactly as the Go Prometheus client writes them.

HAMi's exporters render through client_golang: every family is one contiguous block behind its
``# HELP`` and ``# TYPE`` lines, labels come in the same (sorted) order on every line, values are
Go ``%g`` numbers, and there are no escapes, blank lines or timestamps.
For such text, one compiled expression per family block reads every line in a single C-level
``findall``, which is what lets a 70,000-sample scrape be summarised in a fraction of the time a
line-by-line parser needs.

The reader only vouches for text it fully understood: each block's match count must equal its
line count, and anything unusual (escapes, CRs, blank lines, comments other than HELP/TYPE,
histogram/summary families, counters whose TYPE name lacks "_total", timestamps, odd values)
returns None, and the caller uses the general parser (``core.exposition``). Tests check that
both routes give equal readings.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import chain, repeat

from core.families import FAMILIES, FamilySpec
from core.family_rows import Columns, FamilyRows

Fields = tuple[str, ...]

# Go strconv 'g' output, and Prometheus' special values. Every quantifier is possessive: a run
# of digits is taken whole and never given back, so a 40,000-digit value followed by junk fails
# in one pass (a plain "[0-9]+\.?[0-9]*" tries every split of the run between its two parts).
_VALUE = r"([+-]?+(?:[0-9]++(?:\.[0-9]*+)?+|\.[0-9]++)(?:[eE][+-]?+[0-9]++)?+|[+-]Inf|NaN)"
_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*+")
_LABEL_PAIR = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*+)="([^"\n]*+)"(?:,|$)')
_COMMENT = re.compile(r"# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*+)(?: ([^\n]*+))?+")
# Other types change sample names in the general parser (a counter whose TYPE line lacks
# "_total" gains it); a counter named as client_golang names it keeps its sample names.
_PLAIN_TYPES = frozenset({"gauge", "untyped"})


def _plainly_typed(kind: str | None, name: str) -> bool:
    """Whether a family of this TYPE has samples named exactly as its TYPE line says."""
    return kind in _PLAIN_TYPES or (kind == "counter" and name.endswith("_total"))


def _label_names(block: str) -> list[str] | None:
    """Label names of one well-formed label block, or None when it is not plainly formed."""
    names: list[str] = []
    end = 0
    # One anchored match per pair: a search would start again at every character of a name.
    while end < len(block):
        match = _LABEL_PAIR.match(block, end)
        if match is None:
            return None
        names.append(match.group(1))
        end = match.end()
    if block.endswith(","):
        return None
    return names


@lru_cache(maxsize=256)
def _row_pattern(name: str, labels: tuple[str, ...], read: tuple[int, ...]) -> re.Pattern[str]:
    """A sample line of ``name`` with the labels ``labels``: a group for the label block (with
    the "} " after it, as ``_rows_like`` puts it back), one for each label numbered in ``read``,
    and one for the value.

    A literal "\n" + name prefix lets the engine skip ahead with a fast substring search. Only
    labels a field is read from are groups: every group costs a string per line.
    """
    if not labels:
        return re.compile("\n" + re.escape(name) + r"( )([^\n]*+)")
    return re.compile(
        "\n"
        + re.escape(name)
        + r"\{("
        # A value may not hold a newline, but excluding it costs time: a match running across
        # lines would swallow a line of its own, and ``_rows_read`` finds it in the blocks.
        + ",".join(
            re.escape(label) + ('="([^"]*+)"' if number in read else '="[^"]*+"')
            for number, label in enumerate(labels)
        )
        + r"\} )([^\n]*+)"
    )


# Per (label names, field positions): the label block, with the "} " after it, of every line of
# the first family read in full with them, and the field tuples read from those lines.
_Key = tuple[tuple[str, ...], tuple[int, ...]]
_LabelBlocks = dict[_Key, tuple[list[str], list[Fields]]]


def _lines_at_once(first: str, rest: str, lines: int) -> str:
    """A pattern for ``first`` and then up to ``lines - 1`` lines of ``rest``, each taken whole
    or not at all (possessive: a match never gives a line back)."""
    pattern = ""
    for _ in range(lines - 1):
        pattern = "(?:" + rest + pattern + ")?+"
    return first + pattern


# What follows the first "} " of a line: its value when its label block holds no "} ". Eight
# lines a match: the engine's setup for each match (a data stack allocated and freed, the
# search restarted) costs a fifth of a line's reading; the groups of lines past the end of
# the block are "".
_AFTER_BLOCK = re.compile(_lines_at_once(r"\} ([^\n]*+)", r"\n[^}]*+\} ([^\n]*+)", 8))


def _rows_like(
    name: str, text: str, start: int, end: int, lead: str, known: tuple[list[str], list[Fields]]
) -> tuple[list[Fields], list[str]] | None:
    """Field tuples and value tokens of a block whose label blocks are, line for line, ``lead``
    and then those of a family already read in full (``known``); None when they are not.

    Families of one kind list the same series in the same order (the Go client sorts series by
    label values), so their labels need no second reading: only the values are found, and the
    block is then compared with one string built from the known label blocks and these values.
    Equal, the block is exactly "\n" + name + "{" + lead + block + value for every known block
    (which ends in "} "), in order, and neither the lead (from the first line), the blocks
    (checked when read) nor the values hold a newline: every line is covered, with the labels
    of the line already read. The built string is a transient copy of the block (a few MB for
    the largest exports); building and comparing it in C costs less than a regex reading the
    label blocks again. A label value holding "} " splits its line in the wrong place, the
    comparison fails, and the block is read in full.
    """
    blocks, fields = known
    tokens = list(chain.from_iterable(_AFTER_BLOCK.findall(text, start - 1, end)))
    count = len(blocks)
    if len(tokens) < count:
        return None
    del tokens[count:]  # the groups of lines past the end of the block
    parts = ["\n" + name + "{" + lead, "", ""] * count
    parts[1::3] = blocks
    parts[2::3] = tokens
    expected = "".join(parts)
    if len(expected) != end - start + 1 or not text.startswith(expected, start - 1):
        return None
    return list(fields), tokens


def _known_after_lead(
    spec: FamilySpec, block: str, labels: list[str], read_before: _LabelBlocks
) -> tuple[str, tuple[list[str], list[Fields]]] | None:
    """For a family with labels in front of a known family's (as the memory allocation family
    has its device cores in front of the device families' labels): those labels as written in
    the first label block ``block``, with the known rows; None when there is no such family or
    a field is read from the labels in front (the known field tuples would not be this
    family's).

    Only blocks whose lines all begin with the first line's labels in front are read this way
    (a device family has the same device cores on every line); others are read in full.
    """
    owns = {spec.own_label_for(canonical) for canonical in spec.fields}
    lead_end = 0
    for skip in range(1, len(labels)):
        if labels[skip - 1] in owns:
            return None
        pair = _LABEL_PAIR.match(block, lead_end)
        assert pair is not None  # the block's labels were read with this pattern
        lead_end = pair.end()
        rest = labels[skip:]
        known = read_before.get((tuple(rest), _field_positions(spec, rest)))
        if known is not None:
            return block[:lead_end], known
    return None


def _covered(name: str, start: int, end: int, rows: int, labelled: bool, chars: int) -> bool:
    """Whether ``rows`` matches of sample lines of ``name``, their label blocks and values
    ``chars`` long in all, are every line of the block ``text[start:end]``.

    Each match is a newline, the name, "{" and the label block with its "} " (or a space
    alone), and the value, and findall's matches never overlap: matches as long in all as the
    block (with the newline before it) cover it exactly. Neither values nor label blocks
    (checked when they are read) hold a newline, so every newline starts one match: one row
    per line. Adding up lengths costs a fraction of counting the block's newlines character
    by character.
    """
    row_chars = len(name) + (2 if labelled else 1)
    return rows * row_chars + chars == end - start + 1


def _field_positions(spec: FamilySpec, labels: list[str]) -> tuple[int, ...]:
    """Which label each canonical field is read from: its number in ``labels``, or -1 when the
    family lacks that label."""
    return tuple(
        labels.index(own) if (own := spec.own_label_for(canonical)) in labels else -1
        for canonical in spec.fields
    )


def _rows_read(
    name: str, text: str, start: int, end: int, key: _Key, read_before: _LabelBlocks
) -> tuple[list[Fields], list[str]] | None:
    """Field tuples and value tokens of the family block ``text[start:end]`` read line by line
    with its label names ``key[0]``; None if any line is odd."""
    labels, positions = key
    read = tuple(sorted({number for number in positions if number >= 0}))
    # The block always follows a comment line, so text[start - 1] is the "\n" wanted.
    rows = _row_pattern(name, labels, read).findall(text, start - 1, end)
    if not rows:
        return None
    # One column per group, in C; the field tuples are then zipped from the columns, cheaper
    # than an itemgetter of many items per row (each item an index object looked up anew).
    columns = list(zip(*rows, strict=True))
    blocks = list(columns[0])
    block_text = "".join(blocks)
    if "\n" in block_text:  # a label value running across lines
        return None
    tokens = list(columns[-1])
    token_text = "".join(tokens)
    if not _covered(name, start, end, len(rows), bool(labels), len(block_text) + len(token_text)):
        return None
    column_of = {number: group for group, number in enumerate(read, 1)}
    fields: list[Fields] = list(
        zip(
            *(
                columns[column_of[number]] if number >= 0 else repeat("", len(rows))
                for number in positions
            ),
            strict=True,
        )
    )
    if labels:
        # A copy: the rows of a family met twice are extended in place (``add_family``).
        read_before.setdefault(key, (blocks, list(fields)))
    return fields, tokens


def _values(tokens: list[str]) -> list[float] | None:
    """The values of the tokens, or None if one is not a plain number."""
    distinct = set(tokens)
    # float() also takes "1_000", which the exposition format does not; a timestamp or any
    # other trailing token makes float() fail, and the general parser takes over.
    if "_" in "".join(distinct):
        return None
    try:
        if len(distinct) * 2 > len(tokens):
            return list(map(float, tokens))
        # Most values repeat (ratios of 0 or 100, sizes in whole GiB): each distinct token is
        # converted once and looked up for the rest, at a third of float()'s cost. NaN is
        # left to float() per token, so no two rows share one NaN object.
        number = dict(zip(distinct, map(float, distinct), strict=True))
    except ValueError:
        return None
    if any(value != value for value in number.values()):
        return list(map(float, tokens))
    return list(map(number.__getitem__, tokens))


def _block_rows(
    name: str, text: str, start: int, end: int, read_before: _LabelBlocks
) -> Columns | None:
    """All rows of the family block ``text[start:end]``, or None if any line is odd."""
    spec = FAMILIES[name]
    first_end = text.find("\n", start, end)
    first = text[start : end if first_end == -1 else first_end]
    rest = first[len(name) :]
    labels: list[str] | None = []
    block = ""
    if rest.startswith("{"):
        close = rest.find("}")
        block = rest[1:close]
        labels = _label_names(block) if close > 0 else None
        if labels is None or len(set(labels)) != len(labels):
            return None
        if any(label.startswith("__") for label in labels):
            return None
    assert labels is not None
    key = (tuple(labels), _field_positions(spec, labels))
    alike = None
    if labels:
        known = read_before.get(key)
        if known is not None:
            alike = _rows_like(name, text, start, end, "", known)
        elif (after := _known_after_lead(spec, block, labels, read_before)) is not None:
            alike = _rows_like(name, text, start, end, *after)
    if alike is not None:
        fields, tokens = alike
    else:
        read = _rows_read(name, text, start, end, key, read_before)
        if read is None:
            return None
        fields, tokens = read
    values = _values(tokens)
    if values is None:
        return None
    return fields, values


@lru_cache(maxsize=256)
def _family_line_pattern(name: str) -> re.Pattern[str]:
    """A plainly formed sample line of the family ``name``, at the start of a line."""
    return re.compile(
        "^"
        + re.escape(name)
        + r'(?:\{(?:[a-zA-Z_][a-zA-Z0-9_]*+="[^"\n]*+"(?:,(?=[a-zA-Z_])|(?=\})))*+\})?+'
        + r"[ \t]++"
        + _VALUE
        + r"[ \t]*+$",
        re.M,
    )


def _is_family_block(name: str, text: str, start: int, end: int) -> bool:
    """True when every line of a family we do not read is a plainly formed sample of it."""
    matches = _family_line_pattern(name).findall(text, start, end)
    return len(matches) == text.count("\n", start, end) + 1


def _next_comment_line(text: str, start: int, end: int) -> int:
    """Offset of the newline before the next line starting with "#", or ``end``."""
    # A one-character search runs at memchr speed; "#" inside label values is rare.
    hash_at = text.find("#", start, end)
    while hash_at != -1 and text[hash_at - 1] != "\n":
        hash_at = text.find("#", hash_at + 1, end)
    return end if hash_at == -1 else hash_at - 1


def read_go_exposition(text: str) -> FamilyRows | None:
    """Family rows of a Go-client exposition, or None when the text is not plainly one."""
    if "\\" in text or "\r" in text or not text.startswith("#"):
        return None
    # Blank lines need no search of their own: one inside a block breaks its line count, one
    # between comments is not a family name, and either way the text goes to the parser.
    length = len(text) - 1 if text.endswith("\n") else len(text)
    out = FamilyRows()
    read_before: _LabelBlocks = {}
    position = 0
    while position < length:
        # A run of comment lines, then a block of sample lines up to the next comment line.
        typed = ""
        while position < length and text.startswith("#", position):
            end = text.find("\n", position, length)
            end = length if end == -1 else end
            comment = _COMMENT.fullmatch(text, position, end)
            if comment is None:
                return None
            if comment.group(1) == "TYPE":
                if not _plainly_typed(comment.group(3), comment.group(2)):
                    return None
                typed = comment.group(2)
            position = end + 1
        if position >= length:
            break
        block_end = _next_comment_line(text, position, length)
        match = _NAME.match(text, position, block_end)
        if match is None or match.group(0) != typed:
            # Go writes HELP and TYPE before every family; anything else is not its output.
            return None
        name = typed
        if name in FAMILIES:
            columns = _block_rows(name, text, position, block_end, read_before)
            if columns is None:
                return None
            out.add_family(name, *columns)
        else:
            if not _is_family_block(name, text, position, block_end):
                return None
            out.counts[name] = out.counts.get(name, 0) + text.count("\n", position, block_end) + 1
            out.foreign[name] = None
        position = block_end + 1
    return out
