"""PNG files with a colour palette: a chart is a few hundred colours, so one byte per pixel.

matplotlib writes 8-bit RGBA PNGs; the charts' antialiased text makes those 300 KB and more
although the image holds only some 400 distinct colours. An indexed PNG of the same pixels
is about a quarter of that: the 256 most frequent colours (every flat area, every namespace
colour) are kept exactly, and the rare remainder, the edges of antialiased glyphs, take the
nearest of them. Written with zlib by the PNG specification (colour type 3, bit depth 8).
"""

from __future__ import annotations

import struct
import zlib
from typing import Any, Final

import numpy as np

PNG_SIGNATURE: Final = b"\x89PNG\r\n\x1a\n"
MAX_COLOURS: Final = 256
ZLIB_LEVEL: Final = 6
NEAREST_BATCH: Final = 2048


def figure_png(figure: Any, dpi: float) -> bytes:
    """``figure`` drawn at ``dpi`` as an indexed PNG (its background must be opaque)."""
    figure.set_dpi(dpi)
    figure.canvas.draw()
    return indexed_png(np.asarray(figure.canvas.buffer_rgba()))


def indexed_png(rgba: np.ndarray) -> bytes:
    """An opaque ``height x width x 4`` uint8 image as a palette PNG (alpha is dropped)."""
    height, width = int(rgba.shape[0]), int(rgba.shape[1])
    # Each pixel as one little-endian integer 0xAABBGGRR, without copying; then alpha dropped.
    packed = np.ascontiguousarray(rgba, dtype=np.uint8).view("<u4").reshape(-1) & 0xFFFFFF
    colours, inverse, counts = _distinct_colours(packed)
    palette, index_of = _palette(colours, counts)
    # Each scanline starts with its filter type: 0, none (palette data gains little from more).
    rows = np.zeros((height, width + 1), dtype=np.uint8)
    rows[:, 1:] = index_of[inverse].reshape(height, width)
    header = struct.pack(">IIBBBBB", width, height, 8, 3, 0, 0, 0)
    return b"".join(
        (
            PNG_SIGNATURE,
            _chunk(b"IHDR", header),
            _chunk(b"PLTE", _rgb(palette).astype(np.uint8).tobytes()),
            _chunk(b"IDAT", zlib.compress(rows.tobytes(), ZLIB_LEVEL)),
            _chunk(b"IEND", b""),
        )
    )


def _distinct_colours(packed: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What ``np.unique(packed, return_inverse=True, return_counts=True)`` returns, sorting
    runs of equal neighbours instead of pixels: a chart is mostly flat areas, so there are
    tens of times fewer runs than pixels, and sorting every pixel was most of the cost."""
    starts = np.flatnonzero(np.concatenate(([True], packed[1:] != packed[:-1])))
    lengths = np.diff(np.append(starts, len(packed)))
    colours, run_colour = np.unique(packed[starts], return_inverse=True)
    counts = np.bincount(run_colour, weights=lengths, minlength=len(colours)).astype(np.int64)
    return colours, np.repeat(run_colour, lengths), counts


def _palette(colours: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The palette (packed 0xBBGGRR) and, per distinct colour, its palette index."""
    if len(colours) <= MAX_COLOURS:
        return colours, np.arange(len(colours), dtype=np.uint8)
    order = np.lexsort((colours, -counts))  # most frequent first, ties by colour: deterministic
    kept, rest = order[:MAX_COLOURS], order[MAX_COLOURS:]
    index_of = np.empty(len(colours), dtype=np.uint8)
    index_of[kept] = np.arange(MAX_COLOURS)
    kept_rgb = _rgb(colours[kept])
    for start in range(0, len(rest), NEAREST_BATCH):  # bounded memory for many rare colours
        batch = rest[start : start + NEAREST_BATCH]
        distance = ((_rgb(colours[batch])[:, None, :] - kept_rgb[None, :, :]) ** 2).sum(axis=2)
        index_of[batch] = distance.argmin(axis=1)
    return colours[kept], index_of


def _rgb(packed: np.ndarray) -> np.ndarray:
    """Packed 0xBBGGRR colours as rows of (red, green, blue)."""
    return np.stack([packed & 255, (packed >> 8) & 255, (packed >> 16) & 255], axis=1).astype(
        np.int64
    )


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
