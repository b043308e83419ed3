"""The `owl` crop detector on a random-initialised tiny OWLv2 whose heads are set to one known box and category."""

from __future__ import annotations

import io
import json
import math
import string
from datetime import date
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from PIL import Image
from releasekit import encode, photo

from lookbench.datasets.synth.generate import generate_snapshot
from lookbench.errors import EmbeddingError, ReleaseError
from lookbench.release.config import OwlConfig, load_config
from lookbench.release.detect.base import Photo
from lookbench.release.detect.owl import OwlDetector
from lookbench.release.pipeline import run_stages, stages_for
from lookbench.release.stages.crop import CropStats
from lookbench.taxonomy import load_taxonomy

pytestmark = pytest.mark.torch  # run in .venv-torch by scripts/test.sh

transformers = pytest.importorskip("transformers")
torch = pytest.importorskip("torch")

TARGET = "jeans"
BOX = (0.5, 0.25, 0.4, 0.3)  # the box every patch predicts: centre x, centre y, width, height of the padded square
TEMPLATE = "a photo of a {category}"


def _logit(p: float) -> float:
    return math.log(p / (1 - p))


def _tokenizer(folder: Path) -> object:
    """A character-level CLIP BPE tokenizer (no merges) whose end-of-text token has the highest id."""
    chars = string.ascii_lowercase + string.digits + "-!"
    tokens = [*chars, *(c + "</w>" for c in chars), "<|startoftext|>", "<|endoftext|>"]
    (folder / "vocab.json").write_text(json.dumps({t: i for i, t in enumerate(tokens)}))
    (folder / "merges.txt").write_text("#version: 0.2\n")
    return transformers.CLIPTokenizer(
        str(folder / "vocab.json"), str(folder / "merges.txt"), pad_token="!", model_max_length=32
    )


def _save_model(folder: Path, shift: float, kind: str = "owlv2") -> Path:
    """A tiny OWLv2 or OWL-ViT whose every patch predicts BOX, best matching TARGET, scoring ~sigmoid(1 + shift)."""
    folder.mkdir(parents=True)
    tokenizer = _tokenizer(folder)
    vocab = len(tokenizer)
    eot = tokenizer.convert_tokens_to_ids("<|endoftext|>")
    text = {"vocab_size": vocab, "hidden_size": 32, "intermediate_size": 37, "num_hidden_layers": 2,
            "num_attention_heads": 4, "max_position_embeddings": 32, "eos_token_id": eot, "bos_token_id": eot - 1,
            "pad_token_id": tokenizer.pad_token_id}  # fmt: skip
    vision = {"hidden_size": 32, "intermediate_size": 37, "num_hidden_layers": 2, "num_attention_heads": 4,
              "image_size": 64, "patch_size": 16}  # fmt: skip
    torch.manual_seed(0)
    if kind == "owlv2":
        config = transformers.Owlv2Config(text_config=text, vision_config=vision, projection_dim=32)
        model = transformers.Owlv2ForObjectDetection(config).eval()
        images = transformers.Owlv2ImageProcessor(size={"height": 64, "width": 64})
        processor = transformers.Owlv2Processor(images, tokenizer)
    else:
        config = transformers.OwlViTConfig(text_config=text, vision_config=vision, projection_dim=32)
        model = transformers.OwlViTForObjectDetection(config).eval()
        square = {"height": 64, "width": 64}
        images = transformers.OwlViTImageProcessor(size=square, crop_size=square, do_center_crop=False)
        processor = transformers.OwlViTProcessor(images, tokenizer)
    categories = list(load_taxonomy().categories)
    inputs = processor(
        text=[TEMPLATE.replace("{category}", c) for c in categories],
        images=Image.new("RGB", (64, 64)),
        padding="max_length",
        truncation=True,
        return_tensors="pt",
    )
    with torch.no_grad():
        target = model(**inputs).text_embeds[0, categories.index(TARGET)]
        head = model.class_head
        head.dense0.weight.zero_()
        head.dense0.bias.copy_(target)  # every patch's class embedding is the TARGET query's
        head.logit_shift.weight.zero_()
        head.logit_shift.bias.fill_(shift)
        head.logit_scale.weight.zero_()
        head.logit_scale.bias.zero_()  # scale elu(0) + 1 = 1
        model.box_head.dense2.weight.zero_()
        model.box_head.dense2.bias.copy_(torch.tensor([_logit(v) for v in BOX]))
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def owl_model(tmp_path_factory) -> Path:
    """A saved tiny OWLv2 scoring TARGET at sigmoid(4) ~ 0.982."""
    return _save_model(tmp_path_factory.mktemp("owl") / "tiny-owlv2", shift=3.0)


@pytest.fixture(scope="module")
def owlvit_model(tmp_path_factory) -> Path:
    """The same, as an OWL-ViT v1."""
    return _save_model(tmp_path_factory.mktemp("owlvit") / "tiny-owlvit", shift=3.0, kind="owlvit")


