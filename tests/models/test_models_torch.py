"""open_clip, timm and transformers adapters: real architectures, random-initialised, loaded from local files.

These libraries need torch with torchvision; without them the tests skip (install `lookbench[openclip,timm,hf]`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from embedding_helpers import colour_image, embed_gallery, tiny_open_clip
from lookbench.errors import EmbeddingError
from lookbench.models.registry import resolve_model

pytestmark = pytest.mark.torch  # run in .venv-torch by scripts/test.sh

TINY = {"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 64}
"""Transformer sizes small enough for a random-initialised model to run in milliseconds."""


def test_open_clip_local_weights(tmp_path: Path) -> None:
    pytest.importorskip("open_clip")
    torch = pytest.importorskip("torch")
    spec, model = tiny_open_clip(tmp_path, "lookbench-tiny-vit")
    provider, out = embed_gallery(spec, tmp_path)
    assert out.shape == (3, 16)
    pre = provider.encoder.preprocess
    assert pre is not None and pre.crop == 32 and pre.mean[0] == pytest.approx(0.48145466)
    batch = pre.batch([colour_image(7)])
    with torch.no_grad():
        expected = model.encode_image(torch.from_numpy(batch)).numpy()
    assert np.allclose(provider.encoder.encode(batch), expected, atol=1e-5)


def test_timm_local_weights(tmp_path: Path) -> None:
    timm = pytest.importorskip("timm")
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    model = timm.create_model("resnet10t", pretrained=False).eval()
    weights = tmp_path / "resnet10t.pth"
    torch.save(model.state_dict(), weights)
    provider, out = embed_gallery(f"timm:resnet10t?file={weights}", tmp_path)
    assert out.shape == (3, model.num_features)
    pre = provider.encoder.preprocess
    data = timm.data.resolve_data_config({}, model=model)
    assert pre is not None and pre.crop == data["input_size"][1] and pre.resize == int(pre.crop / data["crop_pct"])
    batch = pre.batch([colour_image(3)])
    model.reset_classifier(0)
    with torch.no_grad():
        expected = model(torch.from_numpy(batch)).numpy()
    assert np.allclose(provider.encoder.encode(batch), expected, atol=1e-4)


def _save_hf(model: object, processor: object, folder: Path) -> Path:
    model.save_pretrained(folder)  # type: ignore[attr-defined]
    processor.save_pretrained(folder)  # type: ignore[attr-defined]
    return folder


def _image_features(model: Any, **inputs: Any) -> np.ndarray:
    """`get_image_features` computed directly (a tensor, or an output whose pooler_output it is in transformers 5)."""
    import torch

    with torch.no_grad():
        features = model.get_image_features(**inputs)
    return (features if hasattr(features, "ndim") else features.pooler_output).numpy()


def test_hf_dinov2_cls_from_local_folder(tmp_path: Path) -> None:
    transformers = pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    config = transformers.Dinov2Config(
        hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64, image_size=28, patch_size=14
    )
    model = transformers.Dinov2Model(config).eval()
    processor = transformers.BitImageProcessor(
        size={"shortest_edge": 32}, crop_size={"height": 28, "width": 28}, image_mean=[0.485, 0.456, 0.406],
        image_std=[0.229, 0.224, 0.225], resample=3,
    )  # fmt: skip
    folder = _save_hf(model, processor, tmp_path / "dinov2-tiny")
    provider, out = embed_gallery(f"hf:{folder}", tmp_path)
    assert out.shape == (3, 32)
    pre = provider.encoder.preprocess
    assert pre is not None and (pre.crop, pre.resize, pre.resize_mode) == (28, 32, "shortest")
    batch = pre.batch([colour_image(5)])
    with torch.no_grad():
        expected = model(pixel_values=torch.from_numpy(batch)).pooler_output.numpy()
    assert np.allclose(provider.encoder.encode(batch), expected, atol=1e-5)


def test_hf_siglip_image_features(tmp_path: Path) -> None:
    transformers = pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    config = transformers.SiglipConfig(text_config=TINY, vision_config={**TINY, "image_size": 32, "patch_size": 16})
    model = transformers.SiglipModel(config).eval()
    processor = transformers.SiglipImageProcessor(size={"height": 32, "width": 32})
    folder = _save_hf(model, processor, tmp_path / "siglip-tiny")
    provider, out = embed_gallery(f"hf:{folder}", tmp_path)
    assert out.shape == (3, 32)
    pre = provider.encoder.preprocess
    assert pre is not None and (pre.crop, pre.resize_mode, pre.mean) == (32, "squash", (0.5, 0.5, 0.5))
    batch = pre.batch([colour_image(9)])
    expected = _image_features(model, pixel_values=torch.from_numpy(batch))
    assert np.allclose(provider.encoder.encode(batch), expected, atol=1e-5)


def test_hf_folder_without_image_processor_uses_config_size(tmp_path: Path) -> None:
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("torch")
    config = transformers.Dinov2Config(
        hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64, image_size=28, patch_size=14
    )
    folder = tmp_path / "no-processor"
    transformers.Dinov2Model(config).save_pretrained(folder)
    provider, out = embed_gallery(f"hf:{folder}", tmp_path)
    assert out.shape == (3, 32)
    assert provider.encoder.preprocess is not None and provider.encoder.preprocess.crop == 28
    assert "no image processor" in provider.describe().details["preprocess_from"]


def test_hf_siglip2_naflex_runs_its_own_processor(tmp_path: Path) -> None:
    transformers = pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    config = transformers.Siglip2Config(text_config=TINY, vision_config={**TINY, "patch_size": 4, "num_patches": 16})
    model = transformers.Siglip2Model(config).eval()
    processor = transformers.Siglip2ImageProcessor(patch_size=4, max_num_patches=16)
    folder = _save_hf(model, processor, tmp_path / "siglip2-naflex-tiny")
    provider, out = embed_gallery(f"hf:{folder}", tmp_path)
    assert out.shape == (3, 32)
    encoder = provider.encoder
    assert encoder.input_kind == "image" and encoder.preprocess is None
    assert "max_num_patches=16" in provider.describe().details["preprocess_from"]
    wide, tall = colour_image(1).resize((40, 12)), colour_image(2).resize((8, 36))
    inputs = processor(images=[wide, tall], return_tensors="pt")
    # patch grids follow each aspect ratio; the wide one uses 14 of 16 patches, so the mask matters
    assert inputs["spatial_shapes"].tolist() == [[2, 7], [8, 2]]
    expected = _image_features(model, **inputs)
    got = encoder.encode([wide, tall])
    assert got.shape == (2, 32) and np.allclose(got, expected, atol=1e-5)
    assert np.allclose(encoder.encode([tall]), expected[1:], atol=1e-5)
    model.save_pretrained(tmp_path / "no-processor")
    with pytest.raises(EmbeddingError, match="variable-resolution patches and needs its image processor"):
        resolve_model(f"hf:{tmp_path / 'no-processor'}")
