"""Every pattern that reads user text is linear by construction, and every pattern is listed.

Python's ``re`` backtracks: a quantifier that gives characters back lets one failing match try
every split of a run between two quantifiers (a 40,000-digit number then junk took 40 s), and a
search restarts at every position. The checks here are on the parsed pattern, so they are exact
and need no clock:

* no quantifier may backtrack over more than a few characters: unbounded repeats are
  possessive (``*+``, ``++``, ``?+`` or ``{m,}+``), so each character is taken at most once;
* a pattern applied by searching (``search``, ``findall``, ``sub``, ...) starts with a literal,
  an anchor or a lookbehind, so a failed attempt costs one character at the other positions.

``tests/benchmarks/bench_hostile_input.py`` times each pattern on 5,000- and 50,000-character
adversarial strings and prints the ratio.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeGuard

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core.user_text_patterns import NOT_COVERED, SEARCHING, TRUSTED, USER_TEXT

ROOT = Path(__file__).resolve().parents[2]
RE_FUNCTIONS = frozenset(
    {"compile", "search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split"}
)
# The longest bounded repeat allowed to backtrack (Kubernetes names: {0,61}, {0,251}).
MAX_BACKTRACKING_REPEAT = 256

_parser: Any = getattr(re, "_parser")  # noqa: B009 - the standard library's pattern parser
_c: Any = getattr(re, "_constants")  # noqa: B009


def _is_re_call(node: ast.AST) -> TypeGuard[ast.Call]:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "re"
        and node.func.attr in RE_FUNCTIONS
    )


def _module_patterns(path: Path) -> dict[str, list[ast.Call]]:
    """Pattern names in one module: ``NAME`` at module level, else the enclosing function."""
    module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    found: dict[str, list[ast.Call]] = {}
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for statement in tree.body:
        calls = [node for node in ast.walk(statement) if _is_re_call(node)]
        if not calls:
            continue
        if isinstance(statement, ast.Assign | ast.AnnAssign):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            found.setdefault(f"{module}:{names[0]}", []).extend(calls)
            continue
        for function in ast.walk(statement):
            if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                inner = [node for node in ast.walk(function) if _is_re_call(node)]
                if inner and not any(
                    f"{module}:{other}" in found for other in _enclosing(statement, function)
                ):
                    found.setdefault(f"{module}:{function.name}", []).extend(inner)
    return found


def _enclosing(statement: ast.AST, function: ast.AST) -> Iterator[str]:
    """Names of the functions around ``function`` within ``statement`` (outermost first)."""
    for node in ast.walk(statement):
        if (
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node is not function
            and any(child is function for child in ast.walk(node))
        ):
            yield node.name


@lru_cache(maxsize=1)
def all_patterns() -> dict[str, list[ast.Call]]:
    found: dict[str, list[ast.Call]] = {}
    for package in ("bot", "core"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if path.relative_to(ROOT).as_posix() not in NOT_COVERED:
                found.update(_module_patterns(path))
    return found


def registry_name(key: str) -> str:
    return key.split("#", 1)[0]


def compiled(key: str) -> list[re.Pattern[str]]:
    """The compiled pattern(s) a registry entry stands for."""
    entry = USER_TEXT[key]
    if entry.build is not None:
        return [entry.build()]
    module_name, name = registry_name(key).split(":")
    module = importlib.import_module(module_name)
    value = getattr(module, name, None)
    if isinstance(value, re.Pattern):
        return [value]
    # Used inside a function: the pattern is the call's literal first argument.
    patterns = []
    for call in all_patterns()[key]:
        literal = call.args[0]
        assert isinstance(literal, ast.Constant) and isinstance(literal.value, str), (
            f"{key}: a pattern built at run time needs a build function in the registry"
        )
        patterns.append(re.compile(literal.value))
    return patterns


def backtracking_repeats(items: Any) -> Iterator[str]:
    """Quantifiers that can give back more than ``MAX_BACKTRACKING_REPEAT`` characters."""
    for op, value in items:
        if op in (_c.MAX_REPEAT, _c.MIN_REPEAT):
            low, high, inner = value
            if high == _c.MAXREPEAT or high > MAX_BACKTRACKING_REPEAT:
                kind = "lazy" if op == _c.MIN_REPEAT else "greedy"
                yield f"{kind} {{{low},{'' if high == _c.MAXREPEAT else high}}} repeat"
            yield from backtracking_repeats(inner)
        elif op == _c.POSSESSIVE_REPEAT:
            yield from backtracking_repeats(value[2])
        elif op == _c.SUBPATTERN:
            yield from backtracking_repeats(value[3])
        elif op == _c.BRANCH:
            for branch in value[1]:
                yield from backtracking_repeats(branch)
        elif op in (_c.ASSERT, _c.ASSERT_NOT):
            yield from backtracking_repeats(value[1])
        elif op == _c.ATOMIC_GROUP:
            yield from backtracking_repeats(value)
        elif op == _c.GROUPREF_EXISTS:
            for branch in value[1:]:
                if branch is not None:
                    yield from backtracking_repeats(branch)


def starts_cheaply(items: Any) -> bool:
    """True when an attempt at a wrong position fails on its first character."""
    data = list(items)
    if not data:
        return False
    op, value = data[0]
    if op in (_c.LITERAL, _c.AT, _c.ASSERT, _c.ASSERT_NOT):
        return True
    if op == _c.SUBPATTERN:
        return starts_cheaply(value[3])
    if op == _c.BRANCH:
        return all(starts_cheaply(branch) for branch in value[1])
    # A lone possessive run never fails once started: a search reads each character once.
    return len(data) == 1 and op == _c.POSSESSIVE_REPEAT


def test_every_pattern_in_bot_and_core_is_listed() -> None:
    found = set(all_patterns())
    listed = {registry_name(key) for key in USER_TEXT} | set(TRUSTED)
    assert sorted(found - listed) == [], "add new patterns to tests/core/user_text_patterns.py"
    assert sorted(listed - found) == [], "remove patterns that no longer exist from the registry"


@pytest.mark.parametrize("key", sorted(USER_TEXT))
def test_no_quantifier_gives_characters_back(key: str) -> None:
    for pattern in compiled(key):
        parsed = _parser.parse(pattern.pattern, pattern.flags)
        assert list(backtracking_repeats(parsed)) == [], pattern.pattern


@pytest.mark.parametrize("key", sorted(k for k, v in USER_TEXT.items() if v.method in SEARCHING))
def test_searches_start_on_a_literal_an_anchor_or_a_lookbehind(key: str) -> None:
    for pattern in compiled(key):
        parsed = _parser.parse(pattern.pattern, pattern.flags)
        assert starts_cheaply(parsed), pattern.pattern


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        (r"[0-9]+\.?[0-9]*x", "greedy {1,} repeat"),
        (r"a.*?b", "lazy {0,} repeat"),
        (r"(?:[^\"\\]|\\.)*", "greedy {0,} repeat"),
        (r"(?>a+)b", "greedy {1,} repeat"),
        (r"x{0,1000}", "greedy {0,1000} repeat"),
    ],
)
def test_the_check_finds_backtracking_quantifiers(pattern: str, problem: str) -> None:
    assert problem in list(backtracking_repeats(_parser.parse(pattern)))


def test_the_check_finds_searches_that_restart_inside_a_run() -> None:
    assert not starts_cheaply(_parser.parse(r"[a-z]++="))
    assert starts_cheaply(_parser.parse(r"(?<![a-z])[a-z]++="))
    assert starts_cheaply(_parser.parse(r"[ \t]++"))


ADVERSARIAL_PIECES = [
    *'1٣xa_:="\\{}, \t\n.e+-<>|@#*`&/',
    *("Inf", "NaN", '{a="', "<@U1|", "Handshake status 403 -+-+- ", "charset=", "[SSL: ", "MiB"),
]


@settings(deadline=None)
@given(
    key=st.sampled_from(sorted(USER_TEXT)),
    pieces=st.lists(st.sampled_from(ADVERSARIAL_PIECES), min_size=1, max_size=4),
    tail=st.sampled_from(["", "x", "\n", '"', "}"]),
)
def test_patterns_read_long_adversarial_text_without_error(
    key: str, pieces: list[str], tail: str
) -> None:
    """Runs of the pieces a pattern looks for, 50,000 characters long: every use finishes.

    Linear patterns take milliseconds here; a quadratic one takes minutes and stalls the
    suite, so a regression cannot pass unnoticed.
    """
    unit = "".join(pieces)
    text = unit * (50_000 // len(unit)) + tail
    method = USER_TEXT[key].method
    for pattern in compiled(key):
        # A bytes pattern (one run over encoded JSON) reads the same text as UTF-8.
        subject: str | bytes = text.encode() if isinstance(pattern.pattern, bytes) else text
        if method == "sub":
            pattern.sub(subject[:0], subject)
        elif method == "split":
            pattern.split(subject)
        else:
            getattr(pattern, method)(subject)
