"""The JPEG frame header parser that routes images to the GPU decoder or the CPU reference path."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from lookbench._util.images import MAX_PIXELS, BadImageError, decode_image
from lookbench.embeddings.device_decode import _gpu_decodable, jpeg_frame


def jpeg(mode: str = "RGB", size: tuple[int, int] = (8, 6), **options: object) -> bytes:
    buf = io.BytesIO()
    Image.new(mode, size).save(buf, format="JPEG", **options)
    return buf.getvalue()


def with_size(data: bytes, width: int, height: int) -> bytes:
    """The same JPEG whose frame header claims another size."""
    at = data.index(b"\xff\xc0")
    return data[: at + 5] + height.to_bytes(2, "big") + width.to_bytes(2, "big") + data[at + 9 :]


def test_frame_header_components_and_size() -> None:
    frame = jpeg_frame(jpeg("RGB", (40, 30)))
    assert frame is not None and (frame.components, frame.width, frame.height) == (3, 40, 30)
    assert jpeg_frame(jpeg("L")).components == 1  # type: ignore[union-attr]
    assert jpeg_frame(jpeg("CMYK")).components == 4  # type: ignore[union-attr]
    assert jpeg_frame(jpeg("RGB", (9, 7), progressive=True)).width == 9  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "junk", [b"", b"\xff\xd8\xff", b"\x89PNG\r\n\x1a\n....", b"\xff\xd8\xff\xe0\x00\x01xx", b"\xff\xd8\xff\xda\x00\x08"]
)
def test_not_a_jpeg_or_cut_short(junk: bytes) -> None:
    assert jpeg_frame(junk) is None and not _gpu_decodable(junk)
    assert jpeg_frame(jpeg()[:12]) is None


def test_what_goes_to_the_gpu_decoder() -> None:
    assert _gpu_decodable(jpeg("RGB")) and _gpu_decodable(jpeg("L"))
    assert not _gpu_decodable(jpeg("CMYK"))  # CMYK and YCCK: the CPU path converts them
    assert not _gpu_decodable(None)
    assert not _gpu_decodable(with_size(jpeg("RGB"), 30_000, 30_000))  # the CPU path's bomb check answers
    assert not _gpu_decodable(with_size(jpeg("RGB"), 0, 10))


def test_one_pixel_limit_for_cpu_and_gpu_decoding() -> None:
    at_limit = with_size(jpeg("RGB"), 10_000, MAX_PIXELS // 10_000)
    above = with_size(jpeg("RGB"), 10_000, MAX_PIXELS // 10_000 + 1)  # under Pillow's own limit (about 179 MP)
    assert _gpu_decodable(at_limit) and not _gpu_decodable(above)
    with pytest.raises(BadImageError, match="image too large"):
        decode_image(above)  # where the GPU path sends it: refused with the CPU path's message
