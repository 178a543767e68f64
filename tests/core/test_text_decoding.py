"""Metrics files saved as UTF-16 (with or without a byte-order mark) are read, not refused."""

from __future__ import annotations

import codecs

import pytest

from core.api import summarize_text
from core.errors import InputError
from core.model import SourceInfo
from core.text_decoding import decode_metrics_bytes
from tests.conftest import read_fixture

TEXT = read_fixture("scheduler-small.prom")


@pytest.mark.parametrize(
    "data",
    [
        TEXT.encode("utf-8"),
        codecs.BOM_UTF8 + TEXT.encode("utf-8"),
        TEXT.encode("utf-16"),  # with the platform's byte-order mark
        codecs.BOM_UTF16_LE + TEXT.encode("utf-16-le"),
        codecs.BOM_UTF16_BE + TEXT.encode("utf-16-be"),
        TEXT.encode("utf-16-le"),  # no mark: found by its NUL bytes
        TEXT.encode("utf-16-be"),
        TEXT.encode("utf-32"),
    ],
    ids=["utf8", "utf8-bom", "utf16", "utf16le-bom", "utf16be-bom", "utf16le", "utf16be", "utf32"],
)
def test_every_unicode_encoding_gives_the_same_text(data: bytes) -> None:
    assert decode_metrics_bytes(data) == TEXT


def test_non_ascii_label_values_survive_utf16() -> None:
    text = TEXT.replace("team-a", "équipe-α")
    assert decode_metrics_bytes(text.encode("utf-16-le")) == text


def test_utf8_with_a_stray_nul_is_not_taken_for_utf16() -> None:
    data = TEXT.encode("utf-8")[:2000] + b"\x00" + TEXT.encode("utf-8")[2000:]
    assert decode_metrics_bytes(data).replace("\x00", "") == TEXT


def test_utf16_already_read_as_utf8_is_named_precisely() -> None:
    wrongly_read = TEXT.encode("utf-16-le").decode("utf-8", errors="replace")
    with pytest.raises(InputError) as refusal:
        summarize_text(wrongly_read, SourceInfo(kind="paste", label="pasted text"))
    assert refusal.value.message == (
        "That text is UTF-16 read as if it were UTF-8 (every other character is NUL). Save the "
        "metrics as UTF-8 (e.g. iconv -f UTF-16 -t UTF-8), or give the file itself: files are "
        "read in UTF-16 as well."
    )
