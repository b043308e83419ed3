"""ModelEmbeddings: cache hits, resume after an interrupted run, corrupted cache, bad images, dedup, memo."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from embedding_helpers import ColourStats, studio_snapshot
from lookbench.embeddings.model_provider import ModelEmbeddings
from lookbench.embeddings.provider import EmbeddingProvider
from lookbench.errors import EmbeddingError
from lookbench.models.embed_options import EmbedOptions
from lookbench.snapshot.reader import open_snapshot

SUBSET = "real_studio_flat"


def _options(tmp_path: Path, **kw: object) -> EmbedOptions:
    settings: dict[str, object] = {"cache_dir": tmp_path / "cache", "batch_size": 4, "workers": 2, "progress": False}
    return EmbedOptions.model_validate({**settings, **kw})


def test_embeds_row_aligned_and_cache_hit(tmp_path: Path) -> None:
    snap = open_snapshot(studio_snapshot(tmp_path, gallery=10))
    encoder = ColourStats()
    provider = ModelEmbeddings("test:colour", encoder, _options(tmp_path))
    assert isinstance(provider, EmbeddingProvider)
    out = provider.embed_split(snap, SUBSET, "gallery")
    assert out.shape == (10, 6) and out.dtype == np.float32
    assert encoder.rows == 10 and encoder.calls == 3
    assert np.array_equal(provider.embed_split(snap, SUBSET, "gallery"), out) and encoder.calls == 3  # from the cache
    again_encoder = ColourStats()
    again = ModelEmbeddings("test:colour", again_encoder, _options(tmp_path)).embed_split(snap, SUBSET, "gallery")
    assert again_encoder.calls == 0 and np.array_equal(again, out)
    # row order: row 3 of the split is the image with seed 103 wherever it sits in a batch
    single = ColourStats().encode(ColourStats().preprocess.batch([_decode(snap, 3)]))  # type: ignore[union-attr]
    assert np.allclose(out[3], single[0], atol=1e-6)
    assert provider.describe().meta.embed_dim == 6 and provider.describe().meta.model_id == "colour-stats"


def _decode(snap, row: int):  # type: ignore[no-untyped-def]
    from lookbench._util.images import decode_image

    for start, images in snap.iter_images(SUBSET, "gallery"):
        if start <= row < start + len(images):
            return decode_image(images[row - start])
    raise AssertionError


def test_resume_after_interrupted_run(tmp_path: Path) -> None:
    snap = open_snapshot(studio_snapshot(tmp_path, gallery=24))
    options = _options(tmp_path)
    crashing = ColourStats(fail_after=3)
    provider = ModelEmbeddings("test:colour", crashing, options)
    provider.store.chunk_rows = 4
    with pytest.raises(KeyboardInterrupt):
        provider.embed_split(snap, SUBSET, "gallery")
    assert crashing.rows == 12
    resumed = ColourStats()
    out = ModelEmbeddings("test:colour", resumed, options).embed_split(snap, SUBSET, "gallery")
    assert resumed.rows == 12  # only the rows the interrupted run did not finish
    fresh = ModelEmbeddings("test:colour", ColourStats(), _options(tmp_path / "other")).embed_split(
        snap, SUBSET, "gallery"
    )
    assert np.allclose(out, fresh)


def test_corrupted_cache_is_recomputed(tmp_path: Path) -> None:
    snap = open_snapshot(studio_snapshot(tmp_path, gallery=8))
    options = _options(tmp_path)
    first = ModelEmbeddings("test:colour", ColourStats(), options)
    expected = first.embed_split(snap, SUBSET, "gallery")
    for chunk in first.cache_root.glob("chunk-*.npz"):
        chunk.write_bytes(chunk.read_bytes()[:100])
    encoder = ColourStats()
    provider = ModelEmbeddings("test:colour", encoder, options)
    out = provider.embed_split(snap, SUBSET, "gallery")
    assert encoder.rows == 8 and len(provider.store.corrupt) == 1
    assert np.allclose(out, expected)


def test_bad_image_stops_with_row(tmp_path: Path) -> None:
    snap = open_snapshot(studio_snapshot(tmp_path, gallery=9, bad_rows={6: b"\x89PNG broken"}))
    provider = ModelEmbeddings("test:colour", ColourStats(), _options(tmp_path))
    with pytest.raises(EmbeddingError, match=r"v20260101 real_studio_flat/gallery row 6: image does not decode"):
        provider.embed_split(snap, SUBSET, "gallery")


def test_bad_image_skip_records_rows(tmp_path: Path) -> None:
    snap = open_snapshot(studio_snapshot(tmp_path, gallery=9, bad_rows={2: b"junk", 6: b""}))
    provider = ModelEmbeddings("test:colour", ColourStats(), _options(tmp_path, on_bad_image="skip"))
    out = provider.embed_split(snap, SUBSET, "gallery")
    skipped = provider.skipped[(SUBSET, "gallery")]
    assert sorted(skipped) == [2, 6] and "no bytes" in skipped[6]
    assert not out[2].any() and not out[6].any() and out[[0, 1, 3, 4, 5, 7, 8]].all(axis=1).all()
    assert set(provider.describe().skipped[f"{SUBSET}/gallery"]) == {"2", "6"}


def test_duplicate_images_embedded_once(tmp_path: Path) -> None:
    root = studio_snapshot(tmp_path, gallery=6)
    snap = open_snapshot(root)
    images = [data for _, batch in snap.iter_images(SUBSET, "gallery") for data in batch]
    dup = open_snapshot(studio_snapshot(tmp_path / "dup", gallery=6, bad_rows={5: images[0] or b""}))
    encoder = ColourStats()
    out = ModelEmbeddings("test:colour", encoder, _options(tmp_path)).embed_split(dup, SUBSET, "gallery")
    assert encoder.rows == 5 and np.array_equal(out[0], out[5])


def test_inline_without_workers_gives_same_vectors(tmp_path: Path) -> None:
    snap = open_snapshot(studio_snapshot(tmp_path, gallery=7))
    threaded = ModelEmbeddings("test:colour", ColourStats(), _options(tmp_path)).embed_split(snap, SUBSET, "gallery")
    inline = ModelEmbeddings("test:colour", ColourStats(), _options(tmp_path / "inline", workers=0))
    assert np.array_equal(inline.embed_split(snap, SUBSET, "gallery"), threaded)


def test_storage_dtype_float16(tmp_path: Path) -> None:
    snap = open_snapshot(studio_snapshot(tmp_path, gallery=5))
    p16 = ModelEmbeddings("test:colour", ColourStats(), _options(tmp_path, storage_dtype="float16"))
    p32 = ModelEmbeddings("test:colour", ColourStats(), _options(tmp_path))
    a, b = p16.embed_split(snap, SUBSET, "gallery"), p32.embed_split(snap, SUBSET, "gallery")
    assert p16.cache_root != p32.cache_root and a.dtype == np.float32
    assert np.allclose(a, b, atol=1e-2) and not np.array_equal(a, b)


def test_jpeg_draft_is_part_of_the_cache_key(tmp_path: Path) -> None:
    snap = open_snapshot(studio_snapshot(tmp_path, gallery=3))
    exact = ModelEmbeddings("test:colour", ColourStats(), _options(tmp_path))
    draft = ModelEmbeddings("test:colour", ColourStats(), _options(tmp_path, jpeg_draft=True))
    assert exact.cache_root != draft.cache_root and draft.describe().jpeg_draft is True
    assert np.allclose(exact.embed_split(snap, SUBSET, "gallery"), draft.embed_split(snap, SUBSET, "gallery"))
