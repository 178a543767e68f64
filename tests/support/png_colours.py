"""Which namespace colours a chart PNG shows, read from its pixels."""

from __future__ import annotations

import io
from collections import Counter

import numpy as np
from matplotlib.image import imread

from core.views.palette import PALETTE

# A namespace's bar covers thousands of pixels; a few exact-colour pixels can be a blend.
MIN_PIXELS = 200


def colour_counts(png: bytes) -> Counter[str]:
    """How many pixels of each exact colour (``#rrggbb``) the image has."""
    image = np.asarray(imread(io.BytesIO(png), format="png"))[:, :, :3]
    values = (image * 255).round().astype(int).reshape(-1, 3)
    packed = values[:, 0] * 65536 + values[:, 1] * 256 + values[:, 2]
    numbers, counts = np.unique(packed, return_counts=True)
    return Counter({f"#{int(n):06x}": int(c) for n, c in zip(numbers, counts, strict=True)})


def namespace_colours(png: bytes) -> set[str]:
    """The palette colours (namespace colours: nothing else is drawn in them) the chart shows
    over more than a sliver of pixels."""
    counts = colour_counts(png)
    return {colour for colour in PALETTE if counts[colour] >= MIN_PIXELS}
