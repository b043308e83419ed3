"""Decoding for the embedding pipeline: the shared policy of `lookbench.images`."""

from __future__ import annotations

from lookbench.images import BadImageError, decode_image

__all__ = ["BadImageError", "decode_image"]
