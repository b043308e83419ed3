"""`gr:` adapter: a tiny GR-style model (DINOv3 ViT with `.search`) as remote code, as a pickle, from a hub cache."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from conftest import png_bytes
from embedding_helpers import embed_gallery
from lookbench._util.hashing import file_sha256
from lookbench.errors import EmbeddingError
from lookbench.models.options import folder_fingerprint

pytestmark = pytest.mark.torch  # run in .venv-torch by scripts/test.sh

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

BACKBONE = {"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 64}
BACKBONE |= {"patch_size": 8, "image_size": 32}
DIM = 16


@pytest.fixture
def tiny_gr() -> Any:
    """A random-initialised TinyGRModel with GR-Lite's `is_crop` switch on, as saved."""
    from tiny_gr.configuration_tiny_gr import TinyGRConfig
    from tiny_gr.modeling_tiny_gr import TinyGRModel

    torch.manual_seed(0)
    return TinyGRModel(TinyGRConfig(backbone=BACKBONE, is_crop=True)).eval()


def _direct(model: Any, gallery: int = 3) -> np.ndarray:
    """`search` on the snapshot's gallery images, called directly with is_crop off (as the authors evaluate)."""
    images = [Image.open(io.BytesIO(png_bytes(100 + i))).convert("RGB") for i in range(gallery)]
    model.config.is_crop = False
    with torch.no_grad():
        return model.search(image_paths=images, feature_dim=DIM)[1].numpy()


def test_remote_code_folder_end_to_end(tmp_path: Path, tiny_gr: Any) -> None:
    type(tiny_gr.config).register_for_auto_class()
    type(tiny_gr).register_for_auto_class("AutoModel")
    folder = tmp_path / "tiny-gr"
    tiny_gr.save_pretrained(folder)
    assert {"configuration_tiny_gr.py", "modeling_tiny_gr.py"} <= {p.name for p in folder.iterdir()}
    assert json.loads((folder / "config.json").read_text())["auto_map"]["AutoModel"] == "modeling_tiny_gr.TinyGRModel"
    provider, out = embed_gallery(f"gr:{folder}?trust_remote_code=1&feature_dim={DIM}", tmp_path)
    facts = provider.describe()
    assert (facts.details["loaded_as"], facts.details["is_crop_turned_off"], facts.input_kind) == (
        "remote code",
        True,
        "image",
    )
    assert provider.encoder.revision == folder_fingerprint(folder)
    assert out.shape == (3, DIM) and out.dtype == np.float32
    assert np.allclose(out, _direct(tiny_gr), atol=1e-5)


def test_pickled_module_from_file_and_hub_cache(tmp_path: Path, tiny_gr: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    weights = tmp_path / "tiny_gr.pt"
    torch.save(tiny_gr, weights)  # the whole module; its class is importable as tiny_gr.modeling_tiny_gr
    provider, out = embed_gallery(f"gr:{weights}?trust_remote_code=1&feature_dim={DIM}", tmp_path)
    assert (
        provider.describe().details["loaded_as"] == "pickle" and provider.encoder.revision == file_sha256(weights)[:16]
    )
    assert np.allclose(out, _direct(tiny_gr), atol=1e-5)
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hub" / "models--org--tiny-gr"
    (repo / "snapshots" / commit).mkdir(parents=True)
    shutil.copy(weights, repo / "snapshots" / commit / "gr_lite.pt")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    provider, out = embed_gallery(f"gr:org/tiny-gr?trust_remote_code=1&feature_dim={DIM}", tmp_path / "from-hub")
    assert provider.encoder.revision == commit and np.allclose(out, _direct(tiny_gr), atol=1e-5)


def test_wrong_shapes_and_state_dicts_are_explained(tmp_path: Path, tiny_gr: Any) -> None:
    weights = tmp_path / "tiny_gr.pt"
    torch.save(tiny_gr, weights)
    with pytest.raises(EmbeddingError, match=r"embeddings of shape \(2, 32\) for 2 images, expected \(2, 64\)"):
        embed_gallery(f"gr:{weights}?trust_remote_code=1&feature_dim=64", tmp_path)
    state = tmp_path / "state.pt"
    torch.save(tiny_gr.state_dict(), state)
    with pytest.raises(EmbeddingError, match="holds a mapping of .* entries .*not a model with .search"):
        embed_gallery(f"gr:{state}?trust_remote_code=1", tmp_path / "state")


def test_hf_adapter_runs_remote_code_forward(tmp_path: Path, tiny_gr: Any) -> None:
    type(tiny_gr.config).register_for_auto_class()
    type(tiny_gr).register_for_auto_class("AutoModel")
    folder = tmp_path / "tiny-remote"
    tiny_gr.save_pretrained(folder)
    with pytest.raises(Exception, match="trust_remote_code"):
        embed_gallery(f"hf:{folder}", tmp_path / "untrusted")
    provider, out = embed_gallery(f"hf:{folder}?trust_remote_code=1", tmp_path)
    pre = provider.encoder.preprocess
    # No image processor and no top-level image_size in this config: ImageNet defaults at 224 px.
    assert pre is not None and pre.crop == 224
    assert provider.describe().details["preprocess_from"].startswith("no image processor")
    batch = pre.batch([Image.open(io.BytesIO(png_bytes(100))).convert("RGB")])
    with torch.no_grad():
        expected = tiny_gr.model(pixel_values=torch.from_numpy(batch)).pooler_output.numpy()
    assert out.shape == (3, BACKBONE["hidden_size"])
    assert np.allclose(out[0], expected[0], atol=1e-5)


def test_hf_dinov3_pooler_output(tmp_path: Path) -> None:
    import transformers

    torch.manual_seed(0)
    model = transformers.DINOv3ViTModel(transformers.DINOv3ViTConfig(**BACKBONE)).eval()
    model.save_pretrained(tmp_path / "dinov3-tiny")
    provider, out = embed_gallery(f"hf:{tmp_path / 'dinov3-tiny'}", tmp_path)
    pre = provider.encoder.preprocess
    assert pre is not None
    batch = pre.batch([Image.open(io.BytesIO(png_bytes(101))).convert("RGB")])
    with torch.no_grad():
        expected = model(pixel_values=torch.from_numpy(batch)).pooler_output.numpy()
    assert out.shape == (3, BACKBONE["hidden_size"])
    assert np.allclose(out[1], expected[0], atol=1e-5)
