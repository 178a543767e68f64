"""Write the chart's README.md: prose from README.tmpl.md, parameters from values.yaml comments.

    python deploy/helm/chart_readme.py          # rewrite deploy/helm/hami-summary/README.md
    python deploy/helm/chart_readme.py --check  # exit 1 if the committed README is stale

As helm-docs does: a comment block starting with ``# --`` documents the key right below it
(continuation lines are the following ``#`` lines). Every value that is not a mapping (and every
empty mapping) gets a row with its full dotted key, type, default and description; a documented
mapping keeps its row too. The test suite runs ``--check``'s comparison, so a new value without
a regenerated README fails there.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

CHART = Path(__file__).resolve().parent / "hami-summary"
VALUES = CHART / "values.yaml"
TEMPLATE = CHART / "README.tmpl.md"
README = CHART / "README.md"
PLACEHOLDER = "{{ parameters }}"
_KEY = re.compile(r"^(?P<indent>\s*)(?P<key>[A-Za-z0-9_.-]+):(?:\s|$)")


@dataclass(frozen=True)
class Parameter:
    key: str
    kind: str
    default: str
    description: str


def _lookup(values: Any, path: list[str]) -> tuple[bool, Any]:
    node = values
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return False, None
        node = node[part]
    return True, node


def _kind(value: Any) -> str:
    for python_type, name in (
        (bool, "bool"),
        (int, "int"),
        (float, "float"),
        (str, "string"),
        (list, "list"),
        (dict, "object"),
    ):
        if isinstance(value, python_type):
            return name
    return "null"


def descriptions(text: str) -> dict[str, str]:
    """Dotted key -> its ``# --`` description, from the raw values.yaml text."""
    values = yaml.safe_load(text)
    found: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    pending: list[str] | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("# --"):
            pending = [stripped[4:].strip()]
            continue
        if stripped.startswith("#"):
            if pending is not None:
                pending.append(stripped[1:].strip())
            continue
        match = _KEY.match(line)
        if not match:
            pending = None if not stripped else pending
            continue
        indent = len(match["indent"])
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = [key for _, key in stack] + [match["key"]]
        exists, _ = _lookup(values, path)
        if exists:  # a key of a mapping, not a line inside a list's items
            stack.append((indent, match["key"]))
            if pending:
                found[".".join(path)] = " ".join(part for part in pending if part)
        pending = None
    return found


def parameters(text: str) -> list[Parameter]:
    values = yaml.safe_load(text)
    documented = descriptions(text)
    rows: list[Parameter] = []

    def visit(node: Any, path: list[str]) -> None:
        key = ".".join(path)
        is_branch = isinstance(node, dict) and bool(node)
        if path and (not is_branch or key in documented):
            default = json.dumps(node, separators=(", ", ": "))
            rows.append(Parameter(key, _kind(node), default, documented.get(key, "")))
        if is_branch:
            for child, value in node.items():
                visit(value, [*path, child])

    visit(values, [])
    return rows


def _cell(text: str, *, code: bool = False) -> str:
    escaped = text.replace("|", "\\|")
    return escaped if code else escaped.replace("<", "&lt;")


def table(rows: list[Parameter]) -> str:
    lines = ["| Key | Type | Default | Description |", "| --- | --- | --- | --- |"]
    for row in rows:
        default = _cell(row.default, code=True)
        lines.append(f"| `{row.key}` | {row.kind} | `{default}` | {_cell(row.description)} |")
    return "\n".join(lines)


def render() -> str:
    template = TEMPLATE.read_text()
    assert PLACEHOLDER in template, f"{TEMPLATE} has no {PLACEHOLDER}"
    return template.replace(PLACEHOLDER, table(parameters(VALUES.read_text())))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 if stale")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if README.read_text() != text:
            print(f"{README} is stale: run python deploy/helm/chart_readme.py", file=sys.stderr)
            return 1
        return 0
    README.write_text(text)
    print(f"wrote {README}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
