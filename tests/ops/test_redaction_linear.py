"""The redaction patterns of the logs are linear in the text: checked by construction (every
unbounded repeat possessive, lazy ones only where they cannot rescan) and run over adversarial
50,000-character texts, which a backtracking pattern would take minutes over."""

from __future__ import annotations

import re
from re import _constants as sre_constants  # type: ignore[attr-defined]
from re import _parser as sre_parser  # type: ignore[attr-defined]
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.ops import logging as redaction
from bot.ops.logging import MAX_REDACTED_CHARS, REDACTED, redact

SIZE = 50_000
# Every compiled pattern of the module, so a pattern added there is checked without a list to
# keep in step.
PATTERNS = {name: value for name, value in vars(redaction).items() if isinstance(value, re.Pattern)}
# Fragments that make a backtracking pattern try every split of a long run: key names, their
# separators, scheme and user parts of URLs, flag prefixes, PEM headers.
FRAGMENTS = [
    "token=",
    "a",
    "a_",
    ":",
    "@",
    "x://a:",
    "--token ",
    "name: secret_token ",
    "bearer ",
    "secret_",
    "1",
    "xoxb-",
    "-----BEGIN RSA PRIVATE KEY-----",
    " ",
    '"',
    "a-key",
    "x_key =",
    "'",
    "\\",
    "-----END ",
    "LS0tLS1CRUdJTi",
]


def _unbounded_repeats(tree: Any, inside_lookaround: bool = False) -> list[tuple[str, bool]]:
    """(repeat kind, inside a look-around) of every repeat without an upper bound."""
    found: list[tuple[str, bool]] = []
    for op, arg in tree:
        name = str(op)
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            _, high, body = arg
            if high == sre_constants.MAXREPEAT:
                found.append((name, inside_lookaround))
            found += _unbounded_repeats(body, inside_lookaround)
        elif name in ("ASSERT", "ASSERT_NOT"):
            found += _unbounded_repeats(arg[1], True)
        elif name == "SUBPATTERN":
            found += _unbounded_repeats(arg[3], inside_lookaround)
        elif name == "BRANCH":
            for branch in arg[1]:
                found += _unbounded_repeats(branch, inside_lookaround)
        elif name == "ATOMIC_GROUP":
            found += _unbounded_repeats(arg, inside_lookaround)
    return found


def test_every_pattern_is_checked() -> None:
    assert set(PATTERNS) == {
        "_SLACK_TOKEN",
        "_PEM_PRIVATE_KEY",
        "_BASE64_PEM",
        "_AUTH_HEADER",
        "_URL_PASSWORD",
        "_KEY_VALUE",
        "_NAMED_VALUE",
        "_FLAG_VALUE",
    }


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_unbounded_repeats_are_possessive(name: str) -> None:
    pattern = PATTERNS[name]
    repeats = _unbounded_repeats(sre_parser.parse(pattern.pattern, pattern.flags))
    # Greedy repeats backtrack: none may be unbounded.
    assert ("MAX_REPEAT", False) not in repeats and ("MAX_REPEAT", True) not in repeats
    lazy = [inside for kind, inside in repeats if kind == "MIN_REPEAT"]
    if name == "_PEM_PRIVATE_KEY":
        # The key's body up to its END line or the end of the text: the match always succeeds
        # once the header matched, so the body is read once.
        assert lazy == [False]
    else:
        # Only the "name contains secret/password/..." look-ahead, confined to one run of name
        # characters, and tried once per run (the names start behind a non-name character).
        assert all(lazy), lazy


ADVERSARIAL = {fragment: (fragment * (SIZE // len(fragment) + 1))[:SIZE] for fragment in FRAGMENTS}


@pytest.mark.parametrize("fragment", FRAGMENTS)
def test_each_pattern_reads_an_adversarial_text_of_50000_characters(fragment: str) -> None:
    text = ADVERSARIAL[fragment]
    for pattern in PATTERNS.values():
        out = pattern.sub(REDACTED, text)
        assert len(out) <= len(text) + len(REDACTED) * (len(text) // 2 + 1)
    # ``redact`` itself lets the patterns see at most its bound, then says what it left out.
    assert redact(text).endswith(" more characters not logged]")


def test_what_adversarial_texts_become() -> None:
    # A chain of assignments is one key and one value.
    assert redact("token=" * 100) == f"token={REDACTED}"
    assert redact("--token " * 100) == f"--token {REDACTED} " * 50  # pairs: flag, value
    assert redact("x://a:" * 100) == "x://a:" * 100
    assert redact("x://a:" * 100 + "b@host") == "x://a:" * 99 + f"x://a:{REDACTED}@host"
    text = "-----BEGIN RSA PRIVATE KEY-----" * 100
    assert redact(text) == REDACTED


def test_long_messages_are_cut_before_the_patterns_see_them() -> None:
    secret_url = "https://robot:pa55word-that-is-cut@host/"
    text = "word " * (MAX_REDACTED_CHARS // 5 - 2) + secret_url + " tail" * 10_000
    out = redact(text)
    assert "pa55" not in out and "robot" not in out
    assert out.endswith(f" [{len(text) - len(out.rsplit(' [', 1)[0])} more characters not logged]")
    assert len(out) < MAX_REDACTED_CHARS + 64


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pieces=st.lists(
        st.tuples(st.sampled_from(FRAGMENTS), st.integers(min_value=1, max_value=5_000)),
        min_size=1,
        max_size=8,
    ),
    where=st.floats(min_value=0.0, max_value=1.0),
)
def test_a_credential_among_adversarial_text_is_still_redacted(
    pieces: list[tuple[str, int]], where: float
) -> None:
    filler = "".join(fragment * count for fragment, count in pieces)[: SIZE - 100]
    cut = int(len(filler) * where) % 20_000  # well inside the part the patterns see
    text = f"{filler[:cut]} password=planted-s3cret-value {filler[cut:]}"
    assert "planted-s3cret-value" not in redact(text)
