"""Tables defined once, as columns, and laid out for every view.

A ``Column`` says what a table cell is: the header people read (``memory``), the key machines
read with its unit (``mem_allocated_mib``), how the value is shown in the one number style
(``core.number_style``), the exact value for JSON (and CSV, unless the CSV cell differs, as a
list written as words separated by spaces), its alignment and its width class:

* ``fixed``: never cut (numbers, short words);
* ``name``: shortened in the middle when the line is too wide (``gpu-…-0283``);
* ``wrap``: the last column, wrapped between words onto continuation lines.

A column without a header is only in the files (CSV and JSON: ``exact``); one without a key is
only shown (text, Markdown, Slack). So one ``TableSpec`` is a table in every output: the text
and Markdown reports, the Slack messages and files, the CSV tables and the JSON document, and a
column added to it appears in each of them.

``TableSpec.table(rows)`` gives the shown cells as a ``Table``; ``fixed_width`` lays a table out
in a given width (100 columns in a terminal, 72 in a Slack code block) and ``markdown_lines``
as a Markdown table; ``TableSpec.csv_rows`` / ``records`` give the exact values.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from operator import attrgetter
from typing import Any, Generic, Literal, TypeVar

from core import number_style
from core.views.text_fit import shorten_middle, wrap_words
from core.visible_text import markdown_text, visible

R = TypeVar("R")
Align = Literal["left", "right"]
WidthClass = Literal["fixed", "name", "wrap"]

# A name column is never cut below this many characters; a wrapped column never below this.
NAME_MIN_WIDTH = 8
WRAP_MIN_WIDTH = 16


@dataclass(frozen=True, slots=True)
class Table:
    """A table's shown cells, ready for a view: title, headers, rows and what was left out.

    Every cell is made visible when the table is made (a changed copy too): cells hold label
    values, and a newline in one must not end its row in any view.
    """

    title: str
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    omitted: int = 0
    omitted_hint: str = ""
    empty_reason: str = ""
    # Column indexes shortened first when a row is too wide (long names).
    elastic: tuple[int, ...] = ()
    align: tuple[Align, ...] = ()
    # The last column wraps onto continuation lines rather than being shortened.
    wrap_last: bool = True
    # Column indexes a narrow layout leaves out, in this order, before cutting any name.
    droppable: tuple[int, ...] = ()
    # A name is never cut below this many characters.
    name_floor: int = NAME_MIN_WIDTH
    # A tight line puts one space, not two, between two right-aligned numbers.
    tight_gaps: bool = True

    def __post_init__(self) -> None:
        shown_rows = tuple(tuple(map(visible, row)) for row in self.rows)
        object.__setattr__(self, "rows", shown_rows)  # frozen: the one normalised field

    def aligned(self, column: int) -> Align:
        return self.align[column] if column < len(self.align) else "left"


def _nothing(_row: object) -> str:
    return ""


@dataclass(frozen=True, slots=True)
class Column(Generic[R]):
    # Shown under this header in text, Markdown and Slack; "" keeps it out of them.
    header: str
    # The CSV header and JSON key, with its unit; "" keeps it out of the files.
    key: str
    show: Callable[[R], str] = _nothing
    value: Callable[[R], object] | None = None
    align: Align = "left"
    width: WidthClass = "fixed"
    # Left out of a layout too narrow for every column, the highest first (0: never); files
    # and Markdown keep it.
    optional: int = 0
    # The CSV cell when it is not the JSON value (a list as words, a rounded figure).
    csv: Callable[[R], object] | None = None
    in_csv: bool = True
    in_json: bool = True


@dataclass(frozen=True, slots=True)
class TableSpec(Generic[R]):
    """A table's columns, defined once for every view."""

    columns: tuple[Column[R], ...]
    empty_reason: str = ""
    omitted_hint: str = ""
    # The JSON keys in the order the document writes them, when it is not the columns' order;
    # keys it leaves out come after them.
    json_order: tuple[str, ...] = ()

    @property
    def shown(self) -> tuple[Column[R], ...]:
        """The columns people read, in their order."""
        return tuple(c for c in self.columns if c.header)

    @property
    def headers(self) -> tuple[str, ...]:
        return tuple(c.header for c in self.shown)

    def table(self, title: str, rows: Iterable[R], omitted: int = 0) -> Table:
        columns = self.shown
        cells = tuple(tuple(c.show(row) for c in columns) for row in rows)
        return Table(
            title,
            self.headers,
            cells,
            omitted,
            self.omitted_hint,
            self.empty_reason,
            elastic=tuple(i for i, c in enumerate(columns) if c.width == "name"),
            align=tuple(c.align for c in columns),
            wrap_last=columns[-1].width == "wrap",
            droppable=tuple(
                sorted(
                    (i for i, c in enumerate(columns) if c.optional),
                    key=lambda i: -columns[i].optional,
                )
            ),
        )

    def select(self, *headers: str) -> TableSpec[R]:
        """The shown columns named by ``headers``, in this table's order and never left out
        (a narrower table of the same rows, such as the first page's)."""
        unknown = set(headers) - set(self.headers)
        if unknown:
            raise ValueError(f"no column {', '.join(sorted(unknown))} in this table")
        chosen = tuple(replace(c, key="", optional=0) for c in self.shown if c.header in headers)
        return replace(self, columns=chosen)

    def csv_header(self) -> tuple[str, ...]:
        return tuple(c.key for c in self.columns if c.key and c.in_csv)

    def csv_rows(self, rows: Iterable[R]) -> list[tuple[object, ...]]:
        rows = list(rows)
        if not rows:
            return []
        cells = tuple(c.csv or _exact(c) for c in self.columns if c.key and c.in_csv)
        return _compiled(cells, None)(rows)

    def records(self, rows: Iterable[R]) -> list[dict[str, object]]:
        rows = list(rows)
        if not rows:
            return []
        columns = [c for c in self.columns if c.key and c.in_json]
        if self.json_order:
            # Keys the order does not name (a column added since) follow it, in column order.
            place = {key: i for i, key in enumerate(self.json_order)}
            columns.sort(key=lambda c: place.get(c.key, len(place)))
        return _compiled(tuple(_exact(c) for c in columns), tuple(c.key for c in columns))(rows)


