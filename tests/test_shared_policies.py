"""The shared helpers: sha256 forms (byte-identical to the formulas they replaced), image decoding, dates."""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import struct
import zlib

import numpy as np
import pytest
from PIL import Image

from lookbench._util.dates import (
    lenient_date,
    optional_datetime,
    parse_date,
    parse_datetime,
    parse_day,
    snapshot_date,
    version_date,
)
from lookbench._util.hashing import (
    digest,
    digest_size,
    file_sha256,
    json_sha256,
    order_key,
    parts_sha256,
    sha1_hex,
    sha256_digest,
    sha256_hex,
    sha256_stream,
)
from lookbench._util.images import MAX_PIXELS, BadImageError, decode_image, image_size
from lookbench.embeddings.store import model_key
from lookbench.errors import LookBenchError
from lookbench.models.preprocess import Preprocess


def test_hashes_match_the_formulas_caches_and_manifests_were_written_with(tmp_path):
    data = b"some image bytes"
    assert sha256_hex(data) == hashlib.sha256(data).hexdigest()
    assert sha256_digest(data) == hashlib.sha256(data).digest()
    path = tmp_path / "f.bin"
    path.write_bytes(data * 100_000)
    assert file_sha256(path) == hashlib.sha256(data * 100_000).hexdigest()
    assert parts_sha256("m", "r", "p", "float32") == hashlib.sha256(b"m\0r\0p\0float32").hexdigest()
    schema = {"b": [1, 2], "a": {"z": None}}
    assert json_sha256(schema) == hashlib.sha256(json.dumps(schema, sort_keys=True).encode()).hexdigest()
    # the embedding cache's folder names and preprocessing fingerprints are unchanged
    assert model_key("efficientnet-lite0", "abc", "pre", "float32").endswith(
        hashlib.sha256(b"efficientnet-lite0\0abc\0pre\0float32").hexdigest()[:16]
    )
    pre = Preprocess(crop=224, resize=256)
    expected = hashlib.sha256(json.dumps(pre.model_dump(), sort_keys=True).encode()).hexdigest()[:16]
    assert pre.fingerprint() == expected
    # short ids, image digests, streamed fingerprints and order keys keep the forms ids were written with
    assert sha1_hex("abc") == "a9993e364706816aba3e25717850c26c9cd0d89d"  # FIPS 180 test vector
    assert digest(b"abc", "sha1").hex() == "a9993e364706816aba3e25717850c26c9cd0d89d" and digest_size("sha1") == 20
    assert digest(data) == hashlib.sha256(data).digest() and digest_size("sha256") == 32
    stream = sha256_stream()
    for part in (b"a", b"b", b"c"):
        stream.update(part)
    assert stream.hexdigest() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"  # sha256("abc")
    assert order_key("0\0a") == hashlib.blake2b(b"0\0a", digest_size=8).digest()
    from lookbench.datasets.synth.disjoint import exclusion_key
    from lookbench.release.stages.split import item_id
    from lookbench.results.naming import slug

    assert item_id("shop", "p1") == hashlib.sha1(b"shop\0p1").hexdigest()[:16]
    assert slug("m" * 300).endswith("-" + hashlib.sha1(b"m" * 300).hexdigest()[:8])
    assert (
        exclusion_key(["default", "synth:1:2026-05-01:tiny"])
        == (hashlib.sha256(b"default\0synth:1:2026-05-01:tiny").hexdigest()[:8])
    )


def test_only_the_hashing_module_imports_hashlib():
    import ast
    from pathlib import Path

    import lookbench

    root = Path(lookbench.__file__).parent
    importers = set()
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            names += [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if any(name.split(".")[0] in ("hashlib", "_hashlib") for name in names):
                importers.add(path.relative_to(root).as_posix())
    assert importers == {"_util/hashing.py"}


def _png_claiming(width: int, height: int) -> bytes:
    """A tiny PNG whose header claims a huge canvas (a decompression bomb's first bytes)."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0" * 16)) + chunk(b"IEND", b"")
    )


def test_one_decode_policy_with_a_pixel_limit_per_decode():
    pixels_before = Image.MAX_IMAGE_PIXELS
    import lookbench.embeddings.pipeline  # noqa: F401 - importing the eval side changes no global

    assert pixels_before == Image.MAX_IMAGE_PIXELS
    with pytest.raises(BadImageError, match="DecompressionBomb"):
        decode_image(_png_claiming(20_000, 20_000))
    with pytest.raises(BadImageError, match="too large"):
        image_size(_png_claiming(9_000, 9_000), max_pixels=MAX_PIXELS)
    buf = io.BytesIO()
    Image.new("RGB", (30, 20), (1, 2, 3)).save(buf, format="PNG")
    assert image_size(buf.getvalue()) == (30, 20)
    with pytest.raises(BadImageError, match="does not decode"):
        image_size(buf.getvalue()[:60])
    with pytest.raises(BadImageError, match="no bytes"):
        image_size(b"")


def test_dates_that_cannot_exist_or_be_represented_are_errors():
    assert parse_datetime("2026-05-01T10:00:00Z") == dt.datetime(2026, 5, 1, 10, tzinfo=dt.timezone.utc)
    assert parse_datetime("2026-05-01") == dt.datetime(2026, 5, 1, tzinfo=dt.timezone.utc)
    assert parse_datetime(dt.date(2026, 5, 1)).tzinfo == dt.timezone.utc
    for bad in ("0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"):
        with pytest.raises(ValueError, match="out of range"):
            parse_datetime(bad)
    for bad in ("2026-02-30", "yesterday", "2026-13-01"):
        with pytest.raises(ValueError, match="not an ISO date"):
            parse_datetime(bad)
    assert optional_datetime(None) is None and optional_datetime("  ") is None
    with pytest.raises(LookBenchError, match="--since"):
        parse_date("2026-02-30", "--since")
    assert parse_date("2026-01-02T01:00:00+02:00", "--since") == np.datetime64("2026-01-01T23:00:00", "us")
    assert version_date("v20260601") == dt.date(2026, 6, 1)
    assert snapshot_date("main") is None and version_date("latest") is None
    with pytest.raises(ValueError, match="not a real date"):
        version_date("v20260230")
    with pytest.raises(LookBenchError, match="not a real date"):
        snapshot_date("v20260230")


def test_release_days_take_three_spellings_and_refuse_the_rest():
    for text in ("2026-03-01", "20260301", "v20260301", " 2026-03-01 "):
        assert parse_day(text) == dt.date(2026, 3, 1), text
    for bad in ("March", "2026-3-1", "2026031", "2026-03-01T00:00"):
        with pytest.raises(ValueError, match=r"^'.*' is not an ISO date \(YYYY-MM-DD\)$"):
            parse_day(bad)
    with pytest.raises(ValueError, match="'2026-02-30' is not a real date"):
        parse_day("2026-02-30")


def test_card_dates_resolve_partial_dates_to_the_period_end_and_words_to_unknown():
    assert lenient_date("2020-02") == dt.date(2020, 2, 29)
    assert lenient_date("2012 (ImageNet)") == dt.date(2012, 12, 31)
    assert lenient_date("2023-05-01T12:00:00+00:00") == dt.date(2023, 5, 1)
    assert lenient_date("Unknown") is None and lenient_date("soon") is None and lenient_date("2020-13") is None
