"""Backbones: the PyPI EfficientNet-Lite0 matches the default model; every kind trains, exports and evaluates."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from trainkit import HERE, eval_snapshot, tiny_config, training_snapshot
from typer.testing import CliRunner

from embedding_helpers import tiny_open_clip

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")

from lookbench.cli.main import app  # noqa: E402
from lookbench.results.io import load_result  # noqa: E402
from lookbench.train.config import parse_config  # noqa: E402
from lookbench.train.optim import layer_ids, lr_factor  # noqa: E402


def test_efficientnet_lite0_backbone_reproduces_the_default_model(tmp_path: Path) -> None:
    pytest.importorskip("efficientnet_lite_pytorch")
    pytest.importorskip("onnxruntime")
    from PIL import Image

    from lookbench.models.backbones import EfficientNetLite0
    from lookbench.models.offline import efficientnet_lite0

    backbone = EfficientNetLite0().eval()
    encoder = efficientnet_lite0(tmp_path)
    rng = np.random.default_rng(0)
    images = [Image.fromarray(rng.integers(0, 256, (300, 260, 3), dtype=np.uint8)) for _ in range(2)]
    batch = backbone.preprocess.batch(images)
    assert backbone.preprocess == encoder.preprocess
    with torch.no_grad():
        got = backbone(torch.from_numpy(batch)).numpy()
    assert np.abs(got - encoder.encode(batch)).max() < 1e-3
    names = [n for n, _ in backbone.named_parameters()]
    ids, count = layer_ids(names)
    assert count == 18 and ids[names.index("net._conv_stem.weight")] == 0
    assert ids[names.index("net._blocks.0._depthwise_conv.weight")] == 1
    assert ids[names.index("net._blocks.15._bn2.bias")] == 16 and ids[names.index("net._bn1.weight")] == 17


def test_layer_ids_and_schedule() -> None:
    names = [
        "cls_token",
        "patch_embed.proj.weight",
        "blocks.0.attn.w",
        "blocks.0.mlp.w",
        "blocks.1.attn.w",
        "norm.weight",
        "head.weight",
    ]
    assert layer_ids(names) == ([0, 0, 1, 1, 2, 3, 3], 4)
    from lookbench.train.config import Schedule

    cosine = Schedule(steps=11, warmup_steps=2, min_lr_ratio=0.1)
    factors = [lr_factor(s, 11, cosine) for s in range(11)]
    assert factors[:3] == [0.5, 1.0, 1.0] and factors[-1] == pytest.approx(0.1)
    assert all(a >= b for a, b in zip(factors[1:], factors[2:], strict=False))
    assert lr_factor(7, 11, Schedule(steps=11, kind="constant")) == 1.0


def write_tiny_hf(folder: Path) -> Path:
    transformers = pytest.importorskip("transformers")
    config = transformers.ViTConfig(
        image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64
    )
    transformers.ViTModel(config).save_pretrained(folder)
    return folder


def backbone_spec(kind: str, tmp_path: Path) -> str:
    if kind == "timm":
        pytest.importorskip("timm")
        pytest.importorskip("torchvision")
        return "timm:resnet10t?pretrained=0"
    if kind == "hf":
        return f"hf:{write_tiny_hf(tmp_path / 'tiny-vit')}"
    if kind == "open_clip":
        pytest.importorskip("open_clip")
        (tmp_path / "clip").mkdir()
        return tiny_open_clip(tmp_path / "clip", "lookbench-tiny-clip")[0]
    return "python:tinynet:make"


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["python", "timm", "hf", "open_clip"])
def test_every_backbone_kind_trains_exports_and_evaluates(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lookbench.train.loop import Trainer

    monkeypatch.setenv("LOOKBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.syspath_prepend(str(HERE))
    spec = backbone_spec(kind, tmp_path)
    train, evaluation = training_snapshot(tmp_path / "t", items=6, views=2), eval_snapshot(tmp_path / "e")
    config = tiny_config(
        train,
        evaluation,
        data={"train": {"snapshot": str(train)}, "validation": None, "guard": {"enabled": False}, "workers": 0},
        model={"backbone": spec, "embedding_dim": 8, "image_size": 32, "grad_checkpointing": kind != "python"},
        schedule={"steps": 2},
        export={"onnx": kind in ("timm", "hf")},
    )
    out = tmp_path / "run"
    Trainer(parse_config(config, "test"), out, progress=False, say=lambda _m: None).run()
    info = json.loads((out / "model.json").read_text())
    assert info["architecture"]["kind"] == kind
    target = tmp_path / "result.json"
    result = CliRunner().invoke(app, ["eval", "-s", str(evaluation), "-m", f"trained:{out}", "-o", str(target)])
    assert result.exit_code == 0, result.output
    assert load_result(target).model.meta.name == "run"
    if kind in ("timm", "hf"):
        onnx = CliRunner().invoke(
            app, ["eval", "-s", str(evaluation), "-m", f"trained:{out}?runtime=onnx", "-o", str(tmp_path / "o.json")]
        )
        assert onnx.exit_code == 0, onnx.output
        a = load_result(target).metrics["overall"]["fine_recall@1"].value
        assert load_result(tmp_path / "o.json").metrics["overall"]["fine_recall@1"].value == pytest.approx(a)


def test_a_clip_backbone_trains_only_its_image_path(tmp_path: Path) -> None:
    transformers = pytest.importorskip("transformers")
    from lookbench.models.backbones import HfBackbone
    from lookbench.models.hf_model import create_hf
    from lookbench.models.spec import ModelSpec

    config = transformers.CLIPConfig(
        text_config={
            "hidden_size": 16,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "intermediate_size": 32,
            "vocab_size": 64,
            "max_position_embeddings": 8,
        },
        vision_config={
            "image_size": 32,
            "patch_size": 8,
            "hidden_size": 16,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "intermediate_size": 32,
        },
        projection_dim=8,
    )
    transformers.CLIPModel(config).save_pretrained(tmp_path / "clip")
    hf = create_hf(ModelSpec("hf", str(tmp_path / "clip")))
    assert hf.preprocess is not None
    backbone = HfBackbone(hf.model, hf.preprocess, "hf:clip")
    trainable = {n for n, p in backbone.named_parameters() if p.requires_grad}
    assert backbone.feature_dim == 8
    assert trainable and all("text" not in n and "logit" not in n for n in trainable)
    assert any(n.startswith("model.vision_model.") for n in trainable) and "model.visual_projection.weight" in trainable