def _exact(column: Column[R]) -> Callable[[R], object]:
    return column.value if column.value is not None else column.show


@dataclass(frozen=True, slots=True)
class Field:
    """The exact value of a column that is one attribute of the row, ``convert`` applied if
    given; a table whose exact values are all fields is read without a call per column
    (``_compiled``)."""

    name: str
    convert: Callable[[Any], object] | None = None

    def __call__(self, row: object) -> Any:
        value = getattr(row, self.name)
        return value if self.convert is None else self.convert(value)


def _compiled(
    getters: tuple[Callable[[Any], object], ...],
    keys: tuple[str, ...] | None,
) -> Callable[[list[Any]], list[Any]]:
    """A function from rows to their values: a dict of ``keys`` each (JSON), or a tuple (CSV).

    Compiled once for a table and its kind of row, and kept: every document writes the same
    tables (``exec`` of the source costs more than the 1,000 rows of a large cluster's nodes).
    """
    try:
        return _compile_cached(getters, keys)
    except TypeError:  # a getter that cannot be a key (one that defines __eq__ only)
        return _compile(getters, keys)


def _compile(
    getters: tuple[Callable[[Any], object], ...],
    keys: tuple[str, ...] | None,
) -> Callable[[list[Any]], list[Any]]:
    """The function of ``_compiled``.

    Each row is one dict (or tuple) display, compiled the way ``dataclasses`` writes its
    methods: the JSON document of a large cluster has 8,000 GPU and 10,000 workload records,
    and a display built from the row's fields read by one ``attrgetter`` is several times
    faster than a call per column. A field that is ``rounded`` is rounded a whole column at a
    time (``_rounded_column``) and given to the row function as an argument. The keys are the
    column definitions' own, never input text.
    """
    env: dict[str, Any] = {"rounded_column": _rounded_column}
    params = ["row"]
    columns: list[str] = []
    lines: list[str] = []
    fields = [g for g in getters if isinstance(g, Field)]
    if getters and len(fields) == len(getters):
        exprs = []
        read: list[tuple[str, Field]] = []  # the fields read from each row, by their names
        for i, f in enumerate(fields):
            if f.convert is rounded:
                env[f"get{i}"] = attrgetter(f.name)
                params.append(f"r{i}")
                columns.append(f"rounded_column(list(map(get{i}, rows)))")
                exprs.append(f"r{i}")
            else:
                read.append((f"v{i}", f))
                exprs.append(_inline(f"v{i}", f, env, i))
        if read:
            env["fetch"] = attrgetter(*(f.name for _, f in read))
            unpacked = f"{', '.join(n for n, _ in read)}," if len(read) > 1 else read[0][0]
            lines.append(f"    {unpacked} = fetch(row)")
    else:
        exprs = []
        for i, get in enumerate(getters):
            env[f"g{i}"] = get
            exprs.append(f"g{i}(row)")
    if keys is None:
        lines.append(f"    return ({''.join(e + ', ' for e in exprs)})")
    else:
        pairs = ", ".join(f"{key!r}: {e}" for key, e in zip(keys, exprs, strict=True))
        lines.append(f"    return {{{pairs}}}")
    source = [f"def build({', '.join(params)}):", *lines]
    source.append("def table(rows):")
    source.append(f"    return list(map(build, rows{''.join(', ' + c for c in columns)}))")
    exec("\n".join(source), env)
    table: Callable[[list[Any]], list[Any]] = env["table"]
    return table