def _detector(model: Path, **settings: object) -> OwlDetector:
    """The detector with the model's grid box bias zeroed, so every patch predicts exactly BOX."""
    detector = OwlDetector(
        OwlConfig.model_validate({"model": str(model), "device": "cpu", **settings}), load_taxonomy()
    )
    detector.model.box_bias.zero_()
    return detector


def _photo(width: int, height: int) -> Photo:
    data = encode(photo(3).resize((width, height)))
    return Photo("0" * 64, data, width, height)


def _square_box(side: float) -> tuple[float, ...]:
    cx, cy, w, h = BOX
    return ((cx - w / 2) * side, (cy - h / 2) * side, (cx + w / 2) * side, (cy + h / 2) * side)


@pytest.mark.parametrize("size", [(150, 90), (90, 150), (64, 64)])
def test_boxes_come_back_in_photo_pixels_of_the_padded_square(owl_model, size):
    detector = _detector(owl_model, threshold=0.5)
    boxes = detector.detect(_photo(*size))
    # 16 patches predict the same box: NMS keeps one; OWLv2 pads to the longer side, so both axes scale by it
    assert len(boxes) == 1
    assert boxes[0].category == TARGET
    assert boxes[0].bbox == pytest.approx(_square_box(max(size)), abs=1e-3)
    assert boxes[0].score == pytest.approx(1 / (1 + math.exp(-4.0)), abs=1e-4)
    described = detector.describe()
    assert described["backend"] == "owl" and described["model_type"] == "owlv2" and described["queries"] == 27
    assert len(described["revision"]) == 16  # a local folder's fingerprint


def test_owlvit_boxes_scale_by_width_and_height(owlvit_model):
    detector = _detector(owlvit_model, threshold=0.5)
    (box,) = detector.detect(_photo(150, 90))
    # OWL-ViT stretches the photo to its square input: x scales by the width, y by the height
    cx, cy, w, h = BOX
    assert box.category == TARGET and detector.describe()["model_type"] == "owlvit"
    assert box.bbox == pytest.approx(((cx - w / 2) * 150, (cy - h / 2) * 90, (cx + w / 2) * 150, (cy + h / 2) * 90))


def test_threshold_nms_top_k_and_categories(owl_model):
    assert _detector(owl_model, threshold=0.99).detect(_photo(150, 90)) == []
    assert len(_detector(owl_model, threshold=0.5, nms_iou=1.0, max_boxes=5).detect(_photo(150, 90))) == 5
    assert len(_detector(owl_model, threshold=0.5, nms_iou=1.0, max_boxes=100).detect(_photo(150, 90))) == 16
    # without the TARGET query, each box takes the best of the queried categories
    others = _detector(owl_model, threshold=0.0, categories=["skirt", "dress"]).detect(_photo(150, 90))
    assert others and {b.category for b in others} <= {"skirt", "dress"}
    only = _detector(owl_model, threshold=0.5, categories=["skirt", TARGET]).detect(_photo(150, 90))
    assert [b.category for b in only] == [TARGET]
    with pytest.raises(ReleaseError, match="unknown categories"):
        _detector(owl_model, categories=["cape"])


def test_unreachable_hub_id_fails_fast(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(EmbeddingError, match="not in the local Hugging Face cache"):
        OwlDetector(OwlConfig(model="google/owlv2-base-patch16-ensemble"), load_taxonomy())


@pytest.mark.slow
def test_crop_stage_runs_the_owl_detector_from_the_release_config(tmp_path, owl_model):
    # seed 2's street scenes hold a TARGET garment among others (the premise, checked below by the crops' categories)
    synth = generate_snapshot(tmp_path / "synth", date(2026, 5, 1), "mini", seed=2)
    crop = {"detector": "owl", "owl": {"model": str(owl_model), "threshold": 0.5, "device": "cpu"}}
    data = {"release_date": "2026-06-01", "output": "out", "sources": [{"kind": "synth", "name": "synth",
            "path": str(synth)}], "crop": crop}  # fmt: skip
    (tmp_path / "release.yaml").write_text(yaml.safe_dump(data))
    config = load_config(tmp_path / "release.yaml")
    stages = stages_for(config)
    assert [s.name for s in stages[:3]] == ["collect", "dedup", "crop"]
    ctx = run_stages(config, stages[:3])
    stats = ctx.stats(CropStats)
    assert stats is not None
    assert stats.detector["backend"] == "owl" and stats.detector["model"] == str(owl_model)
    rows = [r for r in pq.read_table(config.work / "crop" / "samples.parquet").to_pylist() if r["raw_image"]]
    # every patch says TARGET: only TARGET rows keep a crop, each cut at a grid box inside its photo
    assert rows and {r["category"] for r in rows} == {TARGET}
    assert stats.crops == len(rows) and stats.rows_without_box > 0
    for row in rows:
        with Image.open(io.BytesIO(row["raw_image"])) as im:
            width, height = im.size
        x0, y0, x1, y1 = row["bbox"]
        assert 0 <= x0 < x1 <= width and 0 <= y0 < y1 <= height
        with Image.open(io.BytesIO(row["image"])) as cut:
            assert abs(cut.width - (x1 - x0)) <= 2 and abs(cut.height - (y1 - y0)) <= 2
