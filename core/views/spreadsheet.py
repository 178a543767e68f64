"""Text cells that a spreadsheet will show as text, never run as a formula.

Excel, LibreOffice and Google Sheets evaluate a cell that starts with ``=``, ``+``, ``-`` or
``@`` (and some also after a leading tab or carriage return), so a pod or node named
``=HYPERLINK(...)`` would become a live formula in whoever opens the CSV. Such text cells get a
leading ``'``, the usual escape (OWASP, "CSV Injection"). Numbers are written as numbers: every
figure in a summary is finite and non-negative, so none of them starts with ``-``.
"""

from __future__ import annotations

_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_cell(cell: object) -> object:
    """``cell`` as written to CSV: text that would start a formula is quoted with ``'``."""
    if isinstance(cell, str) and cell.startswith(_FORMULA_STARTS):
        return "'" + cell
    return cell