# Tables compiled so far; a view that builds its table for each summary (with its own functions)
# only ever has its latest few here.
_compile_cached = lru_cache(maxsize=64)(_compile)


def _inline(name: str, field: Field, env: dict[str, Any], i: int) -> str:
    """The expression of one field's value in a compiled row function."""
    if field.convert is None:
        return name
    env[f"c{i}"] = field.convert
    return f"c{i}({name})"


# Exactly these types take ``_rounded_column``'s look-up: a bool is equal to an int and a float
# and rounds to an int; a float subclass may round otherwise.
_LOOKED_UP = frozenset({float, type(None)})


def _rounded_column(values: list[Any]) -> list[Any]:
    """``rounded`` of each of ``values``, each distinct value rounded once.

    ``round(x, 4)`` writes the float out in decimal and reads it back; a large table's
    percentages repeat (8,000 GPUs have a few hundred distinct ones), so they are rounded once
    each and looked up. A value rounding leaves as it is is not in the table and stands for
    itself (so a zero keeps its sign: -0.0 == 0.0 would find the other's entry).
    """
    if not set(map(type, values)) <= _LOOKED_UP:
        return list(map(rounded, values))
    changed: dict[float, float] = {}
    for value in set(values):
        if value is not None:
            result = round(value, 4)
            if result != value:  # NaN too: it is its own entry, found by identity
                changed[value] = result
    return list(map(changed.get, values, values)) if changed else values


# -- column kinds --------------------------------------------------------------------------


def exact(
    key: str,
    get: Callable[[R], object] | None = None,
    *,
    csv: Callable[[R], object] | None = None,
    in_csv: bool = True,
    in_json: bool = True,
) -> Column[R]:
    """A column only in the files (CSV and JSON), exact and with its unit in ``key``; by
    default the row's attribute of that name."""
    value = get if get is not None else Field(key)
    return Column("", key, value=value, csv=csv, in_csv=in_csv, in_json=in_json)


def rounded(value: float | None) -> float | None:
    """A percentage as the files write it: four decimals, enough for any chart, no float noise."""
    return None if value is None else round(value, 4)


# In the kinds below, ``get`` (by default the row's attribute named ``key``) gives the shown
# figure and ``value`` (by default ``get``) the exact one of the files.
Number = Callable[[R], float | None]


def text(
    header: str, key: str, get: Callable[[R], str] | None = None, *, name: bool = False
) -> Column[R]:
    shown = get if get is not None else Field(key)
    return Column(header, key, shown, shown, "left", "name" if name else "fixed")


def wrapped(header: str, key: str, get: Callable[[R], str] | None = None) -> Column[R]:
    shown = get if get is not None else Field(key)
    return Column(header, key, shown, shown, "left", "wrap")


def _figure(
    show: Callable[[float | None], str],
    header: str,
    key: str,
    get: Number[R] | None,
    value: Number[R] | None,
) -> Column[R]:
    shown = get if get is not None else Field(key)
    return Column(header, key, lambda r: show(shown(r)), value or shown, "right")


