"""Indexed PNGs: what a standard decoder reads back is the image, its frequent colours exact."""

from __future__ import annotations

import io
import zlib

import numpy as np
from matplotlib.image import imread

from core.views.png_indexed import MAX_COLOURS, _distinct_colours, indexed_png


def decoded(data: bytes) -> np.ndarray:
    image = imread(io.BytesIO(data), format="png")
    return np.asarray(np.round(image[..., :3] * 255), dtype=np.int64)


def opaque(rgb: np.ndarray) -> np.ndarray:
    alpha = np.full((*rgb.shape[:2], 1), 255, dtype=np.uint8)
    return np.concatenate([rgb.astype(np.uint8), alpha], axis=2)


def test_an_image_of_few_colours_reads_back_exactly() -> None:
    rng = np.random.default_rng(7)
    colours = rng.integers(0, 256, size=(40, 3))
    rgb = colours[rng.integers(0, 40, size=(90, 160))]
    data = indexed_png(opaque(rgb))
    assert data[25] == 3  # colour type 3: indexed
    assert np.array_equal(decoded(data), rgb)


def test_beyond_256_colours_the_frequent_ones_stay_exact_and_the_rest_come_nearest() -> None:
    rng = np.random.default_rng(11)
    frequent = rng.integers(0, 256, size=(MAX_COLOURS, 3))
    rgb = frequent[rng.integers(0, MAX_COLOURS, size=(120, 200))]
    rare = np.clip(frequent[:50] + 3, 0, 255)  # 50 near-duplicates, one pixel each
    rgb[0, :50] = rare
    out = decoded(indexed_png(opaque(rgb)))
    assert np.array_equal(out[1:], rgb[1:])
    distance = np.abs(out[0, :50] - rare).sum(axis=1)
    assert distance.max() <= 9  # each rare colour took a palette colour next to it


def test_the_file_is_a_well_formed_png() -> None:
    rgb = np.zeros((3, 5, 3), dtype=np.int64)
    rgb[1, 2] = (255, 0, 0)
    data = indexed_png(opaque(rgb))
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    offset, kinds = 8, []
    while offset < len(data):
        length = int.from_bytes(data[offset : offset + 4], "big")
        kind = data[offset + 4 : offset + 8]
        body = data[offset + 8 : offset + 8 + length]
        crc = int.from_bytes(data[offset + 8 + length : offset + 12 + length], "big")
        assert crc == zlib.crc32(kind + body)
        kinds.append(kind)
        offset += 12 + length
    assert kinds == [b"IHDR", b"PLTE", b"IDAT", b"IEND"]


def packed(rgb: np.ndarray) -> np.ndarray:
    return opaque(rgb).view("<u4").reshape(-1) & 0xFFFFFF


def test_colours_counted_by_runs_are_what_sorting_every_pixel_gives() -> None:
    # Colours are counted over runs of equal neighbours; flat areas, lone pixels, one colour
    # and one pixel must all give np.unique's answer, and so the same file.
    rng = np.random.default_rng(3)
    colours = rng.integers(0, 256, size=(300, 3))
    runs = np.repeat(colours[rng.integers(0, 300, size=(60, 40))], 5, axis=1)  # runs of 5
    runs[::7, ::3] = colours[rng.integers(0, 300, size=runs[::7, ::3].shape[:2])]  # lone pixels
    flat = np.full((4, 6, 3), 17)
    for rgb in (runs, flat, flat[:1, :1], colours[rng.integers(0, 300, size=(30, 30))]):
        pixels = packed(rgb)
        expected = np.unique(pixels, return_inverse=True, return_counts=True)
        for got, want in zip(_distinct_colours(pixels), expected, strict=True):
            assert np.array_equal(got, want.reshape(-1))
