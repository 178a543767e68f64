"""Text cells that a spreadsheet will show as text, never run as a formula.

Excel, LibreOffice and Google Sheets evaluate a cell that starts with ``=``, ``+``, ``-`` or
``@`` (and some also after a leading tab or carriage return), so a pod or node named
``=HYPERLINK(...)`` would become a live formula in whoever opens the CSV. Such text cells get a
leading ``'``, the usual escape (OWASP, "CSV Injection"). Numbers are written as numbers: every
figure in a summary is finite and non-negative, so none of them starts with ``-``.
"""

from __future__ import annotations

import re

_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# A cell of written CSV starts a line or follows a comma, after a quote if it was quoted.
_CELL_STARTING_A_FORMULA = re.compile(r'(?:^|,)"?[=+\-@\t\r]', re.M)


def spreadsheet_cell(cell: object) -> object:
    """``cell`` as written to CSV: text that would start a formula is quoted with ``'``."""
    if isinstance(cell, str) and cell.startswith(_FORMULA_STARTS):
        return "'" + cell
    return cell


def may_start_a_formula(csv_text: str) -> bool:
    """Whether any cell of ``csv_text`` might start like a formula.

    One scan of the written text instead of a check per cell: tables without such a cell, nearly
    all of them, are written once; the rest are written again with ``spreadsheet_cell``. It can
    answer yes for a harmless table (a quoted line break followed by ``=``), never no for one
    that needs quoting.
    """
    return _CELL_STARTING_A_FORMULA.search(csv_text) is not None