def count(
    header: str, key: str, get: Number[R] | None = None, *, value: Number[R] | None = None
) -> Column[R]:
    """A count with thousands separators."""
    return _figure(number_style.count, header, key, get, value)


def cores(
    header: str, key: str, get: Number[R] | None = None, *, value: Number[R] | None = None
) -> Column[R]:
    """Share points (100 = one GPU) under a header that names them."""
    return _figure(number_style.cores_value, header, key, get, value)


def percent(
    header: str,
    key: str,
    get: Number[R] | None = None,
    *,
    value: Number[R] | None = None,
    optional: int = 0,
) -> Column[R]:
    """A percentage shown with one decimal; the files have it to four decimals."""
    shown = get if get is not None else Field(key)
    exact_get = value or shown
    exact: Callable[[R], object]
    if isinstance(exact_get, Field) and exact_get.convert is None:
        exact = Field(exact_get.name, rounded)
    else:
        exact = lambda r: rounded(exact_get(r))  # noqa: E731
    return Column(
        header, key, lambda r: number_style.percent(shown(r)), exact, "right", optional=optional
    )


def mem_each(
    header: str, key: str, get: Number[R] | None = None, *, value: Number[R] | None = None
) -> Column[R]:
    """Memory of one GPU or pod, shown in GiB (MiB below 1 GiB); exact MiB for machines."""
    return _figure(number_style.mem_each, header, key, get, value)


def mem_total(
    header: str, key: str, get: Number[R] | None = None, *, value: Number[R] | None = None
) -> Column[R]:
    """A memory total, shown in GiB or TiB with 3 significant digits; exact MiB for machines."""
    return _figure(number_style.mem_total, header, key, get, value)


# -- layout ----------------------------------------------------------------------------------


def _natural(table: Table) -> list[int]:
    return [
        max(len(table.headers[i]), *(len(r[i]) for r in table.rows))
        if table.rows
        else len(table.headers[i])
        for i in range(len(table.headers))
    ]


def _gaps(table: Table, narrow: bool) -> list[int]:
    """Spaces before each column but the first: two, or one between two right-aligned numbers
    when the line is tight (numbers right-aligned under their headers still read apart)."""
    narrow = narrow and table.tight_gaps
    return [
        1 if narrow and table.aligned(i) == table.aligned(i - 1) == "right" else 2
        for i in range(1, len(table.headers))
    ]


def _longest_word(cells: Iterable[str]) -> int:
    return max((len(word) for cell in cells for word in cell.split()), default=1)


def fit_widths(table: Table, width: int) -> tuple[list[int], list[int]]:
    """Column widths and gaps that lay ``table`` out in ``width`` characters.

    In turn: the natural widths; single gaps before numbers; the wrapped last column down to
    its longest word (then to ``WRAP_MIN_WIDTH``); name columns shortened in the middle down to
    ``Table.name_floor``; finally any text column, widest first. Numbers are never cut.
    """
    widths = _natural(table)
    gaps = _gaps(table, narrow=False)
    if sum(widths) + sum(gaps) <= width:
        return widths, gaps
    gaps = _gaps(table, narrow=True)
    last = len(widths) - 1

    def excess() -> int:
        return sum(widths) + sum(gaps) - width

    if table.wrap_last and last > 0:
        column = [table.headers[last], *(r[last] for r in table.rows)]
        floor = min(widths[last], max(_longest_word(column), WRAP_MIN_WIDTH))
        widths[last] = max(widths[last] - max(excess(), 0), floor)
        if excess() > 0:
            widths[last] = max(widths[last] - excess(), min(WRAP_MIN_WIDTH, widths[last]))
    for column_index in table.elastic:
        if excess() <= 0:
            break
        floor = min(widths[column_index], table.name_floor)
        widths[column_index] = max(widths[column_index] - excess(), floor)
    text_columns = [i for i in range(len(widths)) if table.aligned(i) == "left"]
    take_from_widest(widths, text_columns, excess(), width, table.name_floor)
    return widths, gaps


