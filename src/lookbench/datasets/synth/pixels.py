"""Per-channel arithmetic on (h, w, 3) images: numpy broadcasts a (h, w) field or a 3-vector over a 3-wide last
axis several times slower than it runs one channel at a time, and the results are the same to the bit."""

from __future__ import annotations

import numpy as np


def scale_channels(rgb: np.ndarray, field: np.ndarray, offset: np.ndarray | None = None) -> np.ndarray:
    """`rgb * field[..., None] (+ offset[..., None])`, computed in place in `rgb` (float32), one channel at a time."""
    for c in range(rgb.shape[-1]):
        channel = rgb[..., c]
        channel *= field
        if offset is not None:
            channel += offset
    return rgb
