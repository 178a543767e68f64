"""Reading the GPU-hours CSV back as a spreadsheet would: the method line, then a table."""

from __future__ import annotations

import csv
import io


def csv_rows(text: str) -> list[dict[str, str]]:
    """The rows under the header, after the method line (checked)."""
    method, table = text.split("\n", 1)
    assert method.startswith("# GPU-hours = allocated cores / 100 x hours"), method
    return list(csv.DictReader(io.StringIO(table)))


def namespace_hours(text: str) -> dict[str, float]:
    """GPU-hours of each namespace (its rows of scope ``namespace``)."""
    return {
        row["namespace"]: float(row["gpu_hours"])
        for row in csv_rows(text)
        if row["scope"] == "namespace"
    }