def take_from_widest(
    widths: list[int], columns: Sequence[int], over: int, width: int, floor: int = NAME_MIN_WIDTH
) -> None:
    """Take ``over`` characters from ``columns``, one at a time from the widest (the first of
    equals), none below ``floor``; ``widths`` is changed in place. ``over`` is at
    least how far ``widths`` together run past ``width`` (the line's excess).

    A column wider than the line is always the widest, so the one-at-a-time loop cuts it to
    the line's width before touching any other: doing that at once gives the same widths and
    keeps a megabyte-wide cell from costing a megabyte of steps.
    """
    for i in columns:
        if over > 0 and widths[i] > max(width, floor):
            cut = min(widths[i] - max(width, floor), over)
            widths[i] -= cut
            over -= cut
    while over > 0:
        widest = max(columns, key=lambda i: widths[i], default=None)
        if widest is None or widths[widest] <= floor:
            return
        widths[widest] -= 1
        over -= 1


def _cell(value: str, size: int, align: Align) -> str:
    shown = shorten_middle(value, size)
    return shown.rjust(size) if align == "right" else shown.ljust(size)


T = TypeVar("T")


def _without(table: Table, column: int) -> Table:
    def cut(cells: tuple[T, ...]) -> tuple[T, ...]:
        return cells[:column] + cells[column + 1 :]

    def shift(indexes: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(i - (i > column) for i in indexes if i != column)

    return replace(
        table,
        headers=cut(table.headers),
        rows=tuple(cut(row) for row in table.rows),
        elastic=shift(table.elastic),
        align=cut(table.align),
        droppable=shift(table.droppable),
    )


def _fits(table: Table, width: int) -> bool:
    """Whether ``table`` fits with wide gaps, its wrapped column down to its longest word."""
    widths = _natural(table)
    if table.wrap_last and len(widths) > 1:
        column = [table.headers[-1], *(r[-1] for r in table.rows)]
        widths[-1] = min(widths[-1], max(_longest_word(column), WRAP_MIN_WIDTH))
    return sum(widths) + sum(_gaps(table, narrow=False)) <= width


def fixed_width(table: Table, width: int) -> list[str]:
    """The header and rows of ``table`` as aligned lines of at most ``width`` characters;
    optional columns are left out (``Column.optional``) when the rest would not fit."""
    while table.droppable and not _fits(table, width):
        table = _without(table, table.droppable[0])
    widths, gaps = fit_widths(table, width)
    last = len(widths) - 1
    indent = sum(widths[:-1]) + sum(gaps)
    lines = []
    for row in (table.headers, *table.rows):
        pairs = enumerate(zip(row, widths, strict=True))
        cells = [_cell(value, size, table.aligned(i)) for i, (value, size) in pairs]
        tail = [cells[last]]
        if table.wrap_last and len(row[last]) > widths[last]:
            tail = wrap_words(row[last], widths[last])
        cells[last] = tail[0]
        line = cells[0]
        for gap, cell in zip(gaps, cells[1:], strict=True):
            line += " " * gap + cell
        lines.append(line.rstrip())
        lines.extend((" " * indent + more).rstrip() for more in tail[1:])
    return lines


def aligned_lines(
    rows: Sequence[tuple[str, ...]],
    width: int,
    *,
    name_floor: int = NAME_MIN_WIDTH,
    first_width: int = 0,
) -> list[str]:
    """``rows`` (the first one the header) as a plain table of at most ``width`` characters: the
    first column text, at least ``first_width`` wide (so tables one under another line up) and
    shortened in the middle down to ``name_floor`` when a row is too wide, the others
    right-aligned figures, two spaces between columns."""
    shown = [tuple(map(visible, row)) for row in rows]
    shown = [(row[0].ljust(first_width), *row[1:]) for row in shown]
    right: Align = "right"
    figures = (right,) * (len(shown[0]) - 1)
    table = Table(
        "",
        shown[0],
        tuple(shown[1:]),
        elastic=(0,),
        align=("left", *figures),
        wrap_last=False,
        name_floor=name_floor,
        tight_gaps=False,
    )
    return fixed_width(table, width)


def markdown_lines(table: Table) -> list[str]:
    """``table`` as a Markdown table: numbers right-aligned, cells shown as written
    (``markdown_text``: a pipe never ends a cell, a name is never HTML or a link)."""
    rule = ["---:" if table.aligned(i) == "right" else "---" for i in range(len(table.headers))]
    return [
        "| " + " | ".join(table.headers) + " |",
        "|" + "|".join(rule) + "|",
        *("| " + " | ".join(markdown_text(v) for v in row) + " |" for row in table.rows),
    ]
