"""Decoding for the embedding pipeline: the shared policy of `lookbench._util.images`."""

from __future__ import annotations

from lookbench._util.images import BadImageError, decode_image

__all__ = ["BadImageError", "decode_image"]
